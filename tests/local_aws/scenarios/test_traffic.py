"""The main job's traffic on the deployed example, between peers played by the model of the
released transport: Sales (ARN-aware) and Shipping (released) in the Sales account, Billing
(released) in the Billing account, the error queue and ServiceControl in the Ops account."""

from __future__ import annotations

from collections import Counter

import pytest

from local_aws.accounts import AccountCredentials
from local_aws.released_transport.service_control.instance_queue import (
    HeartbeatStatus,
)
from local_aws.released_transport.service_control.view import UNKNOWN_ENDPOINT
from local_aws.scenarios.conversation import Exchange
from local_aws.scenarios.platform_traffic import POISON_BODY, POISON_HEADERS, PlatformTraffic
from local_aws.scenarios.publication import MESSAGE_DRIVEN, SubscriptionOutcome
from local_aws.scenarios.traffic import LATER_DELAY, TrafficResult, conversation_pairs, run_traffic
from stacks.app_builder import topology_from_context

pytestmark = [pytest.mark.moto, pytest.mark.synth]

SALES = "111111111111"
BILLING = "222222222222"
OPS = "333333333333"


def arn(account: str, name: str) -> str:
    return f"arn:aws:sqs:us-east-1:{account}:{name}"


@pytest.fixture(scope="module")
def traffic(example_deployment: dict[str, AccountCredentials], moto_endpoint: str) -> TrafficResult:
    return run_traffic(topology_from_context(None), example_deployment, moto_endpoint)


def relay_hops(done: Exchange) -> Counter[tuple[str, str]]:
    """How often each account's relay of each direction carried the exchange's messages (the
    functions are ``Messaging-<account>-<Outbound|Inbound>RelayFunction...``)."""
    hops: Counter[tuple[str, str]] = Counter()
    for function in done.relays:
        _, account, construct = function.split("-", 2)
        hops[(account, construct.split("Relay", 1)[0])] += 1
    return hops


def the_exchange(traffic: TrafficResult, sender: str, receiver: str) -> Exchange:
    (found,) = [e for e in traffic.exchanges if (e.sender, e.receiver) == (sender, receiver)]
    return found


def test_every_route_across_accounts_carries_a_request_and_its_reply() -> None:
    assert conversation_pairs(topology_from_context(None)) == (
        ("Sales", "Billing"),
        ("Shipping", "Billing"),
        ("Billing", "Shipping"),
    )


def test_a_released_receiver_sees_the_released_senders_name_which_leads_back(
    traffic: TrafficResult,
) -> None:
    done = the_exchange(traffic, "Shipping", "Billing")
    assert done.request.headers["NServiceBus.ReplyToAddress"] == "Shipping"
    assert done.request.headers["NServiceBus.OriginatingEndpoint"] == "Shipping"
    assert done.reply.headers["NServiceBus.ReplyToAddress"] == "Billing"
    # Shadow in Sales -> outbound relay -> Billing's ingress -> inbound relay, and back; each
    # handled message's audit copy goes from its handler's account to Ops' audit queue.
    assert relay_hops(done) == {
        ("Sales", "Outbound"): 2,
        ("Billing", "Inbound"): 1,
        ("Billing", "Outbound"): 2,
        ("Sales", "Inbound"): 1,
        ("Ops", "Inbound"): 2,
    }


def test_an_arn_aware_sender_reaches_a_released_receiver_through_the_bridge_and_gets_its_reply(
    traffic: TrafficResult,
) -> None:
    done = the_exchange(traffic, "Sales", "Billing")
    assert done.request.headers["NServiceBus.ReplyToAddress"] == "Sales"
    assert done.request.headers["NServiceBus.Transport.Sqs.ARN"] == (
        "NServiceBus.ReplyToAddress=" + arn(SALES, "Sales") + ";"
        "NServiceBus.OriginatingEndpoint=" + arn(SALES, "Sales")
    )
    # Billing replies by name to the shadow of Sales in its account; the relays stamp its
    # address, and Sales, ARN-aware, reads it as Billing's queue ARN.
    assert done.reply.headers["NServiceBus.ReplyToAddress"] == arn(BILLING, "Billing")
    # Both ways through the bridge (large bodies need the relay's copy), and the audit copies
    # of the request (from Billing) and the reply (from Sales) to Ops' audit queue.
    assert relay_hops(done) == {
        ("Sales", "Outbound"): 2,
        ("Billing", "Inbound"): 1,
        ("Billing", "Outbound"): 2,
        ("Sales", "Inbound"): 1,
        ("Ops", "Inbound"): 2,
    }


def test_a_failing_message_reaches_service_control_in_another_account_and_its_retry_succeeds(
    traffic: TrafficResult,
) -> None:
    """Shipping does not wrap its messages and Billing does: the inbound relay hands Billing
    the wrapped form it writes itself, so its delayed retries end and its error copy carries
    NServiceBus.FailedQ (unconverted, the headers attribute Billing's transport copies onto
    both would restart the retries for ever and hide FailedQ from ServiceControl)."""
    topology = topology_from_context(None)
    assert not topology.endpoint("Shipping").wrap_outgoing_messages
    assert topology.endpoint("Billing").wrap_outgoing_messages
    recovery = traffic.recovery
    assert recovery is not None
    assert (recovery.sender, recovery.receiver) == ("Shipping", "Billing")
    # Five immediate retries in each of four rounds (the first and three delayed retries).
    assert recovery.attempts == 24
    assert recovery.failed_queue == "Billing"
    assert recovery.retried.headers["NServiceBus.ReplyToAddress"] == "Shipping"
    assert recovery.resolved


def test_a_send_delayed_beyond_15_minutes_arrives_when_the_delay_is_up(
    traffic: TrafficResult,
) -> None:
    later = traffic.later
    assert later is not None
    assert (later.sender, later.receiver) == ("Shipping", "Billing")
    assert later.delay_seconds == LATER_DELAY.total_seconds() == 1200
    assert 1200 <= later.arrived_after_seconds < 1500


def test_a_saga_on_billing_answers_shipping_after_its_timeout(traffic: TrafficResult) -> None:
    saga = traffic.saga
    assert saga is not None
    assert (saga.sender, saga.receiver, saga.originator) == ("Shipping", "Billing", "Shipping")
    assert saga.reply.message_id in "\n".join(traffic.lines())


def test_billings_publish_of_order_billed_is_handled_once_by_each_subscriber_in_sales(
    traffic: TrafficResult,
) -> None:
    """Sales natively, its queue subscribed to Billing's topic across accounts; Shipping
    message-driven, Billing's copy to the address it stored from Shipping's subscribe message
    (the shadow that leads to Shipping through the bridge); the webhook pending."""
    publication = traffic.publication
    assert publication is not None
    assert publication.publisher == "Billing"
    assert (
        publication.topic_arn == f"arn:aws:sns:us-east-1:{BILLING}:MyCompany-Messages-OrderBilled"
    )
    assert publication.subscriptions == (
        SubscriptionOutcome(
            "Sales",
            "sqs",
            arn(SALES, "Sales"),
            f"Sales ({SALES})",
            in_local_aws=True,
            handled=1,
            note="in its queue; Sales handled it once",
        ),
        SubscriptionOutcome(
            "PartnerWebhook",
            "https",
            "https://partner.example.com/sns/order-billed",
            None,
            in_local_aws=True,
            handled=None,
            note="in the local AWS, pending confirmation (no stand-in answers for its host); its "
            "delivery is not observable here",
        ),
        SubscriptionOutcome(
            "Shipping",
            MESSAGE_DRIVEN,
            arn(SALES, "Shipping"),
            f"Sales ({SALES})",
            in_local_aws=True,
            handled=1,
            note="sent by Billing to the stored address 'Shipping'; Shipping handled it once",
        ),
    )


def test_shipping_subscribed_with_a_subscribe_message_to_billing(traffic: TrafficResult) -> None:
    (subscription,) = traffic.subscriptions
    assert (subscription.subscriber, subscription.publisher) == ("Shipping", "Billing")
    assert subscription.event_type.startswith("MyCompany.Messages.OrderBilled, ")


def test_a_body_over_1_mib_crosses_from_billing_to_shipping_through_both_buckets(
    traffic: TrafficResult,
) -> None:
    large = traffic.large
    assert large is not None
    assert (large.sender, large.receiver, large.body_bytes) == ("Shipping", "Billing", 1_572_864)
    assert len(large.delivery.body) == 1_572_864
    assert (large.sender_bucket, large.receiver_bucket) == (
        f"messaging-bodies-{SALES}-us-east-1",
        f"messaging-bodies-{BILLING}-us-east-1",
    )


def test_the_printed_lines_name_every_message(traffic: TrafficResult) -> None:
    text = "\n".join(traffic.lines())
    for done in traffic.exchanges:
        assert done.request.message_id in text
        assert done.reply.message_id in text
    assert traffic.later is not None
    assert traffic.later.arrived.message_id in text
    assert traffic.publication is not None
    assert traffic.publication.message_id in text


def the_platform(traffic: TrafficResult) -> PlatformTraffic:
    assert traffic.platform is not None
    return traffic.platform


def test_every_handled_message_has_its_audit_copy_in_the_ops_accounts_audit_queue(
    traffic: TrafficResult,
) -> None:
    """The audit copy is forked in the handler's own dispatch, by the name "audit", which
    resolves to the shadow in Sales' and Billing's accounts."""
    audit = the_platform(traffic).audit
    assert audit is not None
    assert audit.audited >= audit.handled >= 15
    assert {"Sales", "Shipping", "Billing"} <= set(audit.by_endpoint)


def test_servicecontrol_lists_the_handled_messages_and_hides_the_system_messages(
    traffic: TrafficResult,
) -> None:
    """As ServicePulse lists audited messages: Shipping's subscribe message (processed by
    Billing) and the start-up check of saga audit (on Billing alone, the one endpoint with a
    saga) are stored as system messages and hidden; the list is the handled messages."""
    platform = the_platform(traffic)
    audit = platform.audit
    assert audit is not None
    assert (audit.audited, audit.system, audit.listed) == (audit.handled + 2, 2, audit.handled)
    assert UNKNOWN_ENDPOINT not in audit.by_endpoint
    assert sum(audit.by_endpoint.values()) == audit.handled
    assert UNKNOWN_ENDPOINT not in platform.views
    listed = [m for view in platform.views.values() for m in view.audited_messages]
    assert len(listed) == audit.handled
    assert all(m.metadata["MessageType"] for m in listed)
    text = "\n".join(traffic.lines())
    assert f"ServicePulse lists {audit.handled} (Billing " in text
    assert f"hiding 2 system message(s) of the {audit.handled + 2} audited" in text
    assert "(no message type)" not in text


def test_each_endpoint_process_has_a_host_id_of_its_own(traffic: TrafficResult) -> None:
    """Each endpoint runs from its own directory, so core gives each its own host id, and
    ServiceControl knows three endpoint instances on one machine."""
    views = the_platform(traffic).views
    beats = [b for name in ("Sales", "Shipping", "Billing") for b in views[name].heartbeats]
    assert len(beats) == 3
    assert len({b.host_id for b in beats}) == 3
    assert len({b.host for b in beats}) == 1


def test_servicecontrol_sees_every_endpoints_heartbeat_custom_check_metrics_and_saga(
    traffic: TrafficResult,
) -> None:
    views = the_platform(traffic).views
    for name in ("Sales", "Shipping", "Billing"):
        view = views[name]
        assert [b.status for b in view.heartbeats] == [HeartbeatStatus.ALIVE], name
        assert [c.has_failed for c in view.custom_checks] == [False], name
        assert view.metrics, name
    # The saga on Billing, started and completed by its timeout, audited to the audit queue.
    assert {s.saga_type for s in views["Billing"].saga_snapshots} == {
        "LocalAws.Sagas.BillingPolicy"
    }


def test_a_heartbeat_held_in_its_shadow_past_its_time_to_live_is_not_delivered(
    traffic: TrafficResult,
) -> None:
    expired = the_platform(traffic).expired
    assert expired is not None
    assert expired.endpoint == "Sales"
    assert expired.held_seconds > expired.time_to_live_seconds == 40


def test_the_expired_heartbeat_sets_off_sales_outbound_relays_deployed_expired_alarm(
    traffic: TrafficResult,
) -> None:
    """The alarm the stack deployed reads the very line the relay wrote: same service, same
    direction, same count."""
    set_off = [
        (r.account, dict(r.dimensions), r.metric) for r in traffic.relay_alarms if r.sets_off
    ]
    assert (
        SALES,
        {"Service": "messaging-relay-outbound-Sales", "Direction": "outbound"},
        "Expired",
    ) in set_off
    # Every relay of every account is watched on its dead letters, expiries and failures.
    services = {dict(r.dimensions)["Service"] for r in traffic.relay_alarms}
    assert services == {
        f"messaging-relay-{direction}-{account}"
        for direction in ("outbound", "inbound")
        for account in ("Sales", "Billing", "Ops")
    }


def test_a_message_kept_inline_at_sqs_limit_crosses_through_the_receivers_bucket(
    traffic: TrafficResult,
) -> None:
    """Shipping does not wrap, so its transport counts the body and attributes exactly: the
    ARN header the outbound relay adds would not fit."""
    inline = the_platform(traffic).inline
    assert inline is not None
    assert (inline.sender, inline.receiver) == ("Shipping", "Billing")
    assert inline.counted_size == 1_048_576
    assert len(inline.delivery.body) > 1_040_000


def test_a_message_billing_cannot_read_reaches_servicecontrol_unchanged(
    traffic: TrafficResult,
) -> None:
    poison = the_platform(traffic).poison
    assert poison is not None
    assert poison.endpoint == "Sales"
    assert poison.arrived["Body"] == POISON_BODY
    assert poison.arrived["MessageAttributes"] == {
        "NServiceBus.AmazonSQS.Headers": {"StringValue": POISON_HEADERS, "DataType": "String"}
    }
