"""Outbound then inbound: the receiver sees the ARN exactly where the sender had its address."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import event, given, settings
from hypothesis import strategies as st

from cross_account_runtime.nservicebus.arn_header import (
    ARN_HEADER,
    UnencodableEntryError,
    decode,
    encode,
)
from cross_account_runtime.nservicebus.wire_format import HEADERS_ATTRIBUTE, read_headers
from cross_account_runtime.relay.decision import DecisionKind, relay_message
from tests.runtime.relay.conftest import (
    BILLING_INGRESS_ARN,
    SALES_ARN,
    headers_attribute,
    inbound_config,
    lambda_attribute,
    outbound_config,
    sqs_record,
    wrapped_body,
)

LOCAL_ADDRESS = "Sales"

# Names made of the separators and their escapes are where encoding can go wrong.
header_names = (
    st.text(alphabet="ab=;.\u00e9", min_size=1, max_size=8) | st.text(min_size=1, max_size=20)
).filter(lambda name: name != ARN_HEADER)
other_values = st.text(max_size=30).filter(lambda value: value != LOCAL_ADDRESS)


@st.composite
def headers_and_carriers(draw: st.DrawFn) -> tuple[dict[str, str], list[str]]:
    """NServiceBus headers, some of which carry the local address, and those names in order."""
    headers = {"NServiceBus.MessageId": draw(st.uuids()).hex}
    for name in draw(st.lists(header_names, max_size=8, unique=True)):
        headers[name] = LOCAL_ADDRESS if draw(st.booleans()) else draw(other_values)
    carriers = [name for name, value in headers.items() if value == LOCAL_ADDRESS]
    return headers, carriers


def record_as_received(request: dict[str, Any], source: str) -> dict[str, Any]:
    """The Lambda record for a message sent with ``request`` and received from ``source``."""
    attributes = {
        name: lambda_attribute(
            attribute["DataType"], attribute.get("StringValue", attribute.get("BinaryValue"))
        )
        for name, attribute in request.get("MessageAttributes", {}).items()
    }
    return sqs_record(request["MessageBody"], source=source, message_attributes=attributes)


@settings(max_examples=150, deadline=None)
@given(headers_and_carriers(), st.sampled_from(["wrapped", "attribute"]), st.text(max_size=50))
def test_the_round_trip_substitutes_exactly_the_headers_that_carried_the_local_address(
    headers_carriers: tuple[dict[str, str], list[str]], form: str, payload: str
) -> None:
    headers, carriers = headers_carriers
    if form == "wrapped":
        record = sqs_record(wrapped_body(headers, payload))
    else:
        record = sqs_record(
            json.dumps(payload), message_attributes={HEADERS_ATTRIBUTE: headers_attribute(headers)}
        )

    outbound = relay_message(record, outbound_config())

    if outbound.kind == DecisionKind.UNSTAMPABLE_HEADER:
        # Only when the ARN header truly cannot list those names.
        try:
            encode(dict.fromkeys(carriers, SALES_ARN))
        except UnencodableEntryError:
            event("refused: a carrying header name the ARN header cannot list")
            return
        raise AssertionError(f"refused although encodable: {outbound.reason}")
    assert outbound.kind == DecisionKind.FORWARDED
    assert outbound.request is not None
    event(f"headers carrying the local address: {'none' if not carriers else 'some'}")

    inbound = relay_message(
        record_as_received(outbound.request, BILLING_INGRESS_ARN), inbound_config()
    )

    assert inbound.kind == DecisionKind.FORWARDED
    assert inbound.request is not None
    delivered = read_headers(record_as_received(inbound.request, BILLING_INGRESS_ARN))
    expected = {name: SALES_ARN if name in carriers else value for name, value in headers.items()}
    assert {name: value for name, value in delivered.items() if name != ARN_HEADER} == expected
    if carriers:
        assert decode(delivered[ARN_HEADER]) == dict.fromkeys(carriers, SALES_ARN)
    else:
        assert ARN_HEADER not in delivered
    assert set(inbound.rewritten_headers) == set(carriers)
    if form == "wrapped":
        sent = json.loads(inbound.request["MessageBody"])
        assert {k: v for k, v in sent.items() if k != "Headers"} == {
            k: v for k, v in json.loads(record["body"]).items() if k != "Headers"
        }
    else:
        assert inbound.request["MessageBody"] == record["body"]
