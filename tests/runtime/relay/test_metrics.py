"""Each batch writes one embedded-metric-format line: the core counts, zeros included, every
outcome it logged and every reason it dead-lettered a message, under the relay's service and
direction; a batch of many messages still writes one small line."""

from __future__ import annotations

import io
from collections.abc import Mapping

from cross_account_runtime.common.emf import metrics_line
from cross_account_runtime.common.json_log import JsonLogger
from cross_account_runtime.nservicebus.wire_format import HEADERS_ATTRIBUTE
from cross_account_runtime.relay.processor import Relay
from tests.runtime.common.test_emf import spec_problems
from tests.runtime.relay.conftest import (
    BILLING_INGRESS_ARN,
    LambdaContext,
    RecordingSend,
    good_record,
    headers_attribute,
    inbound_config,
    outbound_config,
    poison_record,
    request_headers,
    sqs_event,
    sqs_record,
    wrapped_body,
)
from tests.runtime.relay.test_processor import SENT, TTBR

Written = list[tuple[dict[str, str], dict[str, int]]]


def relay_writing_to(written: Written) -> Relay:
    def keep(dimensions: Mapping[str, str], counts: Mapping[str, int]) -> None:
        written.append((dict(dimensions), dict(counts)))

    return Relay(
        outbound_config(),
        send_batch=RecordingSend(),
        logger=JsonLogger("sqs-relay", stream=io.StringIO()),
        clock=lambda: SENT + 60,
        metrics=keep,
    )


def test_a_batch_of_every_outcome_is_counted_in_one_line() -> None:
    written: Written = []
    unrouted = "arn:aws:sqs:us-east-1:111111111111:Unrouted"
    records = [
        good_record(),
        good_record(),
        poison_record(message_id="poison-1"),
        sqs_record(wrapped_body(request_headers(**{TTBR: "00:00:30"}))),
        good_record(source=unrouted),
    ]

    relay_writing_to(written)(sqs_event(*records), LambdaContext())

    ((dimensions, counts),) = written
    assert dimensions == {"Service": "sqs-relay", "Direction": "outbound"}
    assert counts == {
        "Records": 5,
        "Forwarded": 2,
        "DeadLettered": 1,
        "Expired": 1,
        "Failed": 1,
        "SendRequests": 2,
        "Refused": 1,
        "DeadLettered.MalformedArnHeader": 1,
    }
    assert spec_problems(metrics_line(dimensions, counts)) == []


def test_a_quiet_batch_still_writes_the_core_counts() -> None:
    written: Written = []

    relay_writing_to(written)(sqs_event(good_record()), LambdaContext())

    ((_, counts),) = written
    assert counts == {
        "Records": 1,
        "Forwarded": 1,
        "DeadLettered": 0,
        "Expired": 0,
        "Failed": 0,
        "SendRequests": 1,
    }


def test_a_large_batch_writes_one_line_no_longer_than_a_small_ones() -> None:
    written: Written = []
    relay = relay_writing_to(written)

    relay(sqs_event(good_record()), LambdaContext())
    relay(sqs_event(*[good_record() for _ in range(500)]), LambdaContext())

    (small, large) = [metrics_line(dimensions, counts) for dimensions, counts in written]
    assert written[1][1]["Forwarded"] == 500
    # Only the counts' digits differ.
    assert len(large) - len(small) <= len("500") * 3


def test_messages_converted_to_their_receivers_form_are_counted() -> None:
    """A wrapped message from Sales delivered to an endpoint that does not wrap is converted;
    one in the receiver's own form is not."""
    written: Written = []
    relay = Relay(
        inbound_config("arn", form="attribute"),
        send_batch=RecordingSend(),
        logger=JsonLogger("sqs-relay", stream=io.StringIO()),
        clock=lambda: SENT + 60,
        metrics=lambda d, c: written.append((dict(d), dict(c))),
    )
    headers = request_headers()
    converted = sqs_record(wrapped_body(headers), source=BILLING_INGRESS_ARN)
    kept = sqs_record(
        '{"OrderId":42}',
        source=BILLING_INGRESS_ARN,
        message_attributes={HEADERS_ATTRIBUTE: headers_attribute(headers)},
    )

    relay(sqs_event(converted, kept), LambdaContext())

    ((dimensions, counts),) = written
    assert dimensions["Direction"] == "inbound"
    assert (counts["Forwarded"], counts["FormsConverted"]) == (2, 1)
