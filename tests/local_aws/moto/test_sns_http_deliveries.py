"""HTTP/S deliveries in the local AWS happen as in AWS, to a stand-in on a mapped host: the
endpoint confirms through the SubscribeURL, SNS retries 5xx answers along the subscription's
delivery policy (spacing on a local clock that ages), a 4xx ends the delivery as a success, and
each delivery's outcome is logged once, after its last attempt. Plain moto confirms every
subscription at once and posts each message once to the real address, so each test here fails
without the teaching."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from typing import Any

import pytest

from cross_account_runtime.delivery_policy.policy import HttpDeliveryPolicy
from cross_account_runtime.delivery_report.causes import classify
from cross_account_runtime.delivery_report.schema import RECORD_SCHEMA
from cross_account_runtime.delivery_report.timestamps import parse_lenient
from local_aws.moto.delivery_status import sns_deliveries
from local_aws.moto.sns_http_deliveries import age_http_retries, http_attempts, map_http_host
from local_aws.scenarios.partner import PartnerScript, StandInPartner
from stacks.app_builder import topology_from_context
from tests.local_aws.moto.test_sns_delivery_logs import Account, record_fields, schema_fields, trust

pytestmark = pytest.mark.moto


def example_policy() -> HttpDeliveryPolicy:
    policy = topology_from_context(None).topics[0].subscriptions[1].delivery_policy
    assert policy is not None
    return policy


EXAMPLE = example_policy()
EXAMPLE_POLICY = EXAMPLE.to_subscription_json()
"""The example's PartnerWebhook policy, as its subscription's ``DeliveryPolicy``."""


class Always(PartnerScript):
    """A partner that answers every notification with one status."""

    def __init__(self, status: int) -> None:
        super().__init__(seed=0)
        self.status = status

    def answer(self, message_id: str) -> int:  # noqa: ARG002 - the script's signature
        return self.status


class Sequence(PartnerScript):
    """A partner that answers notifications with the given statuses, in order, then 200."""

    def __init__(self, *statuses: int) -> None:
        super().__init__(seed=0)
        self.statuses = list(statuses)

    def answer(self, message_id: str) -> int:  # noqa: ARG002 - the script's signature
        return self.statuses.pop(0) if self.statuses else 200


@pytest.fixture
def account(moto_endpoint: str, new_account: Any) -> Account:
    return Account(new_account, moto_endpoint)


def http_topic(account: Account, name: str) -> str:
    role = account.role(f"{name}-feedback", trust())
    return account.logged_topic(name, role, protocol="HTTP")


def host_of(account: Account) -> str:
    """A host of this test alone: the mapping of hosts is the server's."""
    return f"partner-{account.id}.example.com"


def subscribe(account: Account, topic: str, policy: dict[str, Any] | None = None) -> str:
    attributes = {"DeliveryPolicy": json.dumps(policy)} if policy else {}
    arn: str = account.client("sns").subscribe(
        TopicArn=topic,
        Protocol="https",
        Endpoint=f"https://{host_of(account)}/sns/orders",
        Attributes=attributes,
        ReturnSubscriptionArn=True,
    )["SubscriptionArn"]
    # The confirmation request, and the partner's visit of the SubscribeURL, when mapped.
    age_http_retries(account.endpoint_url, 0)
    return arn


def pending(account: Account, subscription: str) -> bool:
    attributes = account.client("sns").get_subscription_attributes(SubscriptionArn=subscription)
    return bool(attributes["Attributes"]["PendingConfirmation"] == "true")


@pytest.fixture
def partner_of() -> Iterator[Any]:
    started: list[StandInPartner] = []

    def start(account: Account, script: PartnerScript) -> StandInPartner:
        partner = StandInPartner(script).__enter__()
        started.append(partner)
        map_http_host(account.endpoint_url, host_of(account), partner.url)
        return partner

    yield start
    for partner in started:
        partner.__exit__(None, None, None)


def attempts_of(account: Account, topic: str) -> list[dict[str, Any]]:
    return [a for a in http_attempts(account.endpoint_url) if a["topic"] == topic]


def ledger_of(account: Account, topic: str) -> dict[str, Any]:
    (row,) = [r for r in sns_deliveries(account.endpoint_url) if r["topic"] == topic]
    return row


def deliver(account: Account, topic: str, *messages: str, age: float = 3600) -> None:
    for message in messages:
        account.client("sns").publish(TopicArn=topic, Message=message)
    age_http_retries(account.endpoint_url, 0)
    age_http_retries(account.endpoint_url, age)


def test_the_partner_confirms_through_the_subscribe_url(account: Account, partner_of: Any) -> None:
    topic = http_topic(account, "Confirmed")
    subscription = subscribe(account, topic)
    assert pending(account, subscription)

    partner = partner_of(account, Always(200))
    age_http_retries(account.endpoint_url, 0)

    (confirmation,) = partner.confirmations()
    assert confirmation.topic_arn == topic
    assert not pending(account, subscription)


def test_an_unmapped_host_stays_pending_and_gets_nothing(account: Account) -> None:
    topic = http_topic(account, "Unmapped")
    subscription = subscribe(account, topic)

    deliver(account, topic, "hello")

    assert pending(account, subscription)
    assert attempts_of(account, topic) == []


def test_the_examples_policy_retries_a_failing_partner_51_times_on_its_schedule(
    account: Account, partner_of: Any
) -> None:
    topic = http_topic(account, "Failing")
    partner_of(account, Always(503))
    subscribe(account, topic, EXAMPLE_POLICY)

    deliver(account, topic, "never taken")

    attempts = attempts_of(account, topic)
    retry = EXAMPLE_POLICY["healthyRetryPolicy"]
    assert len(attempts) == retry["numRetries"] + 1 == 51
    waits = [b["at_seconds"] - a["at_seconds"] for a, b in itertools.pairwise(attempts)]
    # The documented phases: 3 at once (spaced by the throttle, 10 a second), 2 after
    # minDelayTarget, the backoff rising to maxDelayTarget, 35 after maxDelayTarget.
    assert waits[:5] == pytest.approx([0.1, 0.1, 0.1, 1.0, 1.0])
    assert waits[5:15] == sorted(waits[5:15])
    assert waits[-35:] == pytest.approx([60.0] * 35)
    # The product's own reading of the policy (its schedule preview) gives the same spacing.
    product = [a.delay_seconds for a in EXAMPLE.schedule()[1:]]
    assert waits == pytest.approx([max(w, 0.1) for w in product], abs=1e-3)
    assert [a["result"] for a in attempts] == ["retry"] * 50 + ["FAILURE"]
    (record,) = account.records(f"sns/us-east-1/{account.id}/Failing/Failure")
    delivery = record["delivery"]
    assert (delivery["attempts"], delivery["statusCode"]) == (51, 503)
    assert delivery["providerResponse"] == "503 Service Unavailable"
    assert delivery["dwellTimeMs"] == pytest.approx(sum(waits) * 1000, abs=2)
    row = ledger_of(account, topic)
    assert (row["deliveries"], row["attempts"], row["failures"], row["retried"]) == (1, 51, 1, 1)


def test_a_4xx_ends_the_delivery_as_a_logged_success(account: Account, partner_of: Any) -> None:
    topic = http_topic(account, "Rejected")
    partner_of(account, Always(400))
    subscribe(account, topic)

    deliver(account, topic, "rejected")

    (attempt,) = attempts_of(account, topic)
    assert (attempt["status_code"], attempt["result"]) == (400, "SUCCESS")
    (record,) = account.records(f"sns/us-east-1/{account.id}/Rejected")
    assert record["status"] == "SUCCESS"
    assert (record["delivery"]["statusCode"], record["delivery"]["attempts"]) == (400, 1)
    assert record["delivery"]["providerResponse"] == "Bad Request"
    row = ledger_of(account, topic)
    assert (row["successes"], row["http_4xx"], row["retried"]) == (1, 1, 0)


def test_a_success_after_retries_counts_its_attempts(account: Account, partner_of: Any) -> None:
    topic = http_topic(account, "Recovered")
    partner_of(account, Sequence(502, 500))
    subscribe(account, topic)

    deliver(account, topic, "recovered")

    attempts = attempts_of(account, topic)
    assert [a["status_code"] for a in attempts] == [502, 500, 200]
    # SNS's default policy: 3 retries, 20 s apart.
    assert [a["at_seconds"] for a in attempts] == [0.0, 20.0, 40.0]
    (record,) = account.records(f"sns/us-east-1/{account.id}/Recovered")
    assert (record["status"], record["delivery"]["attempts"]) == ("SUCCESS", 3)
    assert record["delivery"]["dwellTimeMs"] == 40_000
    row = ledger_of(account, topic)
    assert (row["retried"], row["retried_succeeded"], row["attempts"]) == (1, 1, 3)


def test_a_throttled_subscription_spaces_its_requests(account: Account, partner_of: Any) -> None:
    topic = http_topic(account, "Throttled")
    partner_of(account, Always(200))
    subscribe(account, topic, {"throttlePolicy": {"maxReceivesPerSecond": 2}})

    deliver(account, topic, "a", "b", "c", age=5)

    attempts = attempts_of(account, topic)
    assert [a["attempt"] for a in attempts] == [1, 1, 1]
    # Published within a moment, sent half a second apart; the wait counts in the dwell time.
    sent = [a["local_time"] for a in attempts]
    assert [b - a for a, b in itertools.pairwise(sent)] == pytest.approx([0.5, 0.5])
    records = account.records(f"sns/us-east-1/{account.id}/Throttled")
    dwell = sorted(r["delivery"]["dwellTimeMs"] for r in records)
    assert dwell == [round(a["at_seconds"] * 1000) for a in attempts]
    assert dwell[0] == 0
    assert 400 < dwell[1] <= 500 < dwell[2] <= 1000


def test_a_delivery_whose_retries_run_out_goes_to_the_dead_letter_queue(
    account: Account, partner_of: Any
) -> None:
    topic = http_topic(account, "Dead")
    partner_of(account, Always(504))
    dlq = account.queue("dead-letters")
    subscription = subscribe(account, topic)
    account.client("sns").set_subscription_attributes(
        SubscriptionArn=subscription,
        AttributeName="RedrivePolicy",
        AttributeValue=json.dumps({"deadLetterTargetArn": dlq}),
    )

    deliver(account, topic, "kept")

    sqs = account.client("sqs")
    url = sqs.get_queue_url(QueueName="dead-letters")["QueueUrl"]
    (message,) = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)["Messages"]
    assert json.loads(message["Body"])["Message"] == "kept"


def test_the_records_read_as_the_delivery_report_reads_them(
    account: Account, partner_of: Any
) -> None:
    """The report's own rules on the records: schema fields, the timestamp, the failure's
    cause (a 5xx to the end, and an endpoint that refuses the connection), the 4xx success."""
    topic = http_topic(account, "Partners")
    partner = partner_of(account, Sequence(400, 503, 503, 503, 503))
    subscribe(account, topic)
    deliver(account, topic, "rejected", "failed")
    partner.__exit__(None, None, None)  # the partner is gone: no connection at all
    deliver(account, topic, "unanswered")

    declared = set(schema_fields(RECORD_SCHEMA))
    outcomes = []
    for group in (
        f"sns/us-east-1/{account.id}/Partners",
        f"sns/us-east-1/{account.id}/Partners/Failure",
    ):
        for record in account.records(group):
            assert set(record_fields(record)) <= declared
            assert parse_lenient(record["notification"]["timestamp"]) is not None
            delivery = record["delivery"]
            code = delivery.get("statusCode")
            status, response = record["status"], delivery["providerResponse"]
            outcomes.append(
                (status, code, delivery["attempts"], classify(status, "http/s", code, response))
            )

    assert sorted(outcomes, key=str) == sorted(
        [
            ("SUCCESS", 400, 1, None),
            ("FAILURE", 503, 4, "http_5xx"),
            ("FAILURE", None, 4, "connection_error"),
        ],
        key=str,
    )
