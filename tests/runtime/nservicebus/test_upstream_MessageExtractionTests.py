"""The 88 cases of NServiceBus.AmazonSQS 9.1.1's ``MessageExtractionTests.ExtractsMessageCorrectly``
(``InputQueuePump.ExtractTransportMessage``), built the way the upstream test builds them, and
each also read with the message-id override production uses.

The upstream builder: a native message with the SQS id ``Native message Id`` and attributes
whose ``DataType`` is unset; the "attribute headers" of a case are serialized (compact,
insertion order) into a ``NServiceBus.AmazonSQS.Headers`` attribute added last. Cases run for
message id in an attribute or not x in the NServiceBus headers or not x body in S3 or on the
message (outer to inner), 11 cases each. The test passes ``ExtractMessageId(message)`` as the
override (the ``NServiceBus.MessageId`` attribute if there is one), while ``ProcessMessage``
passes the SQS message id: the second test here checks that, where it differs in 8 cases.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

import pytest

from cross_account_runtime.nservicebus.wire_format import HEADERS_ATTRIBUTE, WireFormatError
from cross_account_runtime.nservicebus.wire_reading import TransportView, read_message

NATIVE_ID = "Native message Id"
ATTRIBUTE_ID = "NSB Message Id passed via message attribute"
HEADERS_ID = "NSB Message Id passed via headers"
MESSAGE_ID = "NServiceBus.MessageId"
TTBR = "NServiceBus.AmazonSQS.TimeToBeReceived"
ENCLOSED = "NServiceBus.EnclosedMessageTypes"
MAX_TTBR = "10675199.02:48:05.4775807"


class Case:
    """One upstream case: the message, and what the transport extracts from it."""

    def __init__(
        self,
        name: str,
        attributes: dict[str, str],
        body: str | None,
        *,
        form: str,
        headers: dict[str, str | None] | None = None,
        expected_body: str | None = None,
        s3_body_key: str | None = None,
        production_id: str | None = None,
    ) -> None:
        self.name = name
        self.message: dict[str, object] = {
            "MessageId": NATIVE_ID,
            "Body": body,
            "MessageAttributes": {key: {"StringValue": value} for key, value in attributes.items()},
        }
        self.form = form
        self.headers = headers
        self.expected_body = expected_body
        self.s3_body_key = s3_body_key
        self.production_id = production_id


def _dumps(value: object) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _cases() -> list[Case]:
    cases: list[Case] = []
    for id_in_attribute in (True, False):
        for id_in_headers in (True, False):
            for in_s3 in (True, False):
                suffix = (
                    " - Message Id "
                    + ("in" if id_in_attribute else "NOT in")
                    + " message attribute - Message Id "
                    + ("in" if id_in_headers else "NOT in")
                    + " NSB headers - "
                    + ("body in S3" if in_s3 else "body on message")
                )
                base = {MESSAGE_ID: ATTRIBUTE_ID} if id_in_attribute else {}
                # "Last in wins": the id the upstream builder expects unless a case says.
                builder_id = (
                    HEADERS_ID if id_in_headers else ATTRIBUTE_ID if id_in_attribute else NATIVE_ID
                )

                def case(
                    name: str,
                    attributes: dict[str, str],
                    body: str | None,
                    form: str,
                    headers: Mapping[str, str | None] | None = None,
                    *,
                    expected_body: str | None = None,
                    s3_body_key: str | None = None,
                    message_id: str | None = None,
                    production_id: str | None = None,
                    suffix: str = suffix,
                    base: dict[str, str] = base,
                    builder_id: str = builder_id,
                ) -> None:
                    expected: dict[str, str | None] | None = None
                    if headers is not None:
                        expected = {MESSAGE_ID: message_id or builder_id, **headers}
                    cases.append(
                        Case(
                            name + suffix,
                            base | attributes,
                            body,
                            form=form,
                            headers=expected,
                            expected_body=expected_body,
                            s3_body_key=s3_body_key,
                            production_id=production_id
                            or (expected[MESSAGE_ID] if expected else None),
                        )
                    )

                for name, body in (
                    ("Non-JSON message", "Body Contents"),
                    ("JSON without headers", "{}"),
                    ("JSON without headers property with wrong type", '{ "Headers" : 6 }'),
                    ("JSON with additional properties", '{ "Headers" : {}, "Unexpected" : null}'),
                    ("JSON with empty headers", '{ "Headers" : {} }'),
                    (
                        "JSON with unrecognized headers",
                        '{ "Headers" : { "SomeHeader" : "some value"} }',
                    ),
                ):
                    case(name, {}, body, "native", {}, expected_body=body, message_id=NATIVE_ID)

                in_json: dict[str, str] = {"SomeKey": "SomeValue"}
                attributes: dict[str, str] = {}
                if in_s3:
                    in_json["S3BodyKey"] = "Will be overwritten"
                    attributes["S3BodyKey"] = "S3 Body Key"
                if id_in_headers:
                    in_json[MESSAGE_ID] = HEADERS_ID
                attributes[HEADERS_ATTRIBUTE] = _dumps(in_json)
                raw_body = None if in_s3 else "Body Contents"
                case(
                    "Transport headers in message attribute",
                    attributes,
                    raw_body,
                    "attribute",
                    {"SomeKey": "SomeValue"} | ({"S3BodyKey": "S3 Body Key"} if in_s3 else {}),
                    expected_body=raw_body,
                    s3_body_key="S3 Body Key" if in_s3 else None,
                    production_id=HEADERS_ID if id_in_headers else NATIVE_ID,
                )
                case(
                    "Corrupted headers in message attribute",
                    {HEADERS_ATTRIBUTE: "NOT JSON DICTIONARY"},
                    None,
                    "poison",
                )
                case(
                    "Preserve message ID from transport headers in message attribute",
                    {HEADERS_ATTRIBUTE: _dumps({MESSAGE_ID: HEADERS_ID})},
                    "Body Contents",
                    "attribute",
                    {},
                    expected_body="Body Contents",
                    message_id=HEADERS_ID,
                )
                attributes = {"MessageTypeFullName": "Message type full name"}
                if in_s3:
                    attributes["S3BodyKey"] = "S3 body key"
                case(
                    "Message type in message attributes",
                    attributes,
                    raw_body,
                    "native",
                    {
                        "MessageTypeFullName": "Message type full name",
                        ENCLOSED: "Message type full name",
                    }
                    | ({"S3BodyKey": "S3 body key"} if in_s3 else {}),
                    expected_body=raw_body,
                    s3_body_key="S3 body key" if in_s3 else None,
                    message_id=ATTRIBUTE_ID if id_in_attribute else NATIVE_ID,
                    production_id=NATIVE_ID,
                )
                wrapped_headers = {MESSAGE_ID: HEADERS_ID} if id_in_headers else {}
                wrapped_headers[ENCLOSED] = "Enclosed message type"
                serialized = _dumps(
                    {
                        "Headers": wrapped_headers,
                        "Body": None if in_s3 else "Body Contents",
                        "S3BodyKey": "S3 Body Key" if in_s3 else None,
                        "TimeToBeReceived": MAX_TTBR,
                        "ReplyToAddress": None,
                    }
                )
                case(
                    "Serialized transport message",
                    {},
                    serialized,
                    "wrapped",
                    {TTBR: MAX_TTBR, ENCLOSED: "Enclosed message type"},
                    expected_body=None if in_s3 else "Body Contents",
                    s3_body_key="S3 Body Key" if in_s3 else None,
                    production_id=HEADERS_ID if id_in_headers else NATIVE_ID,
                )
    return cases


CASES = _cases()


def extract_message_id(message: dict[str, object]) -> str:
    """``InputQueuePump.ExtractMessageId``: the ``NServiceBus.MessageId`` attribute's text if
    there is one, else the SQS message id (what the upstream test passes as the override)."""
    attributes = message["MessageAttributes"]
    assert isinstance(attributes, dict)
    if MESSAGE_ID in attributes:
        text: str = attributes[MESSAGE_ID]["StringValue"]
        return text
    return NATIVE_ID


def assert_extracted(view: TransportView, case: Case, headers: dict[str, str | None]) -> None:
    assert view.headers == headers
    assert view.body == case.expected_body
    assert view.s3_body_key == case.s3_body_key
    assert view.form == case.form


def test_there_are_88_cases_with_the_upstream_names() -> None:
    assert len(CASES) == 88
    assert len({case.name for case in CASES}) == 88
    assert CASES[0].name == (
        "Non-JSON message - Message Id in message attribute - Message Id in NSB headers - body in S3"
    )


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_ExtractsMessageCorrectly(case: Case) -> None:
    if case.form == "poison":
        with pytest.raises(WireFormatError, match="is not JSON"):
            read_message(case.message, extract_message_id(case.message))
        return
    assert case.headers is not None
    view = read_message(case.message, extract_message_id(case.message))
    assert_extracted(view, case, case.headers)


PRODUCTION_DIFFERS = [
    case
    for case in CASES
    if case.headers is not None and case.production_id != case.headers[MESSAGE_ID]
]


def test_eight_cases_differ_with_the_override_production_passes() -> None:
    """Cases 10, 21, 29, 32, 33, 40, 43, 44 of the upstream order: the message id is in an
    attribute and the NServiceBus headers do not override it (or the type is native)."""
    assert [CASES.index(case) + 1 for case in PRODUCTION_DIFFERS] == [
        10,
        21,
        29,
        32,
        33,
        40,
        43,
        44,
    ]
    assert {case.production_id for case in PRODUCTION_DIFFERS} == {NATIVE_ID}


@pytest.mark.parametrize(
    "case",
    [case for case in CASES if case.form != "poison"],
    ids=[case.name for case in CASES if case.form != "poison"],
)
def test_ExtractsMessageCorrectly_with_the_production_override(case: Case) -> None:
    """``ProcessMessage`` passes the SQS message id, the default of ``read_message``."""
    assert case.headers is not None
    view = read_message(case.message)
    assert_extracted(view, case, case.headers | {MESSAGE_ID: case.production_id})
