"""The seed's ARN-aware ("New") endpoint's three steps, without AWS: stamping on send,
substituting on receive, resolving queue ARNs (seed 000, ``NServiceBus.Transport.Sqs.ARN``)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from local_aws.released_transport.arn_aware.endpoint import (
    ArnAwareDispatcher,
    QueueArn,
    parse_queue_arn,
    stamp_arn_header,
    substitute_arn_header,
)
from local_aws.released_transport.core.outgoing import (
    DispatchConsistency,
    OutgoingMessage,
    TransportOperation,
)
from local_aws.released_transport.transport.queues.naming import get_sqs_queue_name
from local_aws.released_transport.transport.queues.queue_cache import QueueCache
from tests.local_aws.released_transport.fake_sqs import FakeSqs

OWN_ARN = "arn:aws:sqs:us-east-1:111111111111:MyEndpoint"


def test_every_header_carrying_the_own_address_gets_an_entry_and_existing_ones_stay() -> None:
    headers: dict[str, str | None] = {
        "NServiceBus.ReplyToAddress": "MyEndpoint",
        "NServiceBus.FailedQ": "MyEndpoint",
        "NServiceBus.OriginatingEndpoint": "MyEndpointName",
        "NServiceBus.Transport.Sqs.ARN": "NServiceBus.SubscriberAddress=arn:aws:sqs:r:2:Sub",
    }

    stamp_arn_header(headers, "MyEndpoint", OWN_ARN)

    assert headers["NServiceBus.Transport.Sqs.ARN"] == (
        "NServiceBus.SubscriberAddress=arn:aws:sqs:r:2:Sub;"
        f"NServiceBus.ReplyToAddress={OWN_ARN};NServiceBus.FailedQ={OWN_ARN}"
    )
    assert headers["NServiceBus.ReplyToAddress"] == "MyEndpoint"


def test_nothing_is_written_when_no_header_carries_the_own_address() -> None:
    headers: dict[str, str | None] = {"NServiceBus.ReplyToAddress": "Other"}

    stamp_arn_header(headers, "MyEndpoint", OWN_ARN)

    assert headers == {"NServiceBus.ReplyToAddress": "Other"}


def test_substitution_replaces_only_headers_the_message_has() -> None:
    headers: dict[str, str | None] = {
        "NServiceBus.ReplyToAddress": "Sender",
        "NServiceBus.Transport.Sqs.ARN": "NServiceBus.ReplyToAddress=arn:aws:sqs:r:1:Sender;NServiceBus.FailedQ=arn:x",
    }

    substitute_arn_header(headers)

    assert headers["NServiceBus.ReplyToAddress"] == "arn:aws:sqs:r:1:Sender"
    assert "NServiceBus.FailedQ" not in headers


@pytest.mark.parametrize(
    ("text", "arn"),
    [
        (OWN_ARN, QueueArn("aws", "us-east-1", "111111111111", "MyEndpoint")),
        ("arn:aws-cn:sqs:cn-north-1:1:q.fifo", QueueArn("aws-cn", "cn-north-1", "1", "q.fifo")),
        ("arn:aws:sns:us-east-1:1:topic", None),
        ("arn:aws:sqs:us-east-1:abc:q", None),
        ("MyEndpoint", None),
        ("arn:aws:sqs:us-east-1:1:q:extra", None),
    ],
)
def test_parse_queue_arn(text: str, arn: QueueArn | None) -> None:
    assert parse_queue_arn(text) == arn
    if arn is not None:
        assert str(arn) == text


class _Meta:
    endpoint_url = "http://127.0.0.1:5000"
    region_name = "us-east-1"


class _Client(FakeSqs):
    meta: Any = _Meta()


def test_an_arn_destination_is_sent_to_the_url_of_that_account_without_a_prefix() -> None:
    sqs = _Client()
    dispatcher = ArnAwareDispatcher(
        sqs,
        QueueCache(sqs, get_sqs_queue_name, "DEV-"),
        own_address="DEV-MyEndpoint",
        own_arn=lambda: OWN_ARN,
        wrap_outgoing_messages=True,
        clock=lambda: datetime.now(UTC),
    )
    message = OutgoingMessage("id", {"NServiceBus.ReplyToAddress": "DEV-MyEndpoint"}, b"{}")

    dispatcher.dispatch(
        [
            TransportOperation(
                message,
                "arn:aws:sqs:us-east-1:222222222222:Billing",
                consistency=DispatchConsistency.ISOLATED,
            ),
            TransportOperation(
                message,
                "arn:aws:sqs:eu-west-1:222222222222:Billing",
                consistency=DispatchConsistency.ISOLATED,
            ),
            TransportOperation(message, "Billing", consistency=DispatchConsistency.ISOLATED),
        ]
    )

    assert [call["QueueUrl"] for call in sqs.calls("send_message")] == [
        "http://127.0.0.1:5000/222222222222/Billing",
        "https://sqs.eu-west-1.amazonaws.com/222222222222/Billing",
        "DEV-Billing",
    ]
    assert (
        message.headers["NServiceBus.Transport.Sqs.ARN"] == f"NServiceBus.ReplyToAddress={OWN_ARN}"
    )
