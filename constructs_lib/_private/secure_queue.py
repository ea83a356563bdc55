"""The one way the constructs create an SQS queue: TLS only, encrypted, retention written out.

Endpoint queues, their dead-letter queues, relay queues and SNS subscriptions' dead-letter
queues all go through here (as AWS Solutions Constructs' ``sqs-helper.ts`` builds every queue
from one set of defaults), so a queue can never be created without its security baseline.
"""

from __future__ import annotations

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_kms as kms
from aws_cdk import aws_sqs as sqs
from constructs import Construct


def secure_queue(
    scope: Construct,
    construct_id: str,
    *,
    queue_name: str,
    fifo: bool,
    encryption_key: kms.IKey | None,
    retention_period: Duration,
    removal_policy: RemovalPolicy,
    content_based_deduplication: bool = False,
    visibility_timeout: Duration | None = None,
    delivery_delay: Duration | None = None,
    dead_letter_queue: sqs.DeadLetterQueue | None = None,
    redrive_allow_policy: sqs.RedriveAllowPolicy | None = None,
) -> sqs.Queue:
    """A queue that denies requests without TLS, encrypted with ``encryption_key`` (SSE-SQS
    without one), keeping messages for ``retention_period``."""
    return sqs.Queue(
        scope,
        construct_id,
        queue_name=queue_name,
        fifo=fifo or None,
        content_based_deduplication=content_based_deduplication or None,
        encryption=(
            sqs.QueueEncryption.KMS
            if encryption_key is not None
            else sqs.QueueEncryption.SQS_MANAGED
        ),
        encryption_master_key=encryption_key,
        enforce_ssl=True,
        retention_period=retention_period,
        visibility_timeout=visibility_timeout,
        delivery_delay=delivery_delay,
        dead_letter_queue=dead_letter_queue,
        redrive_allow_policy=redrive_allow_policy,
        removal_policy=removal_policy,
    )
