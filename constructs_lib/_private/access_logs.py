"""The constructs' buckets: encrypted with a customer-managed key, TLS-only, private, owner
enforced, logging their server access into a bucket of their own (cdk-nag's S1)."""

from __future__ import annotations

from aws_cdk import RemovalPolicy
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from constructs import Construct

from constructs_lib._private.acknowledgments import acknowledge
from constructs_lib.defaults import ACCESS_LOG_RETENTION, LOG_INCOMPLETE_UPLOAD_LIMIT

SERVER_ACCESS_LOGS_BY_POLICY = "@aws-cdk/aws-s3:serverAccessLogsUseBucketPolicy"


def admit_log_delivery_by_policy(scope: Construct) -> None:
    """Admit S3's log delivery by bucket policy, not the legacy ACL (which object ownership
    enforced forbids), whatever the app's feature flags; call it before adding children."""
    scope.node.set_context(SERVER_ACCESS_LOGS_BY_POLICY, True)


def access_log_bucket(
    scope: Construct, construct_id: str, removal_policy: RemovalPolicy
) -> s3.Bucket:
    """A TLS-only, private, SSE-S3 bucket (S3's log delivery cannot write with a
    customer-managed key) whose logs expire after
    :data:`~constructs_lib.defaults.ACCESS_LOG_RETENTION`."""
    bucket = s3.Bucket(
        scope,
        construct_id,
        encryption=s3.BucketEncryption.S3_MANAGED,
        block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
        object_ownership=s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
        enforce_ssl=True,
        lifecycle_rules=[
            s3.LifecycleRule(
                id="expire-access-logs",
                expiration=ACCESS_LOG_RETENTION,
                abort_incomplete_multipart_upload_after=LOG_INCOMPLETE_UPLOAD_LIMIT,
            )
        ],
        removal_policy=removal_policy,
    )
    acknowledge(
        bucket,
        "AwsSolutions-S1",
        "This bucket receives the server access logs of its sibling bucket; logging it into "
        "itself or a third bucket would only move the question one bucket along.",
    )
    return bucket


def logged_kms_bucket(
    scope: Construct,
    *,
    bucket_name: str | None,
    key: kms.IKey,
    log_prefix: str,
    lifecycle_rules: list[s3.LifecycleRule],
    removal_policy: RemovalPolicy,
    versioned: bool = False,
) -> tuple[s3.Bucket, s3.Bucket]:
    """The access-log bucket (``AccessLogs``) and the bucket (``Bucket``) of ``scope``: the
    bucket encrypted with ``key`` (S3 Bucket Keys on, so many small writes do not each call
    KMS), TLS-only, public access blocked, object ownership enforced, its server access logs
    under ``log_prefix``, its objects' versions kept when ``versioned``. Call
    :func:`admit_log_delivery_by_policy` on ``scope`` first."""
    logs = access_log_bucket(scope, "AccessLogs", removal_policy)
    bucket = s3.Bucket(
        scope,
        "Bucket",
        bucket_name=bucket_name,
        encryption=s3.BucketEncryption.KMS,
        encryption_key=key,
        bucket_key_enabled=True,
        block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
        object_ownership=s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
        enforce_ssl=True,
        server_access_logs_bucket=logs,
        server_access_logs_prefix=log_prefix,
        lifecycle_rules=lifecycle_rules,
        removal_policy=removal_policy,
        versioned=versioned,
    )
    return logs, bucket
