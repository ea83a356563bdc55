"""Released endpoints against the local AWS (moto in server mode), in one account: sends and
replies by name, core's recoverability with an SQS redrive policy, a 20-minute delay through the
delay queue, and the start-up check that refuses an unfit delay queue.

Delays pass by time travel: ``local_aws.moto.time_travel.age_sqs_messages`` ages every SQS
message of the local AWS, so the delay queue's 15 minutes and the delayed retries' 10-30 s pass in
a call. Receives use ``WaitTimeSeconds`` 0."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest

from local_aws.moto.time_travel import age_sqs_messages
from local_aws.released_transport.core.recoverability import (
    DelayedRetry,
    ImmediateRetry,
    MoveToError,
)
from local_aws.released_transport.endpoint.handler_context import (
    MessageHandlerContext,
)
from local_aws.released_transport.endpoint.receive_pipeline import (
    ProcessingOutcome,
)
from local_aws.released_transport.endpoint.released_endpoint import (
    ReleasedEndpoint,
)
from local_aws.released_transport.endpoint.settings import EndpointSettings
from local_aws.released_transport.transport.queues.sqs_errors import QueueDoesNotExistError
from local_aws.released_transport.transport.receiving.delayed_pump import DelayQueueCheckError
from local_aws.released_transport.transport.receiving.extraction import WireForm
from local_aws.released_transport.transport.receiving.input_pump import MessageFate

pytestmark = pytest.mark.moto

SETTINGS = EndpointSettings(wait_time_seconds=0, max_concurrency=10)
ORDER = "Sales.Messages.PlaceOrder, Sales.Messages, Version=1.0.0.0, Culture=neutral, PublicKeyToken=null"


def _started(name: str, sqs: Any, settings: EndpointSettings = SETTINGS) -> ReleasedEndpoint:
    endpoint = ReleasedEndpoint(name, sqs, settings)
    endpoint.install()
    endpoint.start()
    return endpoint


def _ignore(_context: MessageHandlerContext) -> None:
    return None


def _raw(sqs: Any, queue: str) -> list[dict[str, Any]]:
    url = sqs.get_queue_url(QueueName=queue)["QueueUrl"]
    response = sqs.receive_message(
        QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=0, MessageAttributeNames=["All"]
    )
    messages: list[dict[str, Any]] = response.get("Messages", [])
    return messages


def test_a_send_by_name_arrives_with_core_headers(sqs: Any) -> None:
    settings = EndpointSettings(queue_name_prefix="DEV-", wait_time_seconds=0, max_concurrency=10)
    sales = _started("Sales", sqs, settings)
    billing = _started("Billing", sqs, settings)

    sent = sales.send("Billing", ORDER, b'{"OrderId":1}', headers={"custom": "value"})
    (outcome,) = billing.process(_ignore)

    assert sales.receive_address == "DEV-Sales"
    assert outcome.pump.fate is MessageFate.PROCESSED
    assert outcome.pump.form is WireForm.WRAPPED
    assert outcome.message is not None
    headers = outcome.message.headers
    assert outcome.message.message_id == sent.message_id
    assert outcome.message.body == b'{"OrderId":1}'
    assert headers["NServiceBus.ReplyToAddress"] == "DEV-Sales"
    assert headers["NServiceBus.OriginatingEndpoint"] == "Sales"
    assert headers["NServiceBus.MessageIntent"] == "Send"
    assert headers["NServiceBus.EnclosedMessageTypes"] == ORDER
    assert headers["NServiceBus.Version"] == "10.2.5"
    assert headers["custom"] == "value"
    assert billing.process(_ignore) == []


def test_a_reply_goes_back_by_name_to_the_reply_to_address(sqs: Any) -> None:
    sales = _started("Sales", sqs)
    billing = _started("Billing", sqs)
    sent = sales.send("Billing", ORDER, b"{}")

    billing.process(lambda context: context.reply("Billing.Messages.OrderBilled", b'{"ok":true}'))
    (outcome,) = sales.process(_ignore)

    assert outcome.message is not None
    headers = outcome.message.headers
    assert headers["NServiceBus.MessageIntent"] == "Reply"
    assert headers["NServiceBus.CorrelationId"] == sent.message_id
    assert headers["NServiceBus.RelatedTo"] == sent.message_id
    assert headers["NServiceBus.ConversationId"] == sent.headers["NServiceBus.ConversationId"]
    assert headers["NServiceBus.ReplyToAddress"] == "Billing"
    assert outcome.message.body == b'{"ok":true}'


def test_an_unwrapped_sender_and_a_wrapped_receiver_understand_each_other(sqs: Any) -> None:
    unwrapped = EndpointSettings(wrap_outgoing_messages=False, wait_time_seconds=0)
    sales = _started("Sales", sqs, unwrapped)
    billing = _started("Billing", sqs)

    sales.send("Billing", ORDER, '{"city":"Zürich"}'.encode())
    (outcome,) = billing.process(lambda context: context.reply("Reply", b"{}"))
    (reply,) = sales.process(_ignore)

    assert outcome.pump.form is WireForm.UNWRAPPED
    assert outcome.message is not None
    assert outcome.message.body == '{"city":"Zürich"}'.encode()
    assert reply.pump.form is WireForm.WRAPPED


def test_a_forward_is_an_exact_copy_with_the_received_attributes(sqs: Any) -> None:
    sales = _started("Sales", sqs)
    billing = _started("Billing", sqs)
    _started("Audit", sqs)
    sales.send("Billing", ORDER, b"{}")

    (outcome,) = billing.process(lambda context: context.forward("Audit"))
    (copy,) = _raw(sqs, "Audit")

    assert outcome.message is not None
    body = json.loads(copy["Body"])
    assert body["Headers"] == outcome.message.headers
    assert (
        copy["MessageAttributes"]["NServiceBus.MessageId"]["StringValue"]
        == outcome.message.message_id
    )


def _redrive(sqs: Any, queue: str, max_receive_count: int) -> str:
    dead_letters = sqs.create_queue(QueueName=f"{queue}-dlq")["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=dead_letters, AttributeNames=["QueueArn"])
    policy = {
        "deadLetterTargetArn": arn["Attributes"]["QueueArn"],
        "maxReceiveCount": max_receive_count,
    }
    url = sqs.get_queue_url(QueueName=queue)["QueueUrl"]
    sqs.set_queue_attributes(QueueUrl=url, Attributes={"RedrivePolicy": json.dumps(policy)})
    return str(dead_letters)


def _fail(_context: MessageHandlerContext) -> None:
    raise RuntimeError("the database is down")


def _process_until_handled(
    endpoint: ReleasedEndpoint, moto_endpoint: str
) -> list[ProcessingOutcome]:
    outcomes: list[ProcessingOutcome] = []
    for _ in range(40):
        step = endpoint.process(_fail)
        outcomes += step
        if any(isinstance(outcome.action, MoveToError) for outcome in step):
            break
        delayed = [o.action for o in step if isinstance(o.action, DelayedRetry)]
        if delayed:
            age_sqs_messages(moto_endpoint, delayed[0].delay.total_seconds())
    return outcomes


def test_a_handler_that_always_fails_is_tried_6_times_per_round_then_goes_to_the_error_queue(
    sqs: Any, moto_endpoint: str
) -> None:
    sales = _started("Sales", sqs)
    billing = _started("Billing", sqs)
    _redrive(sqs, "Billing", max_receive_count=100)
    sent = sales.send("Billing", ORDER, b'{"OrderId":7}')

    outcomes = _process_until_handled(billing, moto_endpoint)

    actions = [outcome.action for outcome in outcomes]
    assert len(outcomes) == 24
    assert sum(isinstance(action, ImmediateRetry) for action in actions) == 20
    assert [a.delay.total_seconds() for a in actions if isinstance(a, DelayedRetry)] == [10, 20, 30]
    assert actions[-1] == MoveToError("error")
    assert [o.action for o in outcomes[:6]] == [ImmediateRetry()] * 5 + [
        DelayedRetry(timedelta(seconds=10))
    ]
    (failed,) = _raw(sqs, "error")
    headers = json.loads(failed["Body"])["Headers"]
    assert headers["NServiceBus.MessageId"] == sent.message_id
    assert headers["NServiceBus.FailedQ"] == "Billing"
    assert headers["NServiceBus.ProcessingEndpoint"] == "Billing"
    assert headers["NServiceBus.ExceptionInfo.Message"] == "the database is down"
    assert headers["NServiceBus.ExceptionInfo.ExceptionType"] == "builtins.RuntimeError"
    assert len(headers["NServiceBus.TimeOfFailure"]) == len("2024-01-02 03:04:05:123456 Z")
    assert "NServiceBus.Retries" not in headers
    assert "NServiceBus.Retries.Timestamp" in headers
    assert failed["MessageAttributes"]["NServiceBus.MessageId"]["StringValue"] == sent.message_id
    assert json.loads(failed["Body"])["Body"] == "eyJPcmRlcklkIjo3fQ=="


def test_a_redrive_policy_below_the_receives_needed_takes_the_message_first(
    sqs: Any, moto_endpoint: str
) -> None:
    sales = _started("Sales", sqs)
    billing = _started("Billing", sqs)
    dead_letters = _redrive(sqs, "Billing", max_receive_count=3)
    sales.send("Billing", ORDER, b"{}")

    outcomes = _process_until_handled(billing, moto_endpoint)

    assert len(outcomes) == 3
    assert all(isinstance(outcome.action, ImmediateRetry) for outcome in outcomes)
    assert _raw(sqs, "error") == []
    assert len(sqs.receive_message(QueueUrl=dead_letters).get("Messages", [])) == 1


def test_a_twenty_minute_delay_goes_through_the_delay_queue_and_arrives_once(
    sqs: Any, moto_endpoint: str
) -> None:
    sales = _started("Sales", sqs)
    billing = _started("Billing", sqs)
    seen: list[str] = []

    sent = sales.send("Billing", ORDER, b"{}", delay=timedelta(minutes=20))

    def record(context: MessageHandlerContext) -> None:
        seen.append(context.message.message_id)

    assert billing.process(record) == []
    assert billing.process_delayed() == []
    age_sqs_messages(moto_endpoint, 900)
    (moved,) = billing.process_delayed()
    assert 299 <= moved.delay_seconds <= 300
    assert moved.queue_url.endswith("/Billing")
    assert billing.process(record) == []
    age_sqs_messages(moto_endpoint, 300)
    billing.process(record)
    billing.process(record)
    assert billing.process_delayed() == []

    assert seen == [sent.message_id]


def _delay_queue_with(sqs: Any, name: str, attributes: dict[str, str]) -> None:
    sqs.create_queue(QueueName=name)
    url = sqs.create_queue(
        QueueName=f"{name}-delay.fifo", Attributes={"FifoQueue": "true", "DelaySeconds": "900"}
    )["QueueUrl"]
    sqs.set_queue_attributes(QueueUrl=url, Attributes=attributes)


def test_the_start_up_check_refuses_a_delay_queue_with_a_redrive_policy(sqs: Any) -> None:
    dead_letters = sqs.create_queue(QueueName="dlq.fifo", Attributes={"FifoQueue": "true"})[
        "QueueUrl"
    ]
    arn = sqs.get_queue_attributes(QueueUrl=dead_letters, AttributeNames=["QueueArn"])[
        "Attributes"
    ]["QueueArn"]
    policy = json.dumps({"deadLetterTargetArn": arn, "maxReceiveCount": 5})
    _delay_queue_with(sqs, "Sales", {"MessageRetentionPeriod": "345600", "RedrivePolicy": policy})

    with pytest.raises(DelayQueueCheckError) as refused:
        ReleasedEndpoint("Sales", sqs, SETTINGS).start()

    assert str(refused.value) == (
        "Delayed delivery queue 'Sales-delay.fifo' should not have Redrive Policy enabled."
    )


def test_the_start_up_check_refuses_a_short_retention(sqs: Any) -> None:
    _delay_queue_with(sqs, "Sales", {"MessageRetentionPeriod": "86400"})

    with pytest.raises(DelayQueueCheckError) as refused:
        ReleasedEndpoint("Sales", sqs, SETTINGS).start()

    assert str(refused.value) == (
        "Delayed delivery queue 'Sales-delay.fifo' has a Message Retention Period of"
        " '1.00:00:00'. It should be at least '4.00:00:00'."
    )


def test_an_endpoint_without_its_queues_does_not_start(sqs: Any) -> None:
    with pytest.raises(QueueDoesNotExistError, match=r"^Queue `Sales` doesn't exist\. Call"):
        ReleasedEndpoint("Sales", sqs, SETTINGS).start()

    sqs.create_queue(QueueName="Billing")
    with pytest.raises(QueueDoesNotExistError):
        ReleasedEndpoint("Billing", sqs, SETTINGS).start()
