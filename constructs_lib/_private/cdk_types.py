"""Telling aws-cdk-lib's queues, topics and keys apart at the constructs' boundary.

aws-cdk-lib's interfaces (``sqs.IQueue``, ``sns.ITopic``, ``kms.IKey``) are protocols that
``isinstance`` refuses to check; its own resources, made or imported, all derive from a base
class (``QueueBase``, ``TopicBase``), and a class of one's own that implements the interface
says so through jsii (``@jsii.implements``).
"""

from __future__ import annotations

from typing import Any, TypeGuard

from aws_cdk import Stack, Token
from aws_cdk import aws_kms as kms
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sqs as sqs


def _implements(value: object, interface: Any) -> bool:
    return interface in getattr(type(value), "__jsii_ifaces__", ())


def is_queue(value: object) -> TypeGuard[sqs.IQueue]:
    """Whether ``value`` is an aws-cdk-lib queue: ``sqs.Queue``, an imported one, or an
    ``sqs.IQueue`` of one's own."""
    return isinstance(value, sqs.QueueBase) or _implements(value, sqs.IQueue)


def is_topic(value: object) -> TypeGuard[sns.ITopic]:
    """Whether ``value`` is an aws-cdk-lib topic: ``sns.Topic``, an imported one, or an
    ``sns.ITopic`` of one's own."""
    return isinstance(value, sns.TopicBase) or _implements(value, sns.ITopic)


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
