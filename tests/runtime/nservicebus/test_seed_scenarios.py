"""The interoperability scenarios of seed 000, one test per scenario and variant.

A "new" endpoint stamps outgoing messages and substitutes incoming ones; an "old" endpoint
does neither and treats every address as a queue name in its own account. Both are modelled
with the runtime's own functions, so each test walks the seed's steps and checks what each
endpoint sees and where each message goes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from cross_account_runtime.nservicebus.arn_header import (
    ARN_HEADER,
    stamp_outgoing,
    substitute_incoming,
)
from cross_account_runtime.nservicebus.locations import Location
from cross_account_runtime.nservicebus.queue_arn import QueueArn
from cross_account_runtime.nservicebus.queue_name_generator import QueueNaming
from cross_account_runtime.nservicebus.transport_address import Addressing, EndpointLocations

REGION = "us-east-2"
ACCOUNT = "111111111111"
ACCOUNT2 = "222222222222"

SUBSCRIBER_ADDRESS = "NServiceBus.SubscriberAddress"
REPLY_TO_ADDRESS = "NServiceBus.ReplyToAddress"
FAILED_Q = "NServiceBus.FailedQ"


def arn(account: str, queue: str) -> str:
    return f"arn:aws:sqs:{REGION}:{account}:{queue}"


@dataclass(frozen=True)
class Endpoint:
    """An endpoint as the seed sees it: its transport address, its account and its version."""

    address: str
    account: str
    new: bool
    prefix: str = ""
    locations: EndpointLocations = field(default_factory=EndpointLocations)

    @property
    def addressing(self) -> Addressing:
        return Addressing(Location(self.account, REGION), self.locations, QueueNaming(self.prefix))

    @property
    def queue(self) -> QueueArn:
        """The endpoint's own input queue."""
        return self.addressing.resolve(self.address)

    def send(self, headers: dict[str, str]) -> dict[str, str]:
        """What goes on the wire: new endpoints stamp, old ones send the headers as they are."""
        if not self.new:
            return dict(headers)
        return stamp_outgoing(headers, self.address, str(self.queue))

    def receive(self, headers: dict[str, str]) -> dict[str, str]:
        """What the pipeline sees: new endpoints substitute, old ones pass the message as is."""
        return substitute_incoming(headers) if self.new else dict(headers)

    def route_to(self, address: str) -> QueueArn:
        """Where a message for ``address`` (as stored or read from a header) goes."""
        if self.new:
            return self.addressing.resolve(address, on_wire=True)
        naming = self.addressing.naming
        return QueueArn.at(self.addressing.local, naming.queue_name(address))

    def route_to_endpoint(self, endpoint: str) -> QueueArn:
        """Where a message routed to a logical endpoint goes (instance mapping for new ones)."""
        if self.new:
            return self.addressing.endpoint_arn(endpoint)
        return self.route_to(endpoint)


def mapped(account: str, endpoint: str) -> EndpointLocations:
    return EndpointLocations().use_account_for_endpoint(endpoint, account)


# --- Hybrid mode message-driven pub-sub ----------------------------------------------------


def test_pubsub_new_to_new_subscriber_in_another_account_receives_events() -> None:
    subscriber = Endpoint(
        "MySubscriber", ACCOUNT, new=True, locations=mapped(ACCOUNT2, "MyPublisher")
    )
    publisher = Endpoint("MyPublisher", ACCOUNT2, new=True)

    subscribe = subscriber.send({SUBSCRIBER_ADDRESS: "MySubscriber"})
    assert subscribe == {
        SUBSCRIBER_ADDRESS: "MySubscriber",
        ARN_HEADER: f"NServiceBus.SubscriberAddress={arn(ACCOUNT, 'MySubscriber')}",
    }
    assert str(subscriber.route_to_endpoint("MyPublisher")) == arn(ACCOUNT2, "MyPublisher")

    stored = publisher.receive(subscribe)[SUBSCRIBER_ADDRESS]
    assert stored == arn(ACCOUNT, "MySubscriber")
    assert publisher.route_to(stored) == subscriber.queue


def test_pubsub_new_to_new_an_older_legacy_subscription_reaches_the_same_queue() -> None:
    publisher = Endpoint("MyPublisher", ACCOUNT, new=True)
    subscriber = Endpoint("MySubscriber", ACCOUNT, new=True)
    legacy_entry, arn_entry = "MySubscriber", arn(ACCOUNT, "MySubscriber")
    assert legacy_entry != arn_entry
    assert publisher.route_to(legacy_entry) == publisher.route_to(arn_entry) == subscriber.queue


def test_pubsub_new_to_old_within_one_account_works() -> None:
    subscriber = Endpoint("MySubscriber", ACCOUNT, new=True)
    publisher = Endpoint("MyPublisher", ACCOUNT, new=False)

    subscribe = subscriber.send({SUBSCRIBER_ADDRESS: "MySubscriber"})
    assert subscribe == {
        SUBSCRIBER_ADDRESS: "MySubscriber",
        ARN_HEADER: f"NServiceBus.SubscriberAddress={arn(ACCOUNT, 'MySubscriber')}",
    }
    assert str(subscriber.route_to_endpoint("MyPublisher")) == arn(ACCOUNT, "MyPublisher")

    stored = publisher.receive(subscribe)[SUBSCRIBER_ADDRESS]
    assert stored == "MySubscriber"
    assert publisher.route_to(stored) == subscriber.queue


def test_pubsub_new_to_old_across_accounts_publishes_into_the_wrong_account() -> None:
    subscriber = Endpoint(
        "MySubscriber", ACCOUNT, new=True, locations=mapped(ACCOUNT2, "MyPublisher")
    )
    publisher = Endpoint("MyPublisher", ACCOUNT2, new=False)

    stored = publisher.receive(subscriber.send({SUBSCRIBER_ADDRESS: "MySubscriber"}))
    event_queue = publisher.route_to(stored[SUBSCRIBER_ADDRESS])
    assert event_queue.account == ACCOUNT2
    assert event_queue != subscriber.queue


def test_pubsub_old_to_new_publishes_through_the_queue_name_generator() -> None:
    subscriber = Endpoint("MySubscriber", ACCOUNT, new=False, prefix="prod-")
    publisher = Endpoint("MyPublisher", ACCOUNT, new=True, prefix="prod-")

    subscribe = subscriber.send({SUBSCRIBER_ADDRESS: "MySubscriber"})
    assert subscribe == {SUBSCRIBER_ADDRESS: "MySubscriber"}
    assert subscriber.route_to_endpoint("MyPublisher") == publisher.queue

    stored = publisher.receive(subscribe)[SUBSCRIBER_ADDRESS]
    assert stored == "MySubscriber"
    assert str(publisher.route_to(stored)) == arn(ACCOUNT, "prod-MySubscriber")
    assert publisher.route_to(stored) == subscriber.queue


# --- Send and Reply ------------------------------------------------------------------------


def test_send_reply_new_to_new_receiver_in_another_account_replies_to_the_sender() -> None:
    sender = Endpoint("Sender", ACCOUNT, new=True, locations=mapped(ACCOUNT2, "Receiver"))
    receiver = Endpoint("Receiver", ACCOUNT2, new=True)

    request = sender.send({REPLY_TO_ADDRESS: "Sender"})
    assert request == {
        REPLY_TO_ADDRESS: "Sender",
        ARN_HEADER: f"NServiceBus.ReplyToAddress={arn(ACCOUNT, 'Sender')}",
    }
    assert str(sender.route_to_endpoint("Receiver")) == arn(ACCOUNT2, "Receiver")

    reply_to = receiver.receive(request)[REPLY_TO_ADDRESS]
    assert reply_to == arn(ACCOUNT, "Sender")
    assert receiver.route_to(reply_to) == sender.queue

    reply = receiver.send({REPLY_TO_ADDRESS: "Receiver"})
    assert sender.receive(reply)[REPLY_TO_ADDRESS] == arn(ACCOUNT2, "Receiver")


def test_send_reply_new_to_old_within_one_account_works() -> None:
    sender = Endpoint("Sender", ACCOUNT, new=True)
    receiver = Endpoint("Receiver", ACCOUNT, new=False)

    request = sender.send({REPLY_TO_ADDRESS: "Sender"})
    assert request == {
        REPLY_TO_ADDRESS: "Sender",
        ARN_HEADER: f"NServiceBus.ReplyToAddress={arn(ACCOUNT, 'Sender')}",
    }
    assert str(sender.route_to_endpoint("Receiver")) == arn(ACCOUNT, "Receiver")

    reply_to = receiver.receive(request)[REPLY_TO_ADDRESS]
    assert reply_to == "Sender"
    assert receiver.route_to(reply_to) == sender.queue


def test_send_reply_new_to_old_across_accounts_replies_into_the_wrong_account() -> None:
    sender = Endpoint("Sender", ACCOUNT, new=True, locations=mapped(ACCOUNT2, "Receiver"))
    receiver = Endpoint("Receiver", ACCOUNT2, new=False)

    reply_to = receiver.receive(sender.send({REPLY_TO_ADDRESS: "Sender"}))[REPLY_TO_ADDRESS]
    assert receiver.route_to(reply_to) != sender.queue


def test_send_reply_old_to_new_replies_through_the_queue_name_generator() -> None:
    sender = Endpoint("Sender", ACCOUNT, new=False)
    receiver = Endpoint("Receiver", ACCOUNT, new=True)

    request = sender.send({REPLY_TO_ADDRESS: "Sender"})
    assert request == {REPLY_TO_ADDRESS: "Sender"}
    assert sender.route_to_endpoint("Receiver") == receiver.queue

    reply_to = receiver.receive(request)[REPLY_TO_ADDRESS]
    assert reply_to == "Sender"
    assert receiver.route_to(reply_to) == sender.queue


# --- Bridge --------------------------------------------------------------------------------


def test_bridge_sending_from_sqs_translates_the_arn_and_replies_to_it() -> None:
    sender = Endpoint("Sender", ACCOUNT, new=True)
    bridge = Endpoint("Bridge", ACCOUNT, new=True)
    # What HasEndpoint registers on the SQS and the SQL Server side.
    has_endpoint = {"Sender": arn(ACCOUNT, "Sender"), "Receiver": "Receiver@dbo@nservicebus"}
    registry = {address: endpoint for endpoint, address in has_endpoint.items()}

    message = sender.send({REPLY_TO_ADDRESS: "Sender"})
    assert message == {
        REPLY_TO_ADDRESS: "Sender",
        ARN_HEADER: f"NServiceBus.ReplyToAddress={arn(ACCOUNT, 'Sender')}",
    }
    reply_to = bridge.receive(message)[REPLY_TO_ADDRESS]
    assert reply_to == arn(ACCOUNT, "Sender")
    assert registry[reply_to] == "Sender"
    assert "Sender" not in registry, "without substitution the registry could not translate"

    sql_reply_to = "Receiver@dbo@nservicebus"
    assert registry[sql_reply_to] == "Receiver"
    assert bridge.route_to(has_endpoint["Sender"]) == sender.queue


def test_bridge_receiving_in_sqs_translates_the_receivers_arn_back() -> None:
    receiver = Endpoint("Receiver", ACCOUNT, new=True)
    bridge = Endpoint("Bridge", ACCOUNT, new=True)
    has_endpoint = {"Sender": "Sender@dbo@nservicebus", "Receiver": arn(ACCOUNT, "Receiver")}
    registry = {address: endpoint for endpoint, address in has_endpoint.items()}

    sqs_side = {REPLY_TO_ADDRESS: registry["Sender@dbo@nservicebus"]}
    assert sqs_side == {REPLY_TO_ADDRESS: "Sender"}
    shadow_queue = receiver.route_to(receiver.receive(sqs_side)[REPLY_TO_ADDRESS])
    assert str(shadow_queue) == arn(ACCOUNT, "Sender")

    reply = receiver.send({REPLY_TO_ADDRESS: "Receiver"})
    assert reply == {
        REPLY_TO_ADDRESS: "Receiver",
        ARN_HEADER: f"NServiceBus.ReplyToAddress={arn(ACCOUNT, 'Receiver')}",
    }
    reply_to = bridge.receive(reply)[REPLY_TO_ADDRESS]
    assert registry[reply_to] == "Receiver"
    assert has_endpoint[registry["Sender@dbo@nservicebus"]] == "Sender@dbo@nservicebus"


# --- ReplyToOriginator from a saga ---------------------------------------------------------


def test_saga_new_to_new_stores_the_arn_and_replies_to_the_originator() -> None:
    originator = Endpoint("Sender", ACCOUNT, new=True, locations=mapped(ACCOUNT2, "SagaHost"))
    saga_host = Endpoint("SagaHost", ACCOUNT2, new=True)

    stored = saga_host.receive(originator.send({REPLY_TO_ADDRESS: "Sender"}))[REPLY_TO_ADDRESS]
    assert stored == arn(ACCOUNT, "Sender")
    assert saga_host.route_to(stored) == originator.queue


def test_saga_new_to_old_stores_the_legacy_address_with_prefix_and_replies() -> None:
    originator = Endpoint("prod-Sender", ACCOUNT, new=True, prefix="prod-")
    saga_host = Endpoint("prod-SagaHost", ACCOUNT, new=False, prefix="prod-")

    stored = saga_host.receive(originator.send({REPLY_TO_ADDRESS: "prod-Sender"}))[REPLY_TO_ADDRESS]
    assert stored == "prod-Sender"
    assert str(saga_host.route_to(stored)) == arn(ACCOUNT, "prod-Sender")
    assert saga_host.route_to(stored) == originator.queue


def test_saga_old_to_new_routes_the_legacy_address_through_the_generator() -> None:
    originator = Endpoint("prod-Sender", ACCOUNT, new=False, prefix="prod-")
    saga_host = Endpoint("prod-SagaHost", ACCOUNT, new=True, prefix="prod-")

    stored = saga_host.receive(originator.send({REPLY_TO_ADDRESS: "prod-Sender"}))[REPLY_TO_ADDRESS]
    assert stored == "prod-Sender"
    assert saga_host.route_to(stored) == originator.queue


# --- Failed message to ServiceControl in another account -----------------------------------


def test_failed_message_to_servicecontrol_in_another_account_retries_to_the_endpoint() -> None:
    endpoint = Endpoint("MyEndpoint", ACCOUNT, new=True)
    service_control = Endpoint("Particular.ServiceControl", ACCOUNT2, new=True)
    error_queue = endpoint.addressing.resolve(arn(ACCOUNT2, "error"))
    assert str(error_queue) == arn(ACCOUNT2, "error")

    failed = endpoint.send({FAILED_Q: "MyEndpoint"})
    assert failed == {
        FAILED_Q: "MyEndpoint",
        ARN_HEADER: f"NServiceBus.FailedQ={arn(ACCOUNT, 'MyEndpoint')}",
    }
    retry_target = service_control.receive(failed)[FAILED_Q]
    assert retry_target == arn(ACCOUNT, "MyEndpoint")
    assert service_control.route_to(retry_target) == endpoint.queue


@pytest.mark.parametrize("pipeline_headers", [True, False], ids=["substituted", "as-received"])
def test_failed_subscription_carries_both_entries_in_the_arn_header(
    pipeline_headers: bool,
) -> None:
    subscriber = Endpoint(
        "MySubscriber", ACCOUNT, new=True, locations=mapped(ACCOUNT2, "MyPublisher")
    )
    publisher = Endpoint("MyPublisher", ACCOUNT2, new=True)
    service_control = Endpoint("Particular.ServiceControl", ACCOUNT2, new=True)

    subscribe = subscriber.send({SUBSCRIBER_ADDRESS: "MySubscriber"})
    assert subscribe[ARN_HEADER] == f"NServiceBus.SubscriberAddress={arn(ACCOUNT, 'MySubscriber')}"

    incoming = publisher.receive(subscribe) if pipeline_headers else subscribe
    failed = publisher.send(incoming | {FAILED_Q: "MyPublisher"})
    assert failed[ARN_HEADER] == (
        f"NServiceBus.SubscriberAddress={arn(ACCOUNT, 'MySubscriber')};"
        f"NServiceBus.FailedQ={arn(ACCOUNT2, 'MyPublisher')}"
    )
    seen = service_control.receive(failed)
    assert seen[SUBSCRIBER_ADDRESS] == arn(ACCOUNT, "MySubscriber")
    assert seen[FAILED_Q] == arn(ACCOUNT2, "MyPublisher")


# --- Forwarding ----------------------------------------------------------------------------

FORWARD_INCOMING = {
    REPLY_TO_ADDRESS: "MyEndpoint",
    ARN_HEADER: f"NServiceBus.ReplyToAddress={arn(ACCOUNT, 'MyEndpoint')}",
}
FORWARDED = {
    REPLY_TO_ADDRESS: arn(ACCOUNT, "MyEndpoint"),
    ARN_HEADER: f"NServiceBus.ReplyToAddress={arn(ACCOUNT, 'MyEndpoint')}",
}


def test_forwarding_from_a_new_endpoint_copies_the_substituted_headers() -> None:
    forwarder = Endpoint("MyHandlerHost", ACCOUNT2, new=True)
    assert forwarder.send(forwarder.receive(FORWARD_INCOMING)) == FORWARDED


def test_forwarding_new_to_new_the_next_endpoint_replies_to_the_original_sender() -> None:
    original = Endpoint("MyEndpoint", ACCOUNT, new=True)
    other = Endpoint("MyOtherEndpoint", ACCOUNT2, new=True)
    reply_to = other.receive(FORWARDED)[REPLY_TO_ADDRESS]
    assert other.route_to(reply_to) == original.queue


def test_forwarding_new_to_old_the_old_endpoint_cannot_use_the_arn() -> None:
    original = Endpoint("MyEndpoint", ACCOUNT, new=True)
    other = Endpoint("MyOtherEndpoint", ACCOUNT, new=False)
    reply_to = other.receive(FORWARDED)[REPLY_TO_ADDRESS]
    assert reply_to == arn(ACCOUNT, "MyEndpoint")
    assert other.route_to(reply_to).name == f"arn-aws-sqs-{REGION}-{ACCOUNT}-MyEndpoint"
    assert other.route_to(reply_to) != original.queue
