"""What a relay's role may do, and nothing more: receive from its own queues (granted by their
constructs), send to the declared destinations, to its sources' own dead-letter queues and back
to its delay queues' shadows, use a key only for those queues' encryption, and read and put
message bodies only in the routes' body buckets; and the managed policies its policy overflows
into, described by a path that does not change when the relay moves."""

from __future__ import annotations

from collections.abc import Sequence

import jsii
from aws_cdk import AspectPriority, Aspects, IAspect, Stack, Token
from aws_cdk import aws_iam as iam
from constructs import IConstruct

from constructs_lib._private.acknowledgments import acknowledge
from constructs_lib._private.cdk_types import computed_queue_arn
from constructs_lib._private.grants import BUCKET_ENCRYPTION_CONTEXT, QUEUE_ENCRYPTION_CONTEXT
from constructs_lib.cross_account_relay.relay_route import RelayRoute
from constructs_lib.message_body_bucket import BODY_KEY_ALIAS, WRITER_KEY_ACTIONS
from cross_account_runtime.nservicebus.queue_arn import parse_queue_arn
from cross_account_runtime.relay.bodies import relay_prefix

SEND_KEY_ACTIONS = ("kms:GenerateDataKey", "kms:Decrypt")
"""What the relay needs on a destination's key (and its own queues' keys) to send."""
RESOURCES_PER_STATEMENT = 40
"""Queues per statement of the relay role's send grants: at the longest queue ARN (some 130
characters with an 80-character name and a GovCloud partition and region) 40 make about 5,300
characters, within the 6,144 of a managed policy the role's policy overflows into
(:func:`_grant_in_parts`)."""


def describe_overflow_policies(role: iam.Role) -> None:
    """Describe the managed policies ``role``'s policy overflows into by a path that does not
    change when the relay moves (:class:`_OverflowPolicyDescriptions`)."""
    Aspects.of(role).add(_OverflowPolicyDescriptions(), priority=AspectPriority.DEFAULT)


def _grant_in_parts(role: iam.Role, sid: str, actions: list[str], resources: list[str]) -> None:
    """Grant ``actions`` on ``resources`` in statements of at most
    :data:`RESOURCES_PER_STATEMENT` resources each, named ``<sid><n>``.

    aws-cdk-lib merges statements that differ only in their resources into one
    (``@aws-cdk/aws-iam:minimizePolicies``), and then cannot split that statement when the
    role's policy overflows into managed policies: a relay with a hundred queues in its
    stack got one statement over IAM's 6,144 characters for a managed policy. It never
    merges statements that carry a Sid, so parts of bounded size stay apart and are spread
    over the overflow policies."""
    for start in range(0, len(resources), RESOURCES_PER_STATEMENT):
        role.add_to_policy(
            iam.PolicyStatement(
                sid=f"{sid}{start // RESOURCES_PER_STATEMENT + 1}",
                actions=actions,
                resources=resources[start : start + RESOURCES_PER_STATEMENT],
            )
        )


def grant_routes(role: iam.Role, stack: Stack, routes: Sequence[RelayRoute]) -> None:
    """Let the relay's ``role`` send to the destinations, to the sources' own DLQs (refused messages go there with
    their reason) and back to delay queues' shadows (messages not due yet); use keys only
    through SQS and only for queues' encryption (``kms:EncryptionContext:aws:sqs:arn``):
    whichever key encrypts them, a queue's own or its account's shared one, before and
    after a change of key granularity (messages already queued keep the key they were sent
    with).

    A destination's key is granted for the destinations' encryption alone; the relay's own
    account's keys for the encryption of the relay's own queues alone, the sources and
    their DLQs, listed in statements of :data:`RESOURCES_PER_STATEMENT` queues each (which
    fit the managed policies a large relay's policy overflows into), used only through
    SQS."""
    destinations = sorted({r.destination_arn for r in routes})
    _grant_in_parts(role, "SendToDestinations", ["sqs:SendMessage"], destinations)
    _grant_in_parts(
        role,
        "SendToOwnQueues",
        ["sqs:SendMessage"],
        [r.source_queue.dead_letter_queue.queue_arn for r in routes]
        + [r.source_queue.queue_arn for r in routes if r.delayed],
    )
    if any(r.source_queue.encryption_key is not None for r in routes):
        own = f"{stack.region}:{stack.account}"
        # Computed from their names where synth knows them: aws-cdk-lib sizes a policy by
        # its text, where a reference counts far shorter than the ARN it becomes.
        queues = list(
            dict.fromkeys(
                computed_queue_arn(queue) or queue.queue_arn
                for r in routes
                for queue in (r.source_queue.queue, r.source_queue.dead_letter_queue)
            )
        )
        for start in range(0, len(queues), RESOURCES_PER_STATEMENT):
            role.add_to_policy(
                iam.PolicyStatement(
                    sid=f"UseOwnQueueKeys{start // RESOURCES_PER_STATEMENT + 1}",
                    actions=list(SEND_KEY_ACTIONS),
                    resources=[f"arn:{stack.partition}:kms:{own}:key/*"],
                    conditions={
                        "StringEquals": {
                            "kms:ViaService": f"sqs.{stack.region}.{stack.url_suffix}",
                            QUEUE_ENCRYPTION_CONTEXT: queues[
                                start : start + RESOURCES_PER_STATEMENT
                            ],
                        },
                    },
                )
            )
        own_region, own_account = (
            f"<AWS::{name}>" if Token.is_unresolved(value) else value
            for name, value in (("Region", stack.region), ("AccountId", stack.account))
        )
        acknowledge(
            role,
            f"AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:kms:{own_region}:{own_account}:key/*]",
            "The relay's own queues may share the account's key or have one each, and keep "
            "the key they were sent with; the grant is narrowed to those queues' "
            "encryption (kms:EncryptionContext:aws:sqs:arn, each listed) through SQS.",
        )
    encrypted = sorted({r.destination_arn for r in routes if r.destination_encrypted})
    if not encrypted:
        return
    accounts = sorted({parse_queue_arn(a).account for a in encrypted})
    regions = sorted({parse_queue_arn(a).region for a in encrypted})
    role.add_to_policy(
        iam.PolicyStatement(
            actions=list(SEND_KEY_ACTIONS),
            resources=[
                f"arn:{stack.partition}:kms:{region}:{account}:key/*"
                for account in accounts
                for region in regions
            ],
            conditions={
                "StringEquals": {QUEUE_ENCRYPTION_CONTEXT: encrypted},
                "StringLike": {"kms:ViaService": "sqs.*.amazonaws.com*"},
            },
        )
    )
    for account in accounts:
        for region in regions:
            acknowledge(
                role,
                f"AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:kms:{region}:{account}:key/*]",
                "Destination keys are created in other accounts with ids unknown here; the "
                "grant is narrowed to the destination queues' encryption "
                "(kms:EncryptionContext:aws:sqs:arn), used through SQS.",
            )


def grant_read_bodies_by_name(role: iam.Role, stack: Stack, bucket: str) -> None:
    """Let the relay's ``role`` read bodies from this account's bucket held by another of its stacks, as
    :meth:`MessageBodyBucket.grant_read_bodies` would, without a reference to it: the
    bucket by name, its key (id unknown here) only through S3 and only by the body key's
    alias, for that bucket's objects (``kms:EncryptionContext:aws:s3:arn``)."""
    bucket_arn = f"arn:{stack.partition}:s3:::{bucket}"
    role.add_to_policy(iam.PolicyStatement(actions=["s3:GetObject"], resources=[f"{bucket_arn}/*"]))
    role.add_to_policy(
        iam.PolicyStatement(
            actions=["kms:Decrypt"],
            resources=[f"arn:{stack.partition}:kms:{stack.region}:{stack.account}:key/*"],
            conditions={
                "ForAnyValue:StringEquals": {"kms:ResourceAliases": [BODY_KEY_ALIAS]},
                "StringLike": {"kms:ViaService": "s3.*.amazonaws.com"},
                "StringEquals": {BUCKET_ENCRYPTION_CONTEXT: bucket_arn},
            },
        )
    )
    for finding, reason in (
        (
            f"Resource::arn:<AWS::Partition>:s3:::{bucket}/*",
            "Bodies are named {KeyPrefix}/{MessageId} by the sending endpoint's transport, "
            "unknown in advance; the grant is confined to this account's one body bucket.",
        ),
        (
            f"Resource::arn:<AWS::Partition>:kms:{stack.region}:{stack.account}:key/*",
            "The body bucket's key is created in another stack of this account with an id "
            "unknown here; the grant is narrowed to the key carrying the body key's alias, "
            "used through S3.",
        ),
    ):
        acknowledge(role, f"AwsSolutions-IAM5[{finding}]", reason)


def grant_body_puts(role: iam.Role, stack: Stack, routes: Sequence[RelayRoute]) -> None:
    """Let the relay's ``role`` put bodies into the routes' body buckets (outbound the destinations' accounts',
    inbound its own) under this account's prefix there (``relay/<account id>/``, the only
    keys the relay writes and a receiving bucket admits), with their keys only through S3,
    only if they carry the body key's alias (their ids are unknown here) and only for those
    buckets' objects (``kms:EncryptionContext:aws:s3:arn``)."""
    copies = sorted(
        {(r.body_bucket, parse_queue_arn(r.destination_arn)) for r in routes if r.body_bucket},
        key=lambda pair: pair[0] or "",
    )
    prefix = relay_prefix(stack.account)
    role.add_to_policy(
        iam.PolicyStatement(
            actions=["s3:PutObject"],
            resources=[f"arn:{stack.partition}:s3:::{bucket}/{prefix}*" for bucket, _ in copies],
        )
    )
    places = sorted({(queue.region, queue.account) for _, queue in copies})
    role.add_to_policy(
        iam.PolicyStatement(
            actions=list(WRITER_KEY_ACTIONS),
            resources=[
                f"arn:{stack.partition}:kms:{region}:{account}:key/*" for region, account in places
            ],
            conditions={
                "ForAnyValue:StringEquals": {"kms:ResourceAliases": [BODY_KEY_ALIAS]},
                "StringLike": {"kms:ViaService": "s3.*.amazonaws.com"},
                "StringEquals": {
                    BUCKET_ENCRYPTION_CONTEXT: sorted(
                        {f"arn:{stack.partition}:s3:::{bucket}" for bucket, _ in copies}
                    )
                },
            },
        )
    )
    for bucket, _ in copies:
        acknowledge(
            role,
            f"AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:s3:::{bucket}/{prefix}*]",
            "Bodies are named after the transport's {KeyPrefix}/{MessageId}, unknown in "
            "advance, under this account's own prefix, the only keys the relay writes into "
            "this one bucket.",
        )
    for region, account in places:
        acknowledge(
            role,
            f"AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:kms:{region}:{account}:key/*]",
            "Body bucket keys are created in their accounts' stacks with ids unknown here; "
            "the grant is narrowed to keys carrying the body buckets' alias, used through "
            "S3.",
        )


HIDDEN_ID = "Default"
"""The construct id aws-cdk-lib leaves out of logical ids (a stack may hold its
:class:`~constructs_lib.AccountBridge` under it)."""


@jsii.implements(IAspect)
class _OverflowPolicyDescriptions:
    """Describe the managed policies a relay role's policy overflows into (aws-cdk-lib splits a
    policy over IAM's 10,240 bytes into them) by the path its logical ids are made of, without
    the ``Default`` scopes they leave out: aws-cdk-lib writes the role's construct path, and a
    description is changed only by replacing the policy, so a relay moved under such a scope
    would replace every one. Added to the role after the split, at the same priority, so it
    runs after it."""

    def visit(self, node: IConstruct) -> None:
        path = "/".join(part for part in node.node.path.split("/") if part != HIDDEN_ID)
        for child in node.node.children:
            policy = child.node.default_child
            if child.node.id.startswith("OverflowPolicy") and isinstance(
                policy, iam.CfnManagedPolicy
            ):
                policy.description = f"Part of the policies for {path}"
