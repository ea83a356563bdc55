"""The local AWS holds a message sent to a FIFO queue for the queue's own delay, even when the
send says ``DelaySeconds=0`` (as NServiceBus's dispatcher always does), as SQS does."""

from __future__ import annotations

import botocore.exceptions
import pytest

from local_aws.moto.time_travel import age_sqs_messages
from tests.local_aws.accounts import fresh_account

pytestmark = pytest.mark.moto


def delay_queue(moto_endpoint: str) -> tuple[object, str]:
    sqs = fresh_account(moto_endpoint).session().client("sqs", endpoint_url=moto_endpoint)
    url = sqs.create_queue(
        QueueName="Billing-delay.fifo",
        Attributes={"FifoQueue": "true", "DelaySeconds": "900"},
    )["QueueUrl"]
    return sqs, url


@pytest.mark.parametrize("batch", [False, True], ids=["single", "batch"])
def test_an_explicit_zero_delay_leaves_a_fifo_queue_its_own_delay(
    moto_endpoint: str, batch: bool
) -> None:
    sqs, url = delay_queue(moto_endpoint)
    message = {
        "MessageBody": "later",
        "DelaySeconds": 0,
        "MessageGroupId": "m-1",
        "MessageDeduplicationId": "m-1",
    }
    if batch:
        sqs.send_message_batch(QueueUrl=url, Entries=[{"Id": "1", **message}])  # type: ignore[attr-defined]
    else:
        sqs.send_message(QueueUrl=url, **message)  # type: ignore[attr-defined]

    assert sqs.receive_message(QueueUrl=url).get("Messages", []) == []  # type: ignore[attr-defined]
    age_sqs_messages(moto_endpoint, 900)
    (received,) = sqs.receive_message(QueueUrl=url)["Messages"]  # type: ignore[attr-defined]
    assert received["Body"] == "later"


def test_a_positive_per_message_delay_on_a_fifo_queue_is_still_refused(
    moto_endpoint: str,
) -> None:
    sqs, url = delay_queue(moto_endpoint)
    with pytest.raises(botocore.exceptions.ClientError, match="DelaySeconds is invalid"):
        sqs.send_message(  # type: ignore[attr-defined]
            QueueUrl=url,
            MessageBody="x",
            DelaySeconds=5,
            MessageGroupId="g",
            MessageDeduplicationId="d",
        )


def test_a_standard_queue_still_takes_an_explicit_zero_delay(moto_endpoint: str) -> None:
    sqs = fresh_account(moto_endpoint).session().client("sqs", endpoint_url=moto_endpoint)
    url = sqs.create_queue(QueueName="Slow", Attributes={"DelaySeconds": "900"})["QueueUrl"]
    sqs.send_message(QueueUrl=url, MessageBody="now", DelaySeconds=0)
    (received,) = sqs.receive_message(QueueUrl=url)["Messages"]
    assert received["Body"] == "now"
