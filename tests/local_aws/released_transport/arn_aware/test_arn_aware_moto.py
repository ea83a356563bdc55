"""The seed's ARN-aware ("New") endpoint next to released ("Old") ones in one account of the
local AWS: New to Old keeps working by name, New to New replies to the ARN, a mapped endpoint
name is sent to by ARN, and the error queue copy carries the ``FailedQ`` entry.

The seed stamps *every* header whose value equals the endpoint's transport address. Without a
queue name prefix an endpoint's name is its transport address, so the endpoint-name headers
(``NServiceBus.OriginatingEndpoint``, ``NServiceBus.ProcessingEndpoint``) get entries too and a
New receiver replaces the sender's *name* with its queue ARN; with a prefix they do not. The
tests below pin both, as the seed's rule produces them."""

from __future__ import annotations

import json
from typing import Any, TypeVar

import pytest

from local_aws.released_transport.arn_aware.endpoint import ArnAwareEndpoint
from local_aws.released_transport.core.recoverability import RecoverabilitySettings
from local_aws.released_transport.endpoint.handler_context import (
    MessageHandlerContext,
)
from local_aws.released_transport.endpoint.released_endpoint import (
    ReleasedEndpoint,
)
from local_aws.released_transport.endpoint.settings import EndpointSettings

pytestmark = pytest.mark.moto

SETTINGS = EndpointSettings(wait_time_seconds=0, max_concurrency=10)
ARN_HEADER = "NServiceBus.Transport.Sqs.ARN"


EndpointType = TypeVar("EndpointType", bound=ReleasedEndpoint)


def _start(endpoint: EndpointType) -> EndpointType:
    endpoint.install()
    endpoint.start()
    return endpoint


def _reply(context: MessageHandlerContext) -> None:
    context.reply("Reply", b"{}")


def test_new_to_old_works_by_name_and_old_ignores_the_arn_header(sqs: Any) -> None:
    prefixed = EndpointSettings(queue_name_prefix="DEV-", wait_time_seconds=0)
    sender = _start(ArnAwareEndpoint("Sender", sqs, prefixed))
    receiver = _start(ReleasedEndpoint("Receiver", sqs, prefixed))
    sender_arn = sender.queue_arn

    sender.send("Receiver", "Request", b"{}")
    (request,) = receiver.process(_reply)
    (reply,) = sender.process(lambda _context: None)

    assert request.message is not None
    assert request.message.headers["NServiceBus.ReplyToAddress"] == "DEV-Sender"
    assert request.message.headers["NServiceBus.OriginatingEndpoint"] == "Sender"
    assert request.message.headers[ARN_HEADER] == f"NServiceBus.ReplyToAddress={sender_arn}"
    assert sender_arn.endswith(":DEV-Sender")
    assert reply.message is not None


def test_without_a_prefix_the_endpoint_name_headers_are_stamped_and_substituted(sqs: Any) -> None:
    sender = _start(ArnAwareEndpoint("Sender", sqs, SETTINGS))
    old = _start(ReleasedEndpoint("Old", sqs, SETTINGS))
    new = _start(ArnAwareEndpoint("New", sqs, SETTINGS))

    sender.send("Old", "Request", b"{}")
    sender.send("New", "Request", b"{}")
    (at_old,) = old.process(lambda _context: None)
    (at_new,) = new.process(lambda _context: None)

    assert at_old.message is not None
    assert at_new.message is not None
    assert at_old.message.headers[ARN_HEADER] == (
        f"NServiceBus.ReplyToAddress={sender.queue_arn};"
        f"NServiceBus.OriginatingEndpoint={sender.queue_arn}"
    )
    assert at_old.message.headers["NServiceBus.OriginatingEndpoint"] == "Sender"
    assert at_new.message.headers["NServiceBus.OriginatingEndpoint"] == sender.queue_arn


def test_new_to_new_replies_to_the_substituted_arn(sqs: Any) -> None:
    sender = _start(ArnAwareEndpoint("Sender", sqs, SETTINGS))
    receiver = _start(ArnAwareEndpoint("Receiver", sqs, SETTINGS))
    sender.use_account_for_endpoint(
        "Receiver", sqs.get_queue_url(QueueName="Receiver")["QueueUrl"].split("/")[-2]
    )

    assert sender.route("Receiver") == receiver.queue_arn
    assert sender.route("Elsewhere") == "Elsewhere"
    sender.send("Receiver", "Request", b"{}")
    (request,) = receiver.process(_reply)
    (reply,) = sender.process(lambda _context: None)

    assert request.message is not None
    assert request.message.headers["NServiceBus.ReplyToAddress"] == sender.queue_arn
    assert reply.message is not None
    assert reply.message.headers["NServiceBus.ReplyToAddress"] == receiver.queue_arn

    sender.use_region_for_endpoint("Receiver", "eu-west-1")
    assert sender.route("Receiver") == receiver.queue_arn.replace(":us-east-1:", ":eu-west-1:")


def test_a_failed_message_carries_a_failed_queue_entry_next_to_the_kept_ones(sqs: Any) -> None:
    settings = EndpointSettings(
        recoverability=RecoverabilitySettings(immediate_retries=0, delayed_retries=0),
        wait_time_seconds=0,
    )
    sender = _start(ArnAwareEndpoint("Sender", sqs, SETTINGS))
    receiver = _start(ArnAwareEndpoint("Receiver", sqs, settings))
    sender.send("Receiver", "Request", b"{}")

    def fail(_context: MessageHandlerContext) -> None:
        raise RuntimeError("fails")

    receiver.process(fail)
    error_url = sqs.get_queue_url(QueueName="error")["QueueUrl"]
    (failed,) = sqs.receive_message(QueueUrl=error_url)["Messages"]

    headers = json.loads(failed["Body"])["Headers"]
    assert headers["NServiceBus.FailedQ"] == "Receiver"
    assert headers["NServiceBus.ReplyToAddress"] == sender.queue_arn
    assert headers[ARN_HEADER] == (
        f"NServiceBus.ReplyToAddress={sender.queue_arn};"
        f"NServiceBus.OriginatingEndpoint={sender.queue_arn};"
        f"NServiceBus.ProcessingEndpoint={receiver.queue_arn};"
        f"NServiceBus.FailedQ={receiver.queue_arn}"
    )
