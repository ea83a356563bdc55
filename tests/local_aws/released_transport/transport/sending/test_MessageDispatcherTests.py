# ruff: noqa: N802, N999 -- module and test names are the upstream test's, for traceability
"""NServiceBus.AmazonSQS 9.1.1 ``src/NServiceBus.Transport.SQS.Tests/Sending/
MessageDispatcherTests.cs``: the unicast cases (publishing, the hybrid de-duplication and S3
are in ``test_MessageDispatcherTests_publish_s3.py``), with the approval files compared byte for
byte; then what the released dispatcher does that no upstream unit test pins (native attribute
carry-over, the unwrapped body rule, the missing-queue message, the 1 MiB limit without S3)."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from local_aws.released_transport.core.outgoing import (
    DispatchConsistency,
    DispatchProperties,
    OutgoingMessage,
    TransportOperation,
    TransportTransaction,
)
from local_aws.released_transport.dotnet.time_formats import TimeSpan
from local_aws.released_transport.transport.queues.naming import get_sqs_queue_name
from local_aws.released_transport.transport.queues.queue_cache import QueueCache
from local_aws.released_transport.transport.queues.sqs_errors import QueueDoesNotExistError
from local_aws.released_transport.transport.sending.dispatcher import (
    LargeMessageError,
    MessageDispatcher,
)
from tests.local_aws.released_transport.fake_sqs import FakeSqs, client_error

EXPECTED_TTBR = "10675199.01:48:05.4775807"
EXPECTED_REPLY_TO_ADDRESS = "TestReplyToAddress"
ISOLATED = DispatchConsistency.ISOLATED

DOES_NOT_SEND_EXTRA_PROPERTIES_APPROVED = (
    '{"Body":"e30=","S3BodyKey":null,"Headers":{"NServiceBus.AmazonSQS.TimeToBeReceived":'
    '"10675199.01:48:05.4775807","NServiceBus.ReplyToAddress":"TestReplyToAddress",'
    '"NServiceBus.MessageId":"093C17C6-D32E-44FE-9134-65C10C1287EB"}}'
)
"""``ApprovalFiles/MessageDispatcherTests.Does_not_send_extra_properties_in_payload_by_default.approved.txt``."""

SHOULD_NOT_WRAP_APPROVED: dict[str, Any] = {
    "QueueUrl": "address",
    "MessageBody": "my message body",
    "DelaySeconds": 0,
    "MessageAttributes": {
        "NServiceBus.MessageId": {"DataType": "String", "StringValue": "1234"},
        "NServiceBus.AmazonSQS.Headers": {
            "DataType": "String",
            "StringValue": '{"NServiceBus.AmazonSQS.TimeToBeReceived":"10675199.01:48:05.4775807",'
            '"NServiceBus.ReplyToAddress":"TestReplyToAddress",'
            '"NServiceBus.MessageId":"74d4f8e4-0fc7-4f09-8d46-0b76994e76d6"}',
        },
    },
}
"""``ApprovalFiles/MessageDispatcherTests.Should_not_wrap_if_configured_not_to.approved.txt``
(its ``null`` group and deduplication ids are simply absent from a boto3 request)."""


def _dispatcher(sqs: FakeSqs, *, wrap: bool = True) -> MessageDispatcher:
    return MessageDispatcher(
        sqs, QueueCache(sqs, get_sqs_queue_name, ""), wrap_outgoing_messages=wrap
    )


def _operation(
    destination: str,
    message_id: str | None = None,
    headers: dict[str, str | None] | None = None,
    body: bytes = b"{}",
    *,
    delay: timedelta | None = None,
    consistency: DispatchConsistency = DispatchConsistency.DEFAULT,
) -> TransportOperation:
    return TransportOperation(
        OutgoingMessage(message_id or str(uuid.uuid4()), headers or {}, body),
        destination,
        DispatchProperties(delay_deliver_with=delay),
        consistency,
    )


def _ttbr_reply_to(message_id: str) -> dict[str, str | None]:
    return {
        "NServiceBus.AmazonSQS.TimeToBeReceived": EXPECTED_TTBR,
        "NServiceBus.ReplyToAddress": EXPECTED_REPLY_TO_ADDRESS,
        "NServiceBus.MessageId": message_id,
    }


def test_Does_not_send_extra_properties_in_payload_by_default() -> None:
    sqs = FakeSqs()
    operation = _operation(
        "address",
        "1234",
        _ttbr_reply_to("093C17C6-D32E-44FE-9134-65C10C1287EB"),
        consistency=ISOLATED,
    )

    _dispatcher(sqs).dispatch([operation])

    assert sqs.calls("send_message")[0]["MessageBody"] == DOES_NOT_SEND_EXTRA_PROPERTIES_APPROVED


def test_Includes_message_id_in_message_attributes_delayed() -> None:
    sqs = FakeSqs()

    _dispatcher(sqs).dispatch(
        [_operation("address", "1234", delay=timedelta(minutes=30), consistency=ISOLATED)]
    )

    (request,) = sqs.calls("send_message")
    assert request["MessageAttributes"]["NServiceBus.MessageId"]["StringValue"] == "1234"
    assert request["QueueUrl"] == "address-delay.fifo"
    assert request["MessageAttributes"]["NServiceBus.AmazonSQS.DelaySeconds"] == {
        "DataType": "String",
        "StringValue": "1800",
    }
    assert request["MessageGroupId"] == request["MessageDeduplicationId"] == "1234"
    # Sent as 0: SQS applies the FIFO delay queue's own 900 s (local_aws.moto.fifo_delay).
    assert request["DelaySeconds"] == 0


def test_Includes_message_id_in_message_attributes() -> None:
    sqs = FakeSqs()

    _dispatcher(sqs).dispatch([_operation("address", "1234", consistency=ISOLATED)])

    (request,) = sqs.calls("send_message")
    assert request["MessageAttributes"]["NServiceBus.MessageId"]["StringValue"] == "1234"
    assert request["QueueUrl"] == "address"


def test_Should_dispatch_isolated_unicast_operations() -> None:
    sqs = FakeSqs()

    _dispatcher(sqs).dispatch(
        [_operation("address1", consistency=ISOLATED), _operation("address2", consistency=ISOLATED)]
    )

    assert sqs.calls("send_message_batch") == []
    assert {request["QueueUrl"] for request in sqs.calls("send_message")} == {
        "address1",
        "address2",
    }


def test_Should_raise_queue_does_not_exists_for_delayed_delivery_for_isolated_dispatch() -> None:
    sqs = FakeSqs()
    sqs.failures["send_message"] = client_error("QueueDoesNotExist", "Queue does not exist")

    with pytest.raises(QueueDoesNotExistError) as refused:
        _dispatcher(sqs).dispatch(
            [_operation("address1", delay=timedelta(minutes=30), consistency=ISOLATED)]
        )

    assert str(refused.value) == (
        "Destination 'address1' doesn't support delayed messages longer than 00:15:00. To enable"
        " support for longer delays upgrade 'address1' endpoint to Version 6 of the transport or"
        " enable unrestricted delayed delivery."
    )


def test_Should_batch_non_isolated_unicast_operations() -> None:
    sqs = FakeSqs()

    _dispatcher(sqs).dispatch([_operation("address1"), _operation("address2")])

    assert sqs.calls("send_message") == []
    assert [batch["QueueUrl"] for batch in sqs.calls("send_message_batch")] == [
        "address1",
        "address2",
    ]


def test_Should_raise_queue_does_not_exists_for_delayed_delivery_for_non_isolated_dispatch() -> (
    None
):
    sqs = FakeSqs()
    sqs.failures["send_message_batch"] = client_error("QueueDoesNotExist", "Queue does not exist")

    with pytest.raises(QueueDoesNotExistError) as refused:
        _dispatcher(sqs).dispatch(
            [
                _operation("address1", delay=timedelta(minutes=30)),
                _operation("address1", delay=timedelta(minutes=30)),
            ]
        )

    assert str(refused.value).startswith(
        "Unable to send batch '1/1'. Destination 'address1' doesn't support delayed messages"
        " longer than"
    )


def test_Should_dispatch_non_batched_all_unicast_operations_that_failed_in_batch() -> None:
    sqs = FakeSqs()
    sqs.fail_batch_entry = lambda entry: (
        entry["MessageAttributes"]["NServiceBus.MessageId"]["StringValue"] in {"F1", "F2"}
    )

    _dispatcher(sqs).dispatch(
        [
            _operation("address1", "F1"),
            _operation("address1", "S1"),
            _operation("address2", "S2"),
            _operation("address2", "F2"),
        ]
    )

    batches = sqs.calls("send_message_batch")
    assert [
        {
            entry["MessageAttributes"]["NServiceBus.MessageId"]["StringValue"]
            for entry in batch["Entries"]
        }
        for batch in batches
    ] == [{"F1", "S1"}, {"F2", "S2"}]
    assert [
        request["MessageAttributes"]["NServiceBus.MessageId"]["StringValue"]
        for request in sqs.calls("send_message")
    ] == ["F1", "F2"]


def test_Should_base64_encode_by_default() -> None:
    sqs = FakeSqs()
    headers = _ttbr_reply_to("id")
    del headers["NServiceBus.MessageId"]

    _dispatcher(sqs).dispatch(
        [_operation("address", "1234", headers, b"my message body", consistency=ISOLATED)]
    )

    body = json.loads(sqs.calls("send_message")[0]["MessageBody"])
    assert body["Body"] == "bXkgbWVzc2FnZSBib2R5"


def test_Should_not_wrap_if_configured_not_to() -> None:
    sqs = FakeSqs()
    operation = _operation(
        "address",
        "1234",
        _ttbr_reply_to("74d4f8e4-0fc7-4f09-8d46-0b76994e76d6"),
        b"my message body",
        consistency=ISOLATED,
    )

    _dispatcher(sqs, wrap=False).dispatch([operation])

    (request,) = sqs.calls("send_message")
    assert request == SHOULD_NOT_WRAP_APPROVED
    assert list(request["MessageAttributes"]) == list(SHOULD_NOT_WRAP_APPROVED["MessageAttributes"])


@pytest.mark.parametrize("wrap", [True, False])
def test_Should_handle_empty_body_gracefully(wrap: bool) -> None:
    sqs = FakeSqs()

    _dispatcher(sqs, wrap=wrap).dispatch(
        [_operation("Somewhere", "the-id", {"NServiceBus.MessageId": "the-id"}, b"")]
    )

    (batch,) = sqs.calls("send_message_batch")
    body = batch["Entries"][0]["MessageBody"]
    assert body == (
        '{"Body":"empty message","S3BodyKey":null,"Headers":{"NServiceBus.MessageId":"the-id"}}'
        if wrap
        else "empty message"
    )


# What no upstream unit test pins.


def _received(attributes: dict[str, dict[str, str]]) -> dict[str, Any]:
    return {"MessageId": "native", "Body": "{}", "MessageAttributes": attributes}


def test_the_received_native_attributes_are_carried_over_when_the_ids_match() -> None:
    sqs = FakeSqs()
    incoming = _received(
        {
            "NServiceBus.MessageId": {"DataType": "String", "StringValue": "incoming"},
            "SomethingRandom": {"DataType": "String", "StringValue": "bla"},
            "MessageTypeFullName": {"DataType": "String", "StringValue": "Type"},
            "S3BodyKey": {"DataType": "String", "StringValue": "key"},
        }
    )

    _dispatcher(sqs).dispatch(
        [_operation("error", "incoming"), _operation("other", "new-id")],
        TransportTransaction(incoming, "incoming"),
    )

    error, other = (batch["Entries"][0] for batch in sqs.calls("send_message_batch"))
    assert error["MessageAttributes"] == {
        "NServiceBus.MessageId": {"DataType": "String", "StringValue": "incoming"},
        "SomethingRandom": {"DataType": "String", "StringValue": "bla"},
    }
    assert other["MessageAttributes"] == {
        "NServiceBus.MessageId": {"DataType": "String", "StringValue": "new-id"}
    }


def test_a_stale_headers_attribute_survives_a_wrapped_carry_over() -> None:
    """Section 3.7: an unwrapped incoming message moved by a wrapped endpoint keeps its old
    headers attribute next to the new envelope, and a reader then takes the attribute branch."""
    sqs = FakeSqs()
    stale = {"DataType": "String", "StringValue": '{"NServiceBus.MessageId":"incoming"}'}
    incoming = _received({"NServiceBus.AmazonSQS.Headers": stale})

    _dispatcher(sqs).dispatch(
        [_operation("error", "incoming")], TransportTransaction(incoming, "incoming")
    )

    entry = sqs.calls("send_message_batch")[0]["Entries"][0]
    assert entry["MessageAttributes"]["NServiceBus.AmazonSQS.Headers"] == stale
    assert entry["MessageBody"].startswith('{"Body":')


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b"plain text", "plain text"),
        ("café".encode(), "café"),
        ("😀".encode(), "8J+YgA=="),
        (b"a\x00b", "YQBi"),
        (b"\xff", "\ufffd"),
    ],
)
def test_the_unwrapped_body_is_text_unless_sqs_would_refuse_a_character(
    body: bytes, expected: str
) -> None:
    sqs = FakeSqs()

    _dispatcher(sqs, wrap=False).dispatch([_operation("address", body=body, consistency=ISOLATED)])

    assert sqs.calls("send_message")[0]["MessageBody"] == expected


def test_the_wrapped_body_escapes_as_system_text_json_does() -> None:
    sqs = FakeSqs()
    headers: dict[str, str | None] = {
        "NServiceBus.MessageId": "id",
        "h": "é<>&'`+\"\\\n\u007f😀",
        "n": None,
    }

    _dispatcher(sqs).dispatch(
        [_operation("address", "id", headers, b"\xfb\xff", consistency=ISOLATED)]
    )

    assert sqs.calls("send_message")[0]["MessageBody"] == (
        '{"Body":"\\u002B/8=","S3BodyKey":null,"Headers":{"NServiceBus.MessageId":"id",'
        '"h":"\\u00E9\\u003C\\u003E\\u0026\\u0027\\u0060\\u002B\\u0022\\\\\\n\\u007F'
        '\\uD83D\\uDE00","n":null}}'
    )


def test_a_missing_destination_is_reported_with_the_transports_message() -> None:
    sqs = FakeSqs()
    sqs.missing_queues.add("Nowhere")

    with pytest.raises(QueueDoesNotExistError, match=r"^Queue `Nowhere` doesn't exist$"):
        _dispatcher(sqs).dispatch([_operation("Nowhere")])


def test_a_missing_delay_queue_is_the_services_own_error_at_lookup() -> None:
    sqs = FakeSqs()
    sqs.missing_queues.add("Later-delay.fifo")

    with pytest.raises(QueueDoesNotExistError, match=r"The specified queue does not exist\."):
        _dispatcher(sqs).dispatch([_operation("Later", delay=timedelta(seconds=901))])


@pytest.mark.parametrize(
    ("delay", "queue", "delay_seconds"),
    [
        (timedelta(seconds=0.5), "address", 1),
        (timedelta(seconds=900), "address", 900),
        (timedelta(seconds=900.000001), "address-delay.fifo", 0),
    ],
)
def test_delays_round_up_and_over_15_minutes_go_to_the_delay_queue(
    delay: timedelta, queue: str, delay_seconds: int
) -> None:
    sqs = FakeSqs()

    _dispatcher(sqs).dispatch([_operation("address", delay=delay, consistency=ISOLATED)])

    (request,) = sqs.calls("send_message")
    assert (request["QueueUrl"], request.get("DelaySeconds", 0)) == (queue, delay_seconds)


def test_do_not_deliver_before_counts_from_the_clock() -> None:
    sqs = FakeSqs()
    now = datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)
    dispatcher = MessageDispatcher(sqs, QueueCache(sqs, get_sqs_queue_name, ""), clock=lambda: now)
    operation = TransportOperation(
        OutgoingMessage("id", {}, b"{}"),
        "address",
        DispatchProperties(do_not_deliver_before=now + timedelta(seconds=42)),
        ISOLATED,
    )

    dispatcher.dispatch([operation])

    assert sqs.calls("send_message")[0]["DelaySeconds"] == 42


def test_time_to_be_received_is_a_header_of_the_wrapped_form_only() -> None:
    sqs = FakeSqs()
    ttbr = TimeSpan.of(timedelta(seconds=90))
    for wrap in (True, False):
        operation = TransportOperation(
            OutgoingMessage("id", {"NServiceBus.MessageId": "id"}, b"{}"),
            "address",
            DispatchProperties(discard_if_not_received_before=ttbr),
            ISOLATED,
        )
        _dispatcher(sqs, wrap=wrap).dispatch([operation])

    wrapped, unwrapped = sqs.calls("send_message")
    assert '"NServiceBus.AmazonSQS.TimeToBeReceived":"00:01:30"' in wrapped["MessageBody"]
    assert unwrapped["MessageAttributes"]["NServiceBus.AmazonSQS.Headers"]["StringValue"] == (
        '{"NServiceBus.MessageId":"id"}'
    )


def test_over_one_mebibyte_without_s3_is_refused() -> None:
    sqs = FakeSqs()

    with pytest.raises(LargeMessageError, match="no S3 bucket was configured"):
        _dispatcher(sqs).dispatch([_operation("address", body=b"x" * 800_000)])

    assert sqs.calls("send_message_batch") == []
