"""``MessageBodyBucket``: where NServiceBus's SQS transport keeps bodies too large for SQS.

The transport moves a body over 1 MiB (256 KiB for a publish) to S3 under
``{KeyPrefix}/{MessageId}`` in the bucket its endpoint configures (``S3Settings``), and reads a
received message's key from the same bucket. One bucket per account serves its endpoints; the
account bridge's outbound relays of other accounts copy the bodies of the messages they forward
into it (:mod:`cross_account_runtime.relay.bodies`), admitted here each by its role's exact ARN
(one statement for them all, in the bucket's policy and in its key's), and each only under its
own account's prefix, ``relay/<account id>/``: no sender can overwrite the account's own bodies
or another sender's. Every object is encrypted with the bucket's key: a write that names
another key, or another kind of encryption, is refused; versions are kept (an overwrite leaves
the body it replaced, for the bodies' days), so that nothing written is lost to a later write.

Secure as AWS Solutions Constructs make buckets: a customer-managed key with rotation (S3
Bucket Keys on), TLS-only, public access blocked, object ownership enforced (a relay's copy
belongs to this account), server access logs in a bucket of their own. Bodies expire as the
transport's own rule would expire them: the rule carries the transport's id
(``NServiceBus.SQS.DeleteMessageBodies``), so an endpoint run with installers finds it and
leaves the bucket's lifecycle alone.
"""

from __future__ import annotations

from aws_cdk import Duration, RemovalPolicy, Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from constructs import Construct

from constructs_lib._private.access_logs import admit_log_delivery_by_policy, logged_kms_bucket
from constructs_lib._private.acknowledgments import acknowledge
from constructs_lib._private.attributes import Attribute
from constructs_lib._private.grants import (
    BUCKET_ENCRYPTION_CONTEXT,
    Grantees,
    PolicyGrants,
    grant_with_key,
)
from constructs_lib._private.keywords import checked, checked_keywords
from constructs_lib.defaults import (
    BODY_EXPIRATION,
    BODY_EXPIRATION_RANGE_DAYS,
    BODY_INCOMPLETE_UPLOAD_LIMIT,
)
from constructs_lib.validation import require_organization_ids, require_range, require_role_arn
from cross_account_runtime.relay.bodies import RELAY_KEY_PREFIX

TRANSPORT_LIFECYCLE_RULE_ID = "NServiceBus.SQS.DeleteMessageBodies"
"""The id of the transport's own lifecycle rule, which its installer looks for."""
BODY_KEY_ALIAS = "alias/messaging/bodies"
"""Every body bucket's key carries this alias, so a relay in another account is granted the
keys of its destinations' body buckets by alias (their ids are unknown there)."""
WRITER_KEY_ACTIONS = ("kms:GenerateDataKey", "kms:Encrypt")
"""What a relay copying a body in needs of the bucket's key (through S3)."""


@checked
class MessageBodyBucket(Construct):
    """One account's body bucket (``bucket``), its key (``key``) and its access-log bucket.

    Example:

    ```python
    from aws_cdk import App, Stack

    from constructs_lib import MessageBodyBucket

    app = App()
    stack = Stack(app, "Sales")
    MessageBodyBucket(stack, "Bodies")
    app.synth()
    ```
    """

    organization_id = Attribute[str | None](
        "The organization every admitted writer must belong to, if any."
    )
    key = Attribute[kms.Key](
        "The key the bodies are encrypted with (alias ``alias/messaging/bodies``)."
    )
    access_log_bucket = Attribute[s3.Bucket]("The bucket of the body bucket's server access logs.")
    bucket = Attribute[s3.Bucket]("The bucket the transport puts message bodies in.")

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        bucket_name: str | None = None,
        expiration: Duration = BODY_EXPIRATION,
        organization_id: str | None = None,
        removal_policy: RemovalPolicy = RemovalPolicy.RETAIN,
    ) -> None:
        """Create the key, the access-log bucket and the bucket.

        :param bucket_name: what the endpoints configure (``S3Settings``) and other accounts'
            relays copy into. Default: one CloudFormation generates.
        :param expiration: how long a body is kept (whole days, 1-14: no message outlives
            SQS's 14 days). Default: :data:`~constructs_lib.defaults.BODY_EXPIRATION`
            (4 days, the transport's default maximum time to live).
        :param organization_id: the organization of every role admitted to write
            (:meth:`admit_writer_roles`): the grants then also require it
            (``aws:PrincipalOrgID``). Default: none (the grants name the roles only).
        :param removal_policy: of the buckets and the key; bodies of messages still queued
            would be lost with them. Default: ``RemovalPolicy.RETAIN``.
        """
        super().__init__(scope, construct_id)
        admit_log_delivery_by_policy(self)
        days = expiration.to_days(integral=False)
        if days != int(days):
            raise ValueError(f"expiration: S3 expires objects after whole days, got {days}")
        require_range("expiration (days)", int(days), *BODY_EXPIRATION_RANGE_DAYS)
        if organization_id is not None:
            require_organization_ids("organization_id", [organization_id])
        self.organization_id = organization_id
        self.key = kms.Key(
            self,
            "Key",
            description="Message bodies of NServiceBus endpoints too large for SQS",
            enable_key_rotation=True,
            alias=BODY_KEY_ALIAS,
            removal_policy=removal_policy,
        )
        self.access_log_bucket, self.bucket = logged_kms_bucket(
            self,
            bucket_name=bucket_name,
            key=self.key,
            log_prefix="message-body-bucket/",
            lifecycle_rules=[
                s3.LifecycleRule(
                    id=TRANSPORT_LIFECYCLE_RULE_ID,
                    expiration=expiration,
                    noncurrent_version_expiration=expiration,
                    abort_incomplete_multipart_upload_after=BODY_INCOMPLETE_UPLOAD_LIMIT,
                )
            ],
            removal_policy=removal_policy,
            versioned=True,
        )
        self._named_arn = (
            None
            if bucket_name is None
            else Stack.of(self).format_arn(
                service="s3", region="", account="", resource=bucket_name
            )
        )
        """The bucket's ARN from its name, for the key's policy (which the bucket's own ARN
        attribute would tie into a cycle with the bucket, which names the key); ``None`` for a
        name CloudFormation generates, whose writers' key grant then names no bucket."""
        self._writers: list[str] = []
        self._policy = PolicyGrants(
            self,
            "BucketGrants",
            add_to_resource_policy=self.bucket.add_to_resource_policy,
            # Each sending relay writes under its own account's prefix alone.
            resources=[
                self.bucket.arn_for_objects(f"{RELAY_KEY_PREFIX}/${{aws:PrincipalAccount}}/*")
            ],
        )
        self._refuse_other_encryption()

    @property
    def bucket_name(self) -> str:
        """The bucket's name, what the endpoints configure."""
        return self.bucket.bucket_name

    @property
    def writer_roles(self) -> tuple[str, ...]:
        """Role ARNs admitted to write so far."""
        return tuple(self._writers)

    def admit_writer_roles(self, *role_arns: str) -> None:
        """Let these roles of other accounts (the outbound relays forwarding to this account)
        put bodies into the bucket with its key (through S3), and no other principal of their
        accounts: ``aws:PrincipalArn`` (``ArnEquals``), so a role need not exist yet. Each is
        one role's exact ARN (:func:`~constructs_lib.relay_role_arn`), never a pattern."""
        for role_arn in role_arns:
            require_role_arn("role_arns", role_arn)
        new = [r for r in dict.fromkeys(role_arns) if r not in self._writers]
        if not new:
            return
        self._writers.extend(new)
        grant_with_key(
            self._policy,
            self.key,
            sid="AllowBodyCopy",
            key_sid="AllowBodyCopy",
            grantees=Grantees.roles(new, self.organization_id),
            actions=["s3:PutObject"],
            key_actions=WRITER_KEY_ACTIONS,
            via_service="s3",
            context=None
            if self._named_arn is None
            else (BUCKET_ENCRYPTION_CONTEXT, self._named_arn),
        )

    def _refuse_other_encryption(self) -> None:
        """Refuse a write that names another key than the bucket's, or another encryption:
        a body the receiving endpoints could not read (a sender's own key), or one outside the
        key's audit. A write that names none gets the bucket's, by default."""
        for sid, condition_key, value in (
            ("DenyOtherKeys", "s3:x-amz-server-side-encryption-aws-kms-key-id", self.key.key_arn),
            ("DenyOtherEncryption", "s3:x-amz-server-side-encryption", "aws:kms"),
        ):
            self.bucket.add_to_resource_policy(
                iam.PolicyStatement(
                    sid=sid,
                    effect=iam.Effect.DENY,
                    principals=[iam.AnyPrincipal()],
                    actions=["s3:PutObject"],
                    resources=[self.bucket.arn_for_objects("*")],
                    # Only where the write names one: a negated operator (with IfExists or
                    # without) is true for a key the request lacks.
                    conditions={
                        "StringNotEquals": {condition_key: value},
                        "Null": {condition_key: "false"},
                    },
                )
            )

    @checked_keywords
    def grant_read_bodies(self, grantee: iam.IGrantable) -> None:
        """Read bodies (``s3:GetObject``, and their key's ``kms:Decrypt`` through S3 for this
        bucket's objects): what this account's outbound relay needs to copy them out, and what
        an endpoint's role needs to receive; nothing of the bucket itself."""
        grantee.grant_principal.add_to_principal_policy(
            iam.PolicyStatement(
                actions=["s3:GetObject"], resources=[self.bucket.arn_for_objects("*")]
            )
        )
        grantee.grant_principal.add_to_principal_policy(
            iam.PolicyStatement(
                actions=["kms:Decrypt"],
                resources=[self.key.key_arn],
                conditions={
                    "StringEquals": {
                        "kms:ViaService": f"s3.{Stack.of(self).region}.{Stack.of(self).url_suffix}",
                        BUCKET_ENCRYPTION_CONTEXT: self.bucket.bucket_arn,
                    }
                },
            )
        )
        self._acknowledge_object_grants(grantee, ())

    @checked_keywords
    def grant_read_write_bodies(self, grantee: iam.IGrantable) -> None:
        """Write and read bodies: what an endpoint's role needs to send and receive large
        messages."""
        self.bucket.grant_read_write(grantee, "*")
        self._acknowledge_object_grants(
            grantee,
            ("s3:GetObject*", "s3:GetBucket*", "s3:List*", "s3:DeleteObject*", "s3:Abort*"),
        )

    def _acknowledge_object_grants(self, grantee: iam.IGrantable, actions: tuple[str, ...]) -> None:
        if not isinstance(grantee, Construct):
            return
        logical_id = Stack.of(self).get_logical_id(self.bucket.node.default_child)  # type: ignore[arg-type]
        acknowledge(
            grantee,
            f"AwsSolutions-IAM5[Resource::<{logical_id}.Arn>/*]",
            "Bodies are named {KeyPrefix}/{MessageId} by the sending endpoint's transport, "
            "unknown in advance; the grant is confined to this one bucket.",
        )
        for action in (*actions, "kms:GenerateDataKey*", "kms:ReEncrypt*"):
            acknowledge(
                grantee,
                f"AwsSolutions-IAM5[Action::{action}]",
                "S3's grant helper actions on this body bucket and its key only.",
            )
