"""The constructs used wrongly, as a team new to them would: each mistake is refused at synth
with a ``TypeError`` or ``ValueError`` whose message starts with the keyword and says what to
pass, or is understood and does the right thing. Never an ``AttributeError``, never a
JavaScript stack, never a value silently turned into something else."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from aws_cdk import App, Duration, Environment, Size, Stack
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sqs as sqs

from constructs_lib import (
    AccountBridge,
    BridgeAccount,
    BridgeIngress,
    CrossAccountQueueSubscription,
    CrossAccountRelay,
    DeliveryLogBucket,
    DeliveryLoggedTopic,
    DeliveryLogStream,
    EndpointQueue,
    MessageBodyBucket,
    MessagingAlarms,
    MessagingDashboard,
    RelayDirection,
    RelayRoute,
    RelayTiming,
    SnsHttpsEndpoint,
)

pytestmark = pytest.mark.synth

SALES = "111111111111"
BILLING = "222222222222"
REGION = "us-east-1"
INGRESS = "arn:aws:sqs:us-east-1:222222222222:Billing-ingress"
HANDLER = "partner.handler:handle"


@dataclass(frozen=True)
class Refused:
    """The mistake is refused with ``kind`` and a message matching ``message``."""

    kind: type[Exception]
    message: str


@dataclass(frozen=True)
class Understood:
    """The mistake is understood: ``holds`` is true of what the construct built."""

    holds: Callable[[Any], bool]


@dataclass(frozen=True)
class Misuse:
    name: str
    build: Callable[[Stack, Path], Any]
    expected: Refused | Understood


def queue(stack: Stack, **keywords: Any) -> EndpointQueue:
    return EndpointQueue(stack, "Queue", endpoint_name="Billing", **keywords)


def shadow(stack: Stack, construct_id: str = "Shadow") -> EndpointQueue:
    return EndpointQueue(
        stack,
        construct_id,
        endpoint_name="Billing",
        visibility_timeout=RelayTiming.for_batch(10).visibility_timeout,
    )


def relay(stack: Stack, **keywords: Any) -> CrossAccountRelay:
    arguments: dict[str, Any] = {
        "direction": RelayDirection.OUTBOUND,
        "routes": [RelayRoute(shadow(stack), INGRESS)],
        "local_endpoints": ["Sales"],
        **keywords,
    }
    return CrossAccountRelay(stack, "Relay", **arguments)


def topic(stack: Stack, **keywords: Any) -> DeliveryLoggedTopic:
    return DeliveryLoggedTopic(stack, "Topic", topic_name="OrderBilled", **keywords)


def endpoint(stack: Stack, handler_code: Path, **keywords: Any) -> SnsHttpsEndpoint:
    arguments: dict[str, Any] = {"handler": HANDLER, "handler_code": handler_code, **keywords}
    return SnsHttpsEndpoint(stack, "Webhook", topic=topic(stack), **arguments)


def log_stream(stack: Stack, **keywords: Any) -> DeliveryLogStream:
    arguments: dict[str, Any] = {"source_accounts": [SALES], **keywords}
    return DeliveryLogStream(
        stack, "Stream", log_bucket=DeliveryLogBucket(stack, "Logs"), **arguments
    )


def billing_stack(stack: Stack) -> Stack:
    """A stack of another account (Billing's) in the same app."""
    app = stack.node.root
    assert isinstance(app, App)
    return Stack(app, "Billing", env=Environment(account=BILLING, region=REGION))


BILLING_QUEUE = f"arn:aws:sqs:{REGION}:{BILLING}:Billing"
BILLING_TOPIC = f"arn:aws:sns:{REGION}:{BILLING}:OrderBilled"

MISUSES = [
    Misuse(
        "another account's imported queue subscribed to a topic of this one",
        lambda s, _: topic(s).add_queue_subscription(
            "Billing", sqs.Queue.from_queue_arn(s, "Imported", BILLING_QUEUE)
        ),
        Refused(
            ValueError,
            r"^queue: S/Imported is a queue of account 222222222222, not of .*"
            r"create CrossAccountQueueSubscription",
        ),
    ),
    Misuse(
        "another account's endpoint queue subscribed to a topic of this one",
        lambda s, _: topic(s).add_queue_subscription(
            "Billing", EndpointQueue(billing_stack(s), "Billing", endpoint_name="Billing")
        ),
        Refused(ValueError, r"^queue: Billing/Billing/Queue is a queue of account 222222222222"),
    ),
    Misuse(
        "a subscription made for another account's queue",
        lambda s, _: CrossAccountQueueSubscription(
            s,
            "Sub",
            topic_arn=BILLING_TOPIC,
            subscription_name="Audit",
            queue=EndpointQueue(billing_stack(s), "Billing", endpoint_name="Billing"),
        ),
        Refused(ValueError, r"^queue: .* of account 222222222222, .*in a stack of the queue's"),
    ),
    Misuse(
        "an alarm on another account's queue, whose metrics are not here",
        lambda s, _: MessagingAlarms(s, "Alarms").watch_dead_letter_queue(
            "Billing", sqs.Queue.from_queue_arn(s, "Imported", BILLING_QUEUE)
        ),
        Refused(ValueError, r"^queue: S/Imported is a queue of account 222222222222.*Messaging"),
    ),
    Misuse(
        "a key of another account's stack, a cross-account reference",
        lambda s, _: queue(s, encryption_key=kms.Key(billing_stack(s), "Key")),
        Refused(
            ValueError,
            r"^encryption_key: Billing/Key belongs to the stack Billing of "
            r"account 222222222222.*Fn::GetStackOutput.*pass its ARN as text",
        ),
    ),
    Misuse(
        "a token of another account's stack, a cross-account reference",
        lambda s, _: topic(s, logged_protocols=["sqs"]).stream_logs_to(
            kms.Key(billing_stack(s), "Key").key_arn
        ),
        Refused(ValueError, r"^destination_arn: Billing/Key/Resource belongs to the stack"),
    ),
    Misuse(
        "an encryption given as its value",
        lambda s, _: queue(s, encryption="KMS"),
        Understood(lambda q: isinstance(q.encryption_key, kms.Key)),
    ),
    Misuse(
        "an encryption in the wrong case",
        lambda s, _: queue(s, encryption="kms"),
        Refused(ValueError, r"^encryption: str 'kms' is not a member of EndpointQueueEncryption"),
    ),
    Misuse(
        "a direction given as its value",
        lambda s, _: relay(s, direction="outbound"),
        Understood(lambda r: '"direction":"outbound"' in r.configuration),
    ),
    Misuse(
        "a direction that is no direction",
        lambda s, _: relay(s, direction="out"),
        Refused(ValueError, r"^direction: str 'out' is not a member of RelayDirection"),
    ),
    Misuse(
        "local endpoints given as one string",
        lambda s, _: relay(s, local_endpoints="Billing"),
        Refused(TypeError, r"^local_endpoints: expected a list, got the string 'Billing'"),
    ),
    Misuse(
        "a batch size given as text",
        lambda s, _: relay(s, batch_size="10"),
        Refused(TypeError, r"^batch_size: expected a whole number, got str '10'"),
    ),
    Misuse(
        "a batch size Lambda refuses",
        lambda s, _: relay(s, batch_size=10_001),
        Refused(ValueError, r"^batch_size: must be from 1 to 10000"),
    ),
    Misuse(
        "a route whose source is a queue's name",
        lambda s, _: relay(s, routes=[RelayRoute("Billing", INGRESS)]),  # type: ignore[arg-type]
        Refused(TypeError, r"^source: expected"),
    ),
    Misuse(
        "a route whose destination is not a queue ARN",
        lambda s, _: relay(s, routes=[RelayRoute(shadow(s, "Other"), "Billing-ingress")]),
        Refused(ValueError, r"^routes: destination_arn of the route reading"),
    ),
    Misuse(
        "a relay source that hides a message for less than the relay may run",
        lambda s, _: relay(
            s, routes=[RelayRoute(EndpointQueue(s, "Short", endpoint_name="B"), INGRESS)]
        ),
        Refused(ValueError, r"^routes: the source queue S/Short/Queue has a visibility timeout"),
    ),
    Misuse(
        "logged protocols given as values",
        lambda s, _: topic(s, logged_protocols=["sqs"]),
        Understood(lambda t: t.topic_name == "OrderBilled"),
    ),
    Misuse(
        "a FIFO topic logging a protocol it never delivers to",
        lambda s, _: topic(s, fifo=True, logged_protocols=["http/s"]),
        Refused(ValueError, r"^logged_protocols: a FIFO topic delivers to SQS queues alone"),
    ),
    Misuse(
        "a FIFO topic asked later to log a protocol it never delivers to",
        lambda s, _: topic(s, fifo=True).log_deliveries("lambda"),  # type: ignore[arg-type]
        Refused(ValueError, r"^protocol: a FIFO topic delivers to SQS queues alone"),
    ),
    Misuse(
        "a logged protocol SNS does not log",
        lambda s, _: topic(s, logged_protocols=["smtp"]),
        Refused(ValueError, r"^logged_protocols: \[0\]: str 'smtp' is not a member"),
    ),
    Misuse(
        "a delivery policy given as its JSON form",
        lambda s, _: topic(s).add_url_subscription(
            "Partner",
            "https://partner.example.com/sns",
            delivery_policy={"healthyRetryPolicy": {"numRetries": 5}},  # type: ignore[arg-type]
        ),
        Understood(lambda pair: pair[0].node.id == "Partner"),
    ),
    Misuse(
        "a delivery policy SNS refuses",
        lambda s, _: topic(s).add_url_subscription(
            "Partner",
            "https://partner.example.com/sns",
            delivery_policy={"healthyRetryPolicy": {"numRetries": 500}},  # type: ignore[arg-type]
        ),
        Refused(ValueError, r"^delivery_policy: numRetries \(num_retries\): must be from 0"),
    ),
    Misuse(
        "sender accounts given as one string",
        lambda s, _: queue(s, sender_accounts="222222222222"),
        Refused(TypeError, r"^sender_accounts: expected a list, got the string"),
    ),
    Misuse(
        "sender accounts added as one list",
        lambda s, _: queue(s).add_sender_accounts(["222222222222"]),  # type: ignore[arg-type]
        Refused(TypeError, r"^account_ids: give each as its own argument"),
    ),
    Misuse(
        "a sender account id that is not one",
        lambda s, _: queue(s, sender_accounts=["2222"]),
        Refused(ValueError, r"^sender_accounts: account ids are exactly 12 digits"),
    ),
    Misuse(
        "the queue's own account as a sender, which would admit every principal of it",
        lambda s, _: queue(s, sender_accounts=[SALES]),
        Refused(ValueError, r"^sender_accounts: 111111111111 is this stack's own account.*IAM"),
    ),
    Misuse(
        "the queue's own account added as a sender",
        lambda s, _: queue(s).add_sender_accounts(SALES),
        Refused(ValueError, r"^account_ids: 111111111111 is this stack's own account"),
    ),
    Misuse(
        "the topic's own account as a publisher",
        lambda s, _: topic(s, publisher_accounts=[SALES]),
        Refused(ValueError, r"^publisher_accounts: 111111111111 is this stack's own account"),
    ),
    Misuse(
        "the topic's own account as a subscriber",
        lambda s, _: topic(s, subscriber_accounts=[SALES]),
        Refused(ValueError, r"^subscriber_accounts: 111111111111 is this stack's own account"),
    ),
    Misuse(
        "the topic's own account added as a subscriber",
        lambda s, _: topic(s).add_subscriber_accounts(SALES),
        Refused(ValueError, r"^account_ids: 111111111111 is .*add_queue_subscription"),
    ),
    Misuse(
        "the bridge's own account as a sender to its ingress queue",
        lambda s, _: AccountBridge(
            s,
            "Bridge",
            account_name="Sales",
            ingress=[BridgeIngress(queue(s), sender_accounts=[BridgeAccount("Sales", SALES)])],
        ),
        Refused(ValueError, r"^sender_accounts: 111111111111 is this stack's own account"),
    ),
    Misuse(
        "a retention period given as a number of days",
        lambda s, _: queue(s, retention_period=4),
        Refused(TypeError, r"^retention_period: expected aws_cdk.Duration, got int 4"),
    ),
    Misuse(
        "a retention period SQS refuses",
        lambda s, _: queue(s, retention_period=Duration.seconds(30)),
        Refused(ValueError, r"^retention_period: 30 seconds is under SQS's minimum of 1 minute"),
    ),
    Misuse(
        "a retention period over SQS's 14 days, never blamed on the dead-letter queue",
        lambda s, _: queue(s, retention_period=Duration.days(30)),
        Refused(ValueError, r"^retention_period: 30 days is over SQS's maximum of 14 days"),
    ),
    Misuse(
        "immediate retries whose default receives SQS refuses, never blamed on max_receive_count",
        lambda s, _: queue(s, immediate_retries=999),
        Refused(ValueError, r"^immediate_retries: 999 immediate retries need 1000 receives"),
    ),
    Misuse(
        "a dead-letter retention period SQS refuses",
        lambda s, _: queue(s, dead_letter_retention_period=Duration.days(15)),
        Refused(ValueError, r"^dead_letter_retention_period: 15 days is over SQS's maximum"),
    ),
    Misuse(
        "a visibility timeout SQS refuses",
        lambda s, _: queue(s, visibility_timeout=Duration.hours(13)),
        Refused(ValueError, r"^visibility_timeout: aws-cdk-lib refuses it: visibility timeout"),
    ),
    Misuse(
        "fewer receives than the endpoint's immediate retries need",
        lambda s, _: queue(s, immediate_retries=5, max_receive_count=3),
        Refused(ValueError, r"^max_receive_count: 3 receives end before the endpoint's 5"),
    ),
    Misuse(
        "content-based deduplication on a standard queue",
        lambda s, _: queue(s, content_based_deduplication=True),
        Refused(ValueError, r"^content_based_deduplication: only FIFO queues deduplicate"),
    ),
    Misuse(
        "the AWS-managed SQS key",
        lambda s, _: queue(
            s, encryption_key=kms.Alias.from_alias_name(s, "AwsSqs", "alias/aws/sqs")
        ),
        Refused(ValueError, r"^encryption_key: the AWS-managed key alias/aws/sqs cannot be used"),
    ),
    Misuse(
        "a flag given as text",
        lambda s, _: queue(s, fifo="true"),
        Refused(TypeError, r"^fifo: expected True or False, got str 'true'"),
    ),
    Misuse(
        "a misspelt keyword",
        lambda s, _: EndpointQueue(s, "Queue", endpointname="Billing"),  # type: ignore[call-arg]
        Refused(
            TypeError, r"unexpected keyword argument 'endpointname' \(did you mean endpoint_name"
        ),
    ),
    Misuse(
        "no scope",
        lambda _s, _: EndpointQueue(None, "Queue", endpoint_name="Billing"),  # type: ignore[arg-type]
        Refused(TypeError, r"^scope: expected Construct, got NoneType None"),
    ),
    Misuse(
        "a handler path without its function",
        lambda s, code: endpoint(s, code, handler="partner.handler"),
        Refused(ValueError, r"^handler: 'partner.handler' is not 'package.module:function'"),
    ),
    Misuse(
        "a handler module missing from handler_code",
        lambda s, code: endpoint(s, code, handler="partner.handlers:handle"),
        Refused(ValueError, r"^handler: module 'partner.handlers' is not in handler_code"),
    ),
    Misuse(
        "a memory size Lambda refuses",
        lambda s, code: endpoint(s, code, memory_size=64),
        Refused(ValueError, r"^memory_size: must be a whole number from 128 to 10240"),
    ),
    Misuse(
        "a replay window shorter than the delivery policy's retries",
        lambda s, code: endpoint(s, code, replay_window=Duration.minutes(1)),
        Refused(ValueError, r"^replay_window: 60 s is shorter than the delivery policy's"),
    ),
    Misuse(
        "an HTTPS port no server listens on",
        lambda s, _: topic(s).add_url_subscription("P", "https://partner.example.com:99999/sns"),
        Refused(ValueError, r"^url: .*the port must be from 1 to 65535"),
    ),
    Misuse(
        "a plain http URL",
        lambda s, _: topic(s).add_url_subscription("P", "http://partner.example.com/sns"),
        Refused(ValueError, r"^url: 'http://partner.example.com/sns' must be an https:// URL"),
    ),
    Misuse(
        "a filter policy value that is not a list",
        lambda s, _: topic(s).add_url_subscription(
            "P", "https://partner.example.com/sns", filter_policy={"kind": "billed"}
        ),
        Refused(ValueError, r"^filter_policy.kind: takes a list of values"),
    ),
    Misuse(
        "a topic named where an ARN is meant",
        lambda s, _: CrossAccountQueueSubscription(
            s, "Sub", topic_arn="OrderBilled", subscription_name="Sales", queue=queue(s)
        ),
        Refused(ValueError, r"^topic_arn: 'OrderBilled' is not an SNS topic ARN"),
    ),
    Misuse(
        "every topic allowed to post to an HTTPS endpoint",
        lambda s, code: endpoint(s, code, allowed_topic_arns=["*"]),
        Refused(ValueError, r"^allowed_topic_arns: '\*' is not an SNS topic ARN"),
    ),
    Misuse(
        "a dead-letter queue that forgets sooner than its queue",
        lambda s, _: queue(s, dead_letter_retention_period=Duration.days(1)),
        Refused(ValueError, r"^dead_letter_retention_period: 1 day is shorter than retention"),
    ),
    Misuse(
        "a topic name SNS refuses",
        lambda s, _: DeliveryLoggedTopic(s, "Topic", topic_name="Order Billed"),
        Refused(ValueError, r"^topic_name: 'Order Billed': SNS topic names use"),
    ),
    Misuse(
        "a body expiration longer than any message lives",
        lambda s, _: MessageBodyBucket(s, "Bodies", expiration=Duration.days(30)),
        Refused(ValueError, r"^expiration"),
    ),
    Misuse(
        "an alarm age given in seconds",
        lambda s, _: MessagingAlarms(s, "Alarms", max_message_age=900),  # type: ignore[arg-type]
        Refused(TypeError, r"^max_message_age: expected aws_cdk.Duration, got int 900"),
    ),
    Misuse(
        "a Firehose buffering interval over 15 minutes",
        lambda s, _: log_stream(s, buffering_interval=Duration.minutes(20)),
        Refused(ValueError, r"^buffering_interval: Firehose takes whole seconds from 0 to 900"),
    ),
    Misuse(
        "a Firehose buffer over 128 MiB",
        lambda s, _: log_stream(s, buffering_size=Size.mebibytes(500)),
        Refused(ValueError, r"^buffering_size: Firehose takes whole MiB from 1 to 128"),
    ),
    Misuse(
        "an alarm period CloudWatch refuses",
        lambda s, _: MessagingAlarms(s, "Alarms", evaluation_period=Duration.seconds(45)),
        Refused(ValueError, r"^evaluation_period: CloudWatch takes a period of 1, 5, 10 or 30"),
    ),
    Misuse(
        "a dashboard name with a space, which CloudWatch refuses",
        lambda s, _: MessagingDashboard(s, "Dashboard", dashboard_name="Sales Prod"),
        Refused(ValueError, r"^dashboard_name: CloudWatch takes 1 to 255 letters"),
    ),
    Misuse(
        "a dashboard period CloudWatch refuses",
        lambda s, _: MessagingDashboard(s, "Dashboard", period=Duration.seconds(45)),
        Refused(ValueError, r"^period: CloudWatch takes a period of 1, 5, 10 or 30"),
    ),
    Misuse(
        "a dashboard given as its name to the bridge",
        lambda s, _: AccountBridge(
            s,
            "Bridge",
            account_name="Sales",
            dashboard="Messaging-Sales",  # type: ignore[arg-type]
        ),
        Refused(TypeError, r"^dashboard: expected .*MessagingDashboard"),
    ),
    Misuse(
        "a relay watched by its function",
        lambda s, _: MessagingAlarms(s, "Alarms").watch_relay(
            "Relay",
            lambda_.Function.from_function_name(s, "F", "relay"),  # type: ignore[arg-type]
        ),
        Refused(TypeError, r"^relay: expected .*CrossAccountRelay"),
    ),
    Misuse(
        "source accounts of a log stream given as one string",
        lambda s, _: log_stream(s, source_accounts=SALES),
        Refused(TypeError, r"^source_accounts: expected a list, got the string"),
    ),
]


@pytest.mark.parametrize("misuse", MISUSES, ids=lambda misuse: misuse.name)
def test_a_misuse_is_refused_naming_the_keyword_or_understood(
    misuse: Misuse, partner_handler: Path
) -> None:
    stack = Stack(App(), "S", env=Environment(account=SALES, region="us-east-1"))
    expected = misuse.expected
    if isinstance(expected, Understood):
        assert expected.holds(misuse.build(stack, partner_handler))
        return
    with pytest.raises(expected.kind, match=expected.message) as refusal:
        misuse.build(stack, partner_handler)
    assert len(str(refusal.value).splitlines()) == 1, "one line, no JavaScript stack"


def test_the_table_holds_at_least_twenty_five_misuses() -> None:
    assert len(MISUSES) >= 25
    assert len({misuse.name for misuse in MISUSES}) == len(MISUSES)
