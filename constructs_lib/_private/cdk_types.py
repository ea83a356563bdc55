"""What synth knows of aws-cdk-lib's queues, topics and keys, made in this app or imported: a
queue's or topic's name and a queue's ARN as text where they are known, and whether two key
objects are one key."""

from __future__ import annotations

from aws_cdk import Stack, Token
from aws_cdk import aws_kms as kms
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sqs as sqs


def same_key(first: kms.IKey | None, second: kms.IKey | None) -> bool:
    """Whether two key objects stand for one key of this app (the same construct)."""
    return first is not None and second is not None and first.node.path == second.node.path


def literal_queue_name(queue: sqs.IQueue) -> str | None:
    """The queue's name when synth knows it: from an imported queue's ARN, or the name a queue
    of this app was created with; ``None`` when CloudFormation would choose it."""
    cfn = queue.node.default_child
    if isinstance(cfn, sqs.CfnQueue):
        name = cfn.queue_name
        return name if isinstance(name, str) and not Token.is_unresolved(name) else None
    name = queue.queue_name
    return None if Token.is_unresolved(name) else name


def computed_queue_arn(queue: sqs.IQueue) -> str | None:
    """The ARN of a queue of this app computed from its name (without a reference to it, which
    a key encrypting the queue cannot hold: the two would depend on each other); an imported
    queue's ARN as given; ``None`` for a queue CloudFormation names."""
    if not isinstance(queue.node.default_child, sqs.CfnQueue):
        return None if Token.is_unresolved(queue.queue_arn) else queue.queue_arn
    name = literal_queue_name(queue)
    return Stack.of(queue).format_arn(service="sqs", resource=name) if name else None


def literal_topic_name(topic: sns.ITopic) -> str | None:
    """The topic's name when synth knows it: the name a topic of this app was created with, or
    an imported topic's (from its ARN); ``None`` when CloudFormation would choose it."""
    cfn = topic.node.default_child
    name = cfn.topic_name if isinstance(cfn, sns.CfnTopic) else topic.topic_name
    return name if isinstance(name, str) and not Token.is_unresolved(name) else None
