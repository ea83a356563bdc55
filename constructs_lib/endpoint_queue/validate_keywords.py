"""The checks of :class:`EndpointQueue`'s keywords that their types alone do not make (as
aws-cdk-lib's ``validate-queue-props.ts``): each refuses with the keyword and the fix before
anything is created."""

from __future__ import annotations

from collections.abc import Sequence

from aws_cdk import Duration
from aws_cdk import aws_kms as kms

from constructs_lib.defaults import SQS_RETENTION_RANGE, endpoint_receives
from constructs_lib.endpoint_queue.queue_base import EndpointQueueEncryption
from constructs_lib.messaging_key import MessagingKey
from constructs_lib.validation import (
    require_account_ids,
    require_customer_managed_key,
    require_organization_ids,
)


def validate_endpoint_queue_keywords(
    *,
    fifo: bool,
    content_based_deduplication: bool,
    immediate_retries: int,
    max_receive_count: int | None,
    encryption: EndpointQueueEncryption,
    encryption_key: kms.IKey | None,
    shared_key: MessagingKey | None,
    sender_accounts: Sequence[str],
    sender_organization_ids: Sequence[str],
    organization_id: str | None,
    retention_period: Duration,
    dead_letter_retention_period: Duration,
) -> int:
    """Refuse keywords :class:`EndpointQueue` cannot serve together (receives that end before
    the immediate retries, a deduplicating standard queue, a dead-letter queue that forgets
    sooner, a key with SSE-SQS or two keys, ...); return the queue's ``maxReceiveCount``
    (:func:`~constructs_lib.defaults.endpoint_receives`)."""
    _, max_receive_count, problems = endpoint_receives(immediate_retries, max_receive_count)
    if problems:
        keyword, problem = problems[0]
        raise ValueError(f"{keyword}: {problem}")
    require_account_ids("sender_accounts", sender_accounts)
    require_organization_ids("sender_organization_ids", sender_organization_ids)
    if content_based_deduplication and not fifo:
        raise ValueError("content_based_deduplication: only FIFO queues deduplicate; set fifo=True")
    if organization_id is not None:
        require_organization_ids("organization_id", [organization_id])
    for keyword, retention in (
        ("retention_period", retention_period),
        ("dead_letter_retention_period", dead_letter_retention_period),
    ):
        _require_sqs_retention(keyword, retention)
    _refuse_short_dead_letter_retention(retention_period, dead_letter_retention_period, fifo=fifo)
    for field, given in (("encryption_key", encryption_key), ("shared_key", shared_key)):
        if encryption is EndpointQueueEncryption.SQS_MANAGED and given is not None:
            raise ValueError(
                f"{field}: SSE-SQS uses SQS-owned keys; drop {field} or use "
                "encryption=EndpointQueueEncryption.KMS"
            )
    if shared_key is not None and encryption_key is not None:
        raise ValueError(
            "shared_key: the queue is encrypted with one key; give either shared_key (the "
            "account's MessagingKey) or encryption_key, not both"
        )
    require_customer_managed_key("encryption_key", encryption_key)
    return max_receive_count


def _require_sqs_retention(keyword: str, retention: Duration) -> None:
    """Refuse a retention SQS refuses (:data:`~constructs_lib.defaults.SQS_RETENTION_RANGE`)
    before it is compared with another keyword: else the comparison would blame the keyword
    that was right (a 30-day queue is no reason to lengthen its dead-letter queue, which SQS
    cannot keep longer than 14 days)."""
    shortest, longest = SQS_RETENTION_RANGE
    seconds = retention.to_seconds()
    if shortest.to_seconds() <= seconds <= longest.to_seconds():
        return
    bound, limit = (
        ("under SQS's minimum", shortest)
        if seconds < shortest.to_seconds()
        else ("over SQS's maximum", longest)
    )
    raise ValueError(
        f"{keyword}: {retention.to_human_string()} is {bound} of {limit.to_human_string()} "
        f"(SQS keeps a message from {shortest.to_human_string()} to "
        f"{longest.to_human_string()}); pass a retention within that range"
    )


def _refuse_short_dead_letter_retention(
    retention: Duration, dead_letter_retention: Duration, *, fifo: bool
) -> None:
    """A standard queue's dead-letter queue keeps messages at least as long as the queue: "For
    standard queues, the expiration of a message is always based on its original enqueue
    timestamp. When a message is moved to a dead-letter queue, the enqueue timestamp is
    unchanged" (SQS Developer Guide, "Setting-up dead-letter queue retention"), so a shorter
    dead-letter queue deletes a message redriven late before anyone can look at it. A FIFO
    queue's redrive resets the timestamp, so its dead-letter queue may be shorter."""
    if fifo or dead_letter_retention.to_seconds() >= retention.to_seconds():
        return
    raise ValueError(
        f"dead_letter_retention_period: {dead_letter_retention.to_human_string()} is shorter "
        f"than retention_period ({retention.to_human_string()}); SQS counts a standard queue's "
        "message's age from its first enqueue, in the dead-letter queue too, so a message "
        "redriven late would be deleted from it early. Keep the dead-letter queue at least "
        "as long as the queue"
    )
