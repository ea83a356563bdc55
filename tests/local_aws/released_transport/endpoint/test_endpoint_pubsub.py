"""What a released endpoint puts around a publish and what reaches its handlers (NServiceBus 10.2.5
``MessageOperations.cs``, ``OpenTelemetryPublishBehavior.cs``, ``SerializeMessageConnector.cs``,
``MigrationModePublishConnector.cs``, ``DeserializeMessageConnector.cs``), on the test doubles."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from local_aws.released_transport.core.outgoing import (
    MulticastTransportOperation,
    TransportOperation,
)
from local_aws.released_transport.core.subscription_storage import MessageType, Subscriber
from local_aws.released_transport.endpoint.released_endpoint import (
    NoSnsClientError,
    ReleasedEndpoint,
)
from local_aws.released_transport.endpoint.settings import (
    EndpointSettings,
    MessageDrivenPubSubCompatibility,
)
from local_aws.released_transport.transport.receiving.input_pump import MessageFate
from local_aws.released_transport.transport.sending.dispatcher import PublishNotConfiguredError
from tests.local_aws.released_transport.fake_sns import FakeSns
from tests.local_aws.released_transport.fake_sqs import FakeSqs

EVENT = (
    "Sales.Events.OrderPlaced, Sales.Events, Version=1.0.0.0, Culture=neutral, PublicKeyToken=null"
)
BASE = (
    "Sales.Events.IOrderEvent, Sales.Events, Version=1.0.0.0, Culture=neutral, PublicKeyToken=null"
)
NOW = datetime(2024, 5, 6, 7, 8, 9, tzinfo=UTC)


def _settings(**overrides: Any) -> EndpointSettings:
    return EndpointSettings(
        queue_name_prefix="DEV-",
        wait_time_seconds=0,
        machine_name="m",
        clock=lambda: NOW,
        **overrides,
    )


def test_a_publish_carries_the_publish_headers_and_the_hierarchy() -> None:
    sales = ReleasedEndpoint("Sales", FakeSqs(), _settings(), sns=FakeSns())

    (operation,) = sales.publish_operations(EVENT, b"{}", hierarchy=[BASE], headers={"custom": "1"})

    assert isinstance(operation, MulticastTransportOperation)
    assert operation.message_type == "Sales.Events.OrderPlaced"
    headers = operation.message.headers
    assert headers["NServiceBus.MessageIntent"] == "Publish"
    assert headers["NServiceBus.OpenTelemetry.StartNewTrace"] == "True"
    assert headers["NServiceBus.EnclosedMessageTypes"] == f"{EVENT};{BASE}"
    assert headers["NServiceBus.ReplyToAddress"] == "DEV-Sales"
    assert headers["NServiceBus.OriginatingEndpoint"] == "Sales"
    assert headers["NServiceBus.TimeSent"] == "2024-05-06 07:08:09:000000 Z"
    assert headers["custom"] == "1"


def test_in_the_compatibility_mode_the_copies_share_the_message_and_follow_the_hierarchy() -> None:
    mode = MessageDrivenPubSubCompatibility()
    sales = ReleasedEndpoint(
        "Sales", FakeSqs(), _settings(message_driven_pub_sub=mode), sns=FakeSns()
    )
    assert sales.subscription_storage is not None
    sales.subscription_storage.subscribe(
        Subscriber("DEV-Billing", "Billing"), MessageType("Sales.Events.IOrderEvent")
    )

    multicast, copy = sales.publish_operations(EVENT, b"{}", hierarchy=[BASE])

    assert isinstance(copy, TransportOperation)
    assert copy.destination == "DEV-Billing"
    assert copy.message is multicast.message


def test_publishing_or_subscribing_needs_an_sns_client() -> None:
    sales = ReleasedEndpoint("Sales", FakeSqs(), _settings())

    with pytest.raises(PublishNotConfiguredError):
        sales.publish(EVENT, b"{}")
    with pytest.raises(NoSnsClientError):
        sales.subscribe(EVENT)


def _control_message(extra: dict[str, str]) -> dict[str, Any]:
    headers = {"NServiceBus.MessageId": "id", "NServiceBus.ControlMessage": "true", **extra}
    return {
        "MessageId": "native",
        "ReceiptHandle": "receipt",
        "Body": json.dumps({"Body": "empty message", "S3BodyKey": None, "Headers": headers}),
        "MessageAttributes": {},
        "Attributes": {"SentTimestamp": "1", "ApproximateReceiveCount": "1"},
    }


@pytest.mark.parametrize(
    "extra",
    [{}, {"NServiceBus.MessageIntent": "Subscribe", "SubscriptionMessageType": EVENT}],
)
def test_a_control_message_reaches_no_handler(extra: dict[str, str]) -> None:
    sqs = FakeSqs()
    sqs.received.append([_control_message(extra)])
    billing = ReleasedEndpoint(
        "Billing", sqs, _settings(disable_unrestricted_delayed_delivery=True)
    )
    billing.start()

    (outcome,) = billing.process(lambda _context: pytest.fail("no handler"))

    assert outcome.pump.fate is MessageFate.PROCESSED
    assert sqs.calls("delete_message")
