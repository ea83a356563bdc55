"""The local AWS ages SQS messages on request, so that delays of NServiceBus's delay queues
(at least 15 minutes) pass in a test: a delayed message becomes receivable, and it reads as sent
that much earlier."""

from __future__ import annotations

import time
import urllib.error

import pytest

from local_aws.moto.time_travel import age_sqs_messages
from tests.local_aws.accounts import fresh_account

pytestmark = pytest.mark.moto


def test_ageing_lets_a_delayed_message_arrive_as_if_its_delay_had_passed(
    moto_endpoint: str,
) -> None:
    account = fresh_account(moto_endpoint)
    sqs = account.session().client("sqs", endpoint_url=moto_endpoint)
    url = sqs.create_queue(QueueName="Later")["QueueUrl"]
    sqs.send_message(QueueUrl=url, MessageBody="later", DelaySeconds=900)
    before = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=0).get("Messages", [])
    assert before == []

    assert age_sqs_messages(moto_endpoint, 900) >= 1

    (message,) = sqs.receive_message(
        QueueUrl=url, WaitTimeSeconds=0, AttributeNames=["SentTimestamp"]
    )["Messages"]
    assert message["Body"] == "later"
    sent_seconds_ago = time.time() - int(message["Attributes"]["SentTimestamp"]) / 1000
    assert 900 <= sent_seconds_ago < 960


@pytest.mark.parametrize("seconds", ["-1", "soon", "nan"])
def test_a_bad_age_is_refused_naming_the_parameter(moto_endpoint: str, seconds: str) -> None:
    with pytest.raises(urllib.error.HTTPError) as refused:
        age_sqs_messages(moto_endpoint, seconds)  # type: ignore[arg-type]
    assert refused.value.code == 400
    assert b"seconds:" in refused.value.read()
