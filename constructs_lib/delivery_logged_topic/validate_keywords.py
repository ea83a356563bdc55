"""The checks of :class:`DeliveryLoggedTopic`'s keywords that their types alone do not make (as
aws-cdk-lib's ``aws-sqs`` keeps ``validate-queue-props.ts``): each refuses with the keyword and
the fix before anything is created."""

from __future__ import annotations

from collections.abc import Sequence

from aws_cdk import Token
from aws_cdk import aws_kms as kms

from constructs_lib.delivery_logged_topic.topic_base import DeliveryProtocol
from constructs_lib.topic_naming import topic_name_problem
from constructs_lib.validation import (
    require_account_ids,
    require_customer_managed_key,
    require_organization_ids,
    require_range,
)
from cross_account_runtime.nservicebus.queue_arn import FIFO_SUFFIX


def validate_topic_keywords(
    *,
    topic_name: str,
    fifo: bool,
    content_based_deduplication: bool,
    encryption_key: kms.IKey | None,
    publisher_accounts: Sequence[str],
    publisher_organization_ids: Sequence[str],
    subscriber_accounts: Sequence[str],
    subscriber_organization_ids: Sequence[str],
    organization_id: str | None,
    logged_protocols: Sequence[DeliveryProtocol],
    success_sample_rate: int,
) -> str:
    """Refuse keywords :class:`DeliveryLoggedTopic` cannot serve (a name SNS refuses, a
    deduplicating standard topic, an AWS-managed key, ...); return the topic's name, with
    ``.fifo`` for a FIFO topic."""
    require_range("success_sample_rate", success_sample_rate, 0, 100)
    require_account_ids("publisher_accounts", publisher_accounts)
    require_organization_ids("publisher_organization_ids", publisher_organization_ids)
    require_account_ids("subscriber_accounts", subscriber_accounts)
    require_organization_ids("subscriber_organization_ids", subscriber_organization_ids)
    if organization_id is not None:
        require_organization_ids("organization_id", [organization_id])
    if content_based_deduplication and not fifo:
        raise ValueError("content_based_deduplication: only FIFO topics deduplicate; set fifo=True")
    require_customer_managed_key("encryption_key", encryption_key)
    for protocol in logged_protocols:
        require_deliverable("logged_protocols", protocol, fifo=fifo)
    if fifo and not topic_name.endswith(FIFO_SUFFIX):
        topic_name += FIFO_SUFFIX
    if not fifo and topic_name.endswith(FIFO_SUFFIX):
        raise ValueError(
            f"topic_name: {topic_name!r} ends with '.fifo' but fifo is False; set fifo=True"
        )
    problem = None if Token.is_unresolved(topic_name) else topic_name_problem(topic_name, fifo=fifo)
    if problem is not None:
        raise ValueError(f"topic_name: {problem}")
    return topic_name


def require_deliverable(keyword: str, protocol: DeliveryProtocol, *, fifo: bool) -> None:
    """Refuse logging a protocol the topic cannot deliver to (a FIFO topic delivers to SQS
    queues alone, :meth:`DeliveryProtocol.delivered_by`): its log configuration would promise
    deliveries that never happen."""
    if protocol not in DeliveryProtocol.delivered_by(fifo):
        raise ValueError(
            f"{keyword}: a FIFO topic delivers to SQS queues alone, so it has no "
            f"{protocol.value} deliveries to log; log DeliveryProtocol.SQS (every protocol it "
            "delivers to: DeliveryProtocol.delivered_by(fifo=True)), or make the topic standard"
        )
