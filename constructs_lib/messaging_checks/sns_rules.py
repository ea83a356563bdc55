"""The rules on SNS: a subscription SNS cannot deliver through, and a topic whose failed
deliveries leave no trace.

Each judges an ``AWS::SNS::Subscription`` (or ``AWS::SNS::Topic``) against the resources of its
own stack's template; a queue, key or topic outside it (an imported ARN, another stack's
export) cannot be read, and the rule answers not applicable rather than guess.
"""

from __future__ import annotations

from cdk_nag import NagRuleCompliance

from constructs_lib.messaging_checks._policy import Access, access, access_to_all, sns_request
from constructs_lib.messaging_checks._rule import (
    COMPLIANT,
    NON_COMPLIANT,
    NOT_APPLICABLE,
    MessagingRule,
    Subject,
    verdict,
)
from constructs_lib.messaging_checks._template import (
    QUEUE,
    SUBSCRIPTION,
    TOPIC,
    KeyUse,
    StackTemplate,
    json_property,
)

LOGGED_PROTOCOLS = {
    "sqs": "sqs",
    "lambda": "lambda",
    "http": "http/s",
    "https": "http/s",
    "firehose": "firehose",
    "application": "application",
}
"""Each subscription protocol and the ``DeliveryStatusLogging`` protocol that logs its
deliveries; SNS logs no delivery status for email and SMS."""
KEY_ACTIONS = ("kms:GenerateDataKey", "kms:Decrypt")
"""What SNS asks of a queue's key to put a message into an encrypted queue."""

_ACCESS_VERDICT = {
    Access.ADMITS: COMPLIANT,
    Access.REFUSES: NON_COMPLIANT,
    Access.UNKNOWN: NOT_APPLICABLE,
}


def _sqs_delivery(subject: Subject) -> tuple[str, str] | None:
    """The queue of the stack an SQS subscription delivers to and its topic's ARN as text, or
    ``None`` when either is outside what the template tells."""
    properties = subject.properties
    if properties.get("Protocol") != "sqs":
        return None
    t = subject.template
    queue = t.target(properties.get("Endpoint"), QUEUE)
    topic = t.render(properties.get("TopicArn"))
    return None if queue is None or topic is None else (queue, topic)


def key_admits(t: StackTemplate, queue: str, topic: str) -> NagRuleCompliance:
    """Whether SNS may use the key of a queue of the stack to deliver from ``topic``: no key
    (SQS-managed encryption) needs no grant; the AWS-managed ``alias/aws/sqs`` never grants."""
    key = t.queue_key(queue)
    if key == KeyUse.NONE:
        return COMPLIANT
    if key == KeyUse.AWS_MANAGED:
        return NON_COMPLIANT
    if key == KeyUse.UNKNOWN:
        return NOT_APPLICABLE
    requests = [sns_request(action, topic, t.arn_of(queue)) for action in KEY_ACTIONS]
    return _ACCESS_VERDICT[access_to_all([t.properties(key).get("KeyPolicy")], requests, t)]


def policy_admits(t: StackTemplate, queue: str, topic: str) -> NagRuleCompliance:
    """Whether the policies of a queue of the stack let SNS send from ``topic`` (a queue with
    no policy in the stack refuses: SQS admits no service principal by default)."""
    request = sns_request("sqs:SendMessage", topic, t.arn_of(queue))
    return _ACCESS_VERDICT[access(t.queue_policies(queue), request, t)]


def subscription_queue_key(subject: Subject) -> NagRuleCompliance:
    delivery = _sqs_delivery(subject)
    return NOT_APPLICABLE if delivery is None else key_admits(subject.template, *delivery)


def subscription_queue_policy(subject: Subject) -> NagRuleCompliance:
    delivery = _sqs_delivery(subject)
    return NOT_APPLICABLE if delivery is None else policy_admits(subject.template, *delivery)


def _dead_letter_target(subject: Subject) -> object:
    redrive = json_property(subject.properties.get("RedrivePolicy"))
    return None if redrive is None else redrive.get("deadLetterTargetArn")


def subscription_dlq(subject: Subject) -> NagRuleCompliance:
    return verdict(_dead_letter_target(subject) is None)


def subscription_dlq_access(subject: Subject) -> NagRuleCompliance:
    t = subject.template
    dead_letter_queue = t.target(_dead_letter_target(subject), QUEUE)
    topic = t.render(subject.properties.get("TopicArn"))
    if dead_letter_queue is None or topic is None:
        return NOT_APPLICABLE
    verdicts = {
        policy_admits(t, dead_letter_queue, topic),
        key_admits(t, dead_letter_queue, topic),
    }
    if NON_COMPLIANT in verdicts:
        return NON_COMPLIANT
    return NOT_APPLICABLE if NOT_APPLICABLE in verdicts else COMPLIANT


def subscription_fifo(subject: Subject) -> NagRuleCompliance:
    """The subscribed queue (of an SQS subscription) and the dead-letter queue (of any) are of
    the topic's kind, where all of them are known."""
    t = subject.template
    properties = subject.properties
    topic_fifo = t.is_fifo_topic(properties.get("TopicArn"))
    if topic_fifo is None:
        return NOT_APPLICABLE
    queues = [t.is_fifo_queue(_dead_letter_target(subject))]
    if properties.get("Protocol") == "sqs":
        queues.append(t.is_fifo_queue(properties.get("Endpoint")))
    known = [fifo for fifo in queues if fifo is not None]
    if any(fifo != topic_fifo for fifo in known):
        return NON_COMPLIANT
    return COMPLIANT if known else NOT_APPLICABLE


def subscription_cross_account(subject: Subject) -> NagRuleCompliance:
    properties = subject.properties
    if properties.get("Protocol") != "sqs":
        return NOT_APPLICABLE
    t = subject.template
    if t.target(properties.get("Endpoint"), QUEUE) is not None:
        return COMPLIANT
    queue_account = t.account_of(t.render(properties.get("Endpoint")))
    if queue_account is None or t.account is None:
        return NOT_APPLICABLE
    return verdict(queue_account != t.account)


def delivered_protocols(t: StackTemplate, topic: str) -> set[str]:
    """The ``DeliveryStatusLogging`` protocols of what a topic delivers to: its subscriptions
    in the stack and its inline ones."""
    protocols = {
        str(t.properties(subscription).get("Protocol"))
        for subscription in t.of_type(SUBSCRIPTION)
        if t.target(t.properties(subscription).get("TopicArn"), TOPIC) == topic
    }
    protocols |= {
        str(inline.get("Protocol"))
        for inline in t.properties(topic).get("Subscription", [])
        if isinstance(inline, dict)
    }
    return {LOGGED_PROTOCOLS[p] for p in protocols if p in LOGGED_PROTOCOLS}


def topic_delivery_logging(subject: Subject) -> NagRuleCompliance:
    """Failures are logged for every protocol the topic delivers to in the stack, and for one
    at least when its subscribers are all elsewhere."""
    logged = {
        str(entry.get("Protocol"))
        for entry in subject.properties.get("DeliveryStatusLogging", [])
        if isinstance(entry, dict) and entry.get("FailureFeedbackRoleArn") is not None
    }
    needed = delivered_protocols(subject.template, subject.logical_id)
    return verdict(not logged or not needed <= logged)


RULES = (
    MessagingRule(
        "SubscriptionQueueKey",
        SUBSCRIPTION,
        "The subscribed queue's KMS key does not let SNS use it for the topic (the AWS-managed "
        "alias/aws/sqs key never does). Encrypt the queue with a customer-managed key whose "
        "policy allows kms:GenerateDataKey and kms:Decrypt to the service principal "
        "sns.amazonaws.com with aws:SourceArn of the topic, or use SQS-managed encryption.",
        "SNS encrypts each message into an encrypted queue with the queue's key; a key it may "
        "not use fails every delivery, and the message is lost unless a dead-letter queue "
        "takes it.",
        subscription_queue_key,
    ),
    MessagingRule(
        "SubscriptionQueuePolicy",
        SUBSCRIPTION,
        "The subscribed queue's policy does not admit the topic. Allow sqs:SendMessage to the "
        "service principal sns.amazonaws.com with the condition ArnEquals aws:SourceArn of the "
        "topic (aws-cdk-lib's SqsSubscription adds it; queue.grant_send_messages does not).",
        "SQS takes a message from SNS only if the queue's policy allows it for the topic; "
        "otherwise every delivery fails.",
        subscription_queue_policy,
    ),
    MessagingRule(
        "SubscriptionDlq",
        SUBSCRIPTION,
        "The subscription has no dead-letter queue (RedrivePolicy). Give it one "
        "(aws-cdk-lib: dead_letter_queue= of the subscription) that SNS may write to.",
        "After its retries SNS drops a message it could not deliver (a key or policy "
        "refusing, an endpoint down), unless the subscription's dead-letter queue keeps it "
        "for a redrive.",
        subscription_dlq,
    ),
    MessagingRule(
        "SubscriptionDlqAccess",
        SUBSCRIPTION,
        "SNS cannot write to the subscription's dead-letter queue: its policy or its KMS key "
        "does not admit the topic. Allow sqs:SendMessage (and the key's kms:GenerateDataKey "
        "and kms:Decrypt) to sns.amazonaws.com with aws:SourceArn of the topic.",
        "SNS writes to a dead-letter queue as it writes to a subscribed queue; one that "
        "refuses the topic loses the very messages it is there to keep.",
        subscription_dlq_access,
    ),
    MessagingRule(
        "SubscriptionFifo",
        SUBSCRIPTION,
        "A queue of the subscription is not of the topic's kind: a FIFO queue subscribed to a "
        "standard topic, a standard queue to a FIFO topic, or a dead-letter queue of the other "
        "kind. Subscribe and dead-letter to queues of the topic's kind.",
        "SNS refuses to deliver a standard topic to a FIFO queue, and a dead-letter queue of "
        "the wrong kind; a standard queue loses a FIFO topic's order and deduplication, so an "
        "endpoint handles messages twice or out of order.",
        subscription_fifo,
    ),
    MessagingRule(
        "SubscriptionCrossAccount",
        SUBSCRIPTION,
        "The subscription's queue belongs to another account than the stack's (the topic "
        "owner's). Subscribe from the queue owner's stack (constructs_lib's "
        "CrossAccountQueueSubscription there), with the topic's policy letting that account "
        "call sns:Subscribe.",
        "SNS asks the queue's account to confirm a subscription the topic's owner made; nobody "
        "does, so it stays pending confirmation and delivers nothing, while CloudFormation "
        "reports it created.",
        subscription_cross_account,
    ),
    MessagingRule(
        "TopicDeliveryLogging",
        TOPIC,
        "The topic logs no delivery failures for a protocol it delivers to (no "
        "DeliveryStatusLogging entry with a FailureFeedbackRoleArn). Log each (aws-cdk-lib: "
        "logging_configs= of the topic; constructs_lib's DeliveryLoggedTopic does it).",
        "Without delivery-status logging SNS records nothing when a delivery fails (a key or "
        "policy refusing, an endpoint gone), so a lost message goes unnoticed.",
        topic_delivery_logging,
    ),
)
