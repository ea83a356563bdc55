"""``DeliveryLogBucket``: where every account's delivery logs and the daily reports are kept.

Secure by default, as AWS Solutions Constructs make their buckets: a customer-managed key with
rotation (S3 Bucket Keys on, so Firehose's many small writes do not each call KMS), TLS-only,
public access blocked, object ownership enforced (no ACLs), server access logs in a bucket of
their own, and lifecycle rules that move logs to Standard-IA and expire them. Retained on stack
deletion: logs are evidence.
"""

from __future__ import annotations

from aws_cdk import Duration, RemovalPolicy, Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from constructs import Construct

from constructs_lib._private.access_logs import (
    admit_log_delivery_by_policy,
    logged_kms_bucket,
)
from constructs_lib._private.acknowledgments import acknowledge
from constructs_lib._private.attributes import Attribute
from constructs_lib._private.keywords import checked, checked_keywords
from constructs_lib.defaults import (
    LOG_BUCKET_INFREQUENT_ACCESS_AFTER,
    LOG_BUCKET_RETENTION,
    LOG_INCOMPLETE_UPLOAD_LIMIT,
    MAX_REPORT_RETENTION_DAYS,
    MAX_RETENTION_DAYS,
    MIN_INFREQUENT_ACCESS_AFTER_DAYS,
)
from constructs_lib.validation import require_range
from cross_account_runtime.delivery_report.bucket_paths import (
    ERROR_PREFIX,
    LOG_PREFIX,
    REPORT_PREFIX,
)


def lifecycle_problems(
    retention_days: int, infrequent_access_after_days: int
) -> list[tuple[str, str]]:
    """``(keyword, rule)`` for each of the logs' lifecycle settings that S3 refuses or that
    defeats itself: S3 moves objects to Standard-IA no sooner than
    :data:`~constructs_lib.defaults.MIN_INFREQUENT_ACCESS_AFTER_DAYS` days after their
    creation, and refuses a lifecycle rule whose expiration does not come after its
    transition; keeping logs longer than
    :data:`~constructs_lib.defaults.MAX_RETENTION_DAYS` is surely a mistake. The keywords
    are the construct's (``retention``, ``infrequent_access_after``); the topology reports
    each at its own field."""
    problems: list[tuple[str, str]] = []
    if infrequent_access_after_days < MIN_INFREQUENT_ACCESS_AFTER_DAYS:
        problems.append(
            (
                "infrequent_access_after",
                f"{infrequent_access_after_days} days is too soon: S3 moves objects to "
                f"Standard-IA no sooner than {MIN_INFREQUENT_ACCESS_AFTER_DAYS} days after "
                "their creation",
            )
        )
    if retention_days > MAX_RETENTION_DAYS:
        problems.append(
            (
                "retention",
                f"{retention_days} days is more than {MAX_RETENTION_DAYS:,} (a hundred years: "
                "longer is surely a mistake)",
            )
        )
    elif retention_days <= infrequent_access_after_days:
        problems.append(
            (
                "retention",
                f"{retention_days} days must be longer than the {infrequent_access_after_days} "
                "days after which logs move to Standard-IA: S3 refuses a lifecycle rule that "
                "expires objects before or when it moves them; keep logs longer or move them "
                "sooner",
            )
        )
    return problems


@checked
class DeliveryLogBucket(Construct):
    """The analytics bucket (``bucket``), its key (``key``) and its access-log bucket.

    Example:

    ```python
    from aws_cdk import App, Stack

    from constructs_lib import DeliveryLogBucket

    app = App()
    stack = Stack(app, "Analytics")
    logs = DeliveryLogBucket(stack, "Logs")
    app.synth()
    ```
    """

    key = Attribute[kms.Key]("The key the log bucket is encrypted with.")
    access_log_bucket = Attribute[s3.Bucket]("The bucket of the log bucket's server access logs.")
    bucket = Attribute[s3.Bucket]("The bucket delivery logs and reports land in.")

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        bucket_name: str | None = None,
        retention: Duration = LOG_BUCKET_RETENTION,
        infrequent_access_after: Duration = LOG_BUCKET_INFREQUENT_ACCESS_AFTER,
        report_retention: Duration | None = None,
        removal_policy: RemovalPolicy = RemovalPolicy.RETAIN,
    ) -> None:
        """Create the key, the access-log bucket and the bucket.

        :param bucket_name: the bucket's name. Default: one CloudFormation generates.
        :param retention: how long raw logs and Firehose's error output are kept (longer than
            ``infrequent_access_after``, at most 100 years). Default:
            :data:`~constructs_lib.defaults.LOG_BUCKET_RETENTION_DAYS` (400 days).
        :param infrequent_access_after: when objects move to Standard-IA (S3's minimum: 30
            days). Default:
            :data:`~constructs_lib.defaults.LOG_BUCKET_INFREQUENT_ACCESS_AFTER_DAYS` (30 days).
        :param report_retention: how long reports are kept, being small and what people read.
            Default: twice ``retention``.
        :param removal_policy: of the bucket and its key; logs are evidence. Default:
            ``RemovalPolicy.RETAIN``.
        """
        super().__init__(scope, construct_id)
        admit_log_delivery_by_policy(self)
        retention_days = int(retention.to_days())
        for keyword, rule in lifecycle_problems(
            retention_days, int(infrequent_access_after.to_days())
        ):
            raise ValueError(f"{keyword}: {rule}")
        reports_days = int(report_retention.to_days()) if report_retention else 2 * retention_days
        require_range("report_retention (days)", reports_days, 1, MAX_REPORT_RETENTION_DAYS)
        self.key = kms.Key(
            self,
            "Key",
            description="Delivery logs and reports of the messaging accounts",
            enable_key_rotation=True,
            removal_policy=removal_policy,
        )
        self.access_log_bucket, self.bucket = logged_kms_bucket(
            self,
            bucket_name=bucket_name,
            key=self.key,
            log_prefix="delivery-log-bucket/",
            lifecycle_rules=[
                *(
                    s3.LifecycleRule(
                        id=f"expire-{prefix.rstrip('/')}",
                        prefix=prefix,
                        transitions=[
                            s3.Transition(
                                storage_class=s3.StorageClass.INFREQUENT_ACCESS,
                                transition_after=infrequent_access_after,
                            )
                        ],
                        expiration=retention,
                    )
                    for prefix in (LOG_PREFIX, ERROR_PREFIX)
                ),
                s3.LifecycleRule(
                    id="expire-reports",
                    prefix=REPORT_PREFIX,
                    expiration=Duration.days(reports_days),
                ),
                s3.LifecycleRule(
                    id="abort-incomplete-uploads",
                    abort_incomplete_multipart_upload_after=LOG_INCOMPLETE_UPLOAD_LIMIT,
                ),
            ],
            removal_policy=removal_policy,
        )

    @checked_keywords
    def grant_write_logs(self, role: iam.Role) -> None:
        """Write objects under the log and error prefixes (what Firehose needs)."""
        for prefix in (LOG_PREFIX, ERROR_PREFIX):
            self.bucket.grant_put(role, f"{prefix}*")
        self._acknowledge_prefix_grants(role, (LOG_PREFIX, ERROR_PREFIX))
        acknowledge(
            role,
            "AwsSolutions-IAM5[Action::s3:Abort*]",
            "Aborting its own multipart uploads of log objects, under the log prefixes only.",
        )

    @checked_keywords
    def grant_read_logs_write_reports(self, role: iam.Role) -> None:
        """Read the logs and write (and replace) reports: what the daily job needs."""
        self.bucket.grant_read(role, f"{LOG_PREFIX}*")
        self.bucket.grant_read_write(role, f"{REPORT_PREFIX}*")
        self.bucket.grant_delete(role, f"{REPORT_PREFIX}*")
        self._acknowledge_prefix_grants(role, (LOG_PREFIX, REPORT_PREFIX))
        for action, reason in (
            (
                "s3:GetObject*",
                "The read actions of S3's grant helper (object, version, attributes, tagging), "
                "on the log and report prefixes only.",
            ),
            (
                "s3:GetBucket*",
                "GetBucketLocation and the bucket reads Hadoop's S3 clients make before listing.",
            ),
            (
                "s3:List*",
                "Listing a day's log objects and the report prefix; objects are reached only "
                "under the log and report prefixes.",
            ),
            ("s3:Abort*", "Aborting the job's own multipart uploads, under the report prefix."),
            (
                "s3:DeleteObject*",
                "Spark's output committer replaces a day's report (a rerun) and removes its "
                "temporary files; delete is granted under the report prefix only.",
            ),
        ):
            acknowledge(role, f"AwsSolutions-IAM5[Action::{action}]", reason)

    def _acknowledge_prefix_grants(self, role: iam.Role, prefixes: tuple[str, ...]) -> None:
        logical_id = Stack.of(self).get_logical_id(self.bucket.node.default_child)  # type: ignore[arg-type]
        for prefix in prefixes:
            acknowledge(
                role,
                f"AwsSolutions-IAM5[Resource::<{logical_id}.Arn>/{prefix}*]",
                f"Objects are named by Firehose or Spark at write time; the grant is confined "
                f"to the {prefix} prefix of this bucket.",
            )
        for action in ("kms:GenerateDataKey*", "kms:ReEncrypt*"):
            acknowledge(
                role,
                f"AwsSolutions-IAM5[Action::{action}]",
                "The bucket key's data-key actions S3 needs to encrypt objects, on this "
                "bucket's own key only.",
            )
