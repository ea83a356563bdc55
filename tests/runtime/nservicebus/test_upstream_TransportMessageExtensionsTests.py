"""The vectors of NServiceBus.AmazonSQS 9.1.1's ``TransportMessageExtensionsTests``
(``RetrieveBody`` without S3): an empty or null payload is sent as ``empty message`` and
received as no bytes."""

from __future__ import annotations

import json

from cross_account_runtime.nservicebus.dispatch import wrapped_message
from cross_account_runtime.nservicebus.wire_reading import TransportView, read_message


def received(body: str) -> TransportView:
    return read_message({"MessageId": "sqs", "Body": body})


def test_Empty_body_is_received_ok() -> None:
    body = wrapped_message("id", {}, b"")["MessageBody"]
    assert isinstance(body, str)
    view = received(body)
    assert view.body == "empty message"
    assert view.body_bytes() == b""


def test_Null_body_is_received_ok() -> None:
    """A null body has length 0 and is sent as ``empty message`` too."""
    body = wrapped_message("id", {}, b"")["MessageBody"]
    assert isinstance(body, str)
    assert json.loads(body)["Body"] == "empty message"
    assert received(body).body_bytes() == b""


def test_Empty_message_string_body_is_received_as_empty() -> None:
    assert TransportView("wrapped", {}, "empty message", None).body_bytes() == b""
