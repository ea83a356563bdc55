"""Outbound then inbound: only address headers change, and each leads back to its queue.

Whatever headers a message carries, the outbound relay lists in the ARN header exactly the
address headers that named the sender's queue, and then either an ARN-aware receiver finds the
queue's ARN there (and substitutes it itself), or a released receiver finds those headers
translated to the name that leads back from its account; every other header, endpoint names
included, arrives as it was sent.
"""

from __future__ import annotations

import json

from hypothesis import event, given, settings
from hypothesis import strategies as st

from cross_account_runtime.nservicebus.address_headers import (
    ADDRESS_HEADERS,
    ENDPOINT_NAME_HEADERS,
)
from cross_account_runtime.nservicebus.arn_header import (
    ARN_HEADER,
    decode,
    substitute_incoming,
)
from cross_account_runtime.nservicebus.wire_format import HEADERS_ATTRIBUTE
from cross_account_runtime.nservicebus.wire_reading import read_headers
from cross_account_runtime.relay.core import relay_message
from cross_account_runtime.relay.decision import DecisionKind
from tests.runtime.relay.conftest import (
    BILLING_INGRESS_ARN,
    SALES_ARN,
    headers_attribute,
    inbound_config,
    outbound_config,
    record_as_received,
    sqs_record,
    wrapped_body,
)

LOCAL_ADDRESS = "Sales"

header_names = (
    st.sampled_from(sorted(ADDRESS_HEADERS | ENDPOINT_NAME_HEADERS))
    | st.text(alphabet="ab=;.\u00e9", min_size=1, max_size=8)
    | st.text(min_size=1, max_size=20)
).filter(lambda name: name != ARN_HEADER)
other_values = st.text(max_size=30).filter(
    lambda value: value != LOCAL_ADDRESS and not value.startswith("arn:")
)


@st.composite
def headers_and_carriers(draw: st.DrawFn) -> tuple[dict[str, str], list[str]]:
    """NServiceBus headers, some carrying the local address, and the address headers among
    them, in order."""
    headers = {"NServiceBus.MessageId": draw(st.uuids()).hex}
    for name in draw(st.lists(header_names, max_size=8, unique=True)):
        headers[name] = LOCAL_ADDRESS if draw(st.booleans()) else draw(other_values)
    carriers = [
        name
        for name, value in headers.items()
        if value == LOCAL_ADDRESS and name in ADDRESS_HEADERS
    ]
    return headers, carriers


@settings(max_examples=150, deadline=None)
@given(
    headers_and_carriers(),
    st.sampled_from(["wrapped", "attribute"]),
    st.sampled_from(["arn", "name", "name, Sales unreachable"]),
    st.text(max_size=50),
)
def test_only_the_address_headers_that_named_the_sender_change_and_they_lead_back(
    headers_carriers: tuple[dict[str, str], list[str]], form: str, receiver: str, payload: str
) -> None:
    headers, carriers = headers_carriers
    if form == "wrapped":
        record = sqs_record(wrapped_body(headers, payload))
    else:
        record = sqs_record(
            json.dumps(payload), message_attributes={HEADERS_ATTRIBUTE: headers_attribute(headers)}
        )

    outbound = relay_message(record, outbound_config())

    assert outbound.kind == DecisionKind.FORWARDED
    assert outbound.request is not None
    event(f"address headers naming the sender: {'none' if not carriers else 'some'}")
    sent = record_as_received(outbound.request, BILLING_INGRESS_ARN)

    reachable = () if receiver == "name, Sales unreachable" else (SALES_ARN,)
    inbound = relay_message(sent, inbound_config(receiver.partition(",")[0], reachable, form=form))

    assert inbound.kind == DecisionKind.FORWARDED
    assert inbound.request is not None
    delivered = read_headers(record_as_received(inbound.request, BILLING_INGRESS_ARN))
    if carriers:
        assert decode(delivered[ARN_HEADER]) == dict.fromkeys(carriers, SALES_ARN)
    else:
        assert ARN_HEADER not in delivered
    if receiver == "arn":
        # The endpoint substitutes the ARN header itself.
        assert inbound.request["MessageBody"] == sent["body"]
        arrived = substitute_incoming(delivered)
        translated_to = SALES_ARN
    elif reachable:
        # "Sales" resolves, in Billing's account, to the shadow that leads to Sales.
        arrived = delivered
        translated_to = LOCAL_ADDRESS
        assert inbound.rewritten_headers == ()
    else:
        # No name leads there: the ARN, which no name lookup can mistake for another queue.
        arrived = delivered
        translated_to = SALES_ARN
        assert set(inbound.rewritten_headers) == set(carriers)
        assert set(inbound.unreachable_headers) == set(carriers)
    expected = {
        name: translated_to if name in carriers else value for name, value in headers.items()
    }
    assert {name: value for name, value in arrived.items() if name != ARN_HEADER} == expected
    if form == "wrapped":
        body = json.loads(inbound.request["MessageBody"])
        assert {k: v for k, v in body.items() if k != "Headers"} == {
            k: v for k, v in json.loads(record["body"]).items() if k != "Headers"
        }
    else:
        assert inbound.request["MessageBody"] == record["body"]
