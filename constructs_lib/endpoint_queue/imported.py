"""The endpoint queues that exist already, behind :class:`IEndpointQueue`: a queue imported by
its ARNs (:meth:`EndpointQueue.from_queue_arn`) and an aws-cdk-lib queue
(:meth:`EndpointQueue.from_queue`), each checked against what it knows of itself and SQS's
redrive rule."""

from __future__ import annotations

from collections.abc import Callable
from typing import NoReturn, TypeVar

from aws_cdk import Duration, Token
from aws_cdk import aws_kms as kms
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from constructs_lib._private.cdk_types import same_key
from constructs_lib.defaults import SQS_DEFAULT_VISIBILITY_TIMEOUT
from constructs_lib.validation import (
    require_customer_managed_key,
    require_customer_managed_queue_key,
    require_range,
)
from cross_account_runtime.nservicebus.locations import AddressError
from cross_account_runtime.nservicebus.queue_arn import FIFO_SUFFIX, QueueArn, parse_queue_arn
from cross_account_runtime.nservicebus.redrive import (
    MAX_RECEIVE_COUNT_RANGE,
    dead_letter_kind_problem,
    dead_letter_queue_problem,
)

_T = TypeVar("_T")


class _EndpointQueueView(Construct):
    """A queue that exists already, with its DLQ and key, behind :class:`IEndpointQueue`."""

    queue: sqs.IQueue
    dead_letter_queue: sqs.IQueue
    encryption_key: kms.IKey | None
    fifo: bool
    max_receive_count: int | None
    visibility_timeout: Duration | None

    @property
    def queue_arn(self) -> str:
        """The queue's ARN."""
        return self.queue.queue_arn


class _ImportedEndpointQueue(_EndpointQueueView):
    """A queue and DLQ (and key) imported by ARN, with the settings it was told."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        queue_arn: str,
        dead_letter_queue_arn: str,
        encryption_key_arn: str | None,
        max_receive_count: int | None,
        visibility_timeout: Duration | None,
    ) -> None:
        super().__init__(scope, construct_id)
        self.max_receive_count = max_receive_count
        self.visibility_timeout = visibility_timeout
        queue = _parsed("queue_arn", queue_arn)
        dead_letter = _parsed("dead_letter_queue_arn", dead_letter_queue_arn)
        self.fifo = queue.name.endswith(FIFO_SUFFIX)
        problem = dead_letter_queue_problem(queue, dead_letter)
        if problem is not None:
            raise ValueError(f"dead_letter_queue_arn: {problem}")
        self.encryption_key: kms.IKey | None = (
            kms.Key.from_key_arn(self, "Key", encryption_key_arn) if encryption_key_arn else None
        )
        self.queue = sqs.Queue.from_queue_attributes(
            self, "Queue", queue_arn=queue_arn, fifo=self.fifo, key_arn=encryption_key_arn
        )
        self.dead_letter_queue = sqs.Queue.from_queue_attributes(
            self,
            "DeadLetterQueue",
            queue_arn=dead_letter_queue_arn,
            fifo=self.fifo,
            key_arn=encryption_key_arn,
        )


class _ExistingEndpointQueue(_EndpointQueueView):
    """An aws-cdk-lib queue with what it knows of itself and what it was told (see
    :meth:`EndpointQueue.from_queue`)."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        queue: sqs.IQueue,
        dead_letter_queue: sqs.IQueue | None,
        encryption_key: kms.IKey | None,
        max_receive_count: int | None,
        visibility_timeout: Duration | None,
    ) -> None:
        super().__init__(scope, construct_id)
        require_customer_managed_queue_key("queue", queue)
        require_customer_managed_key("encryption_key", encryption_key)
        own = queue.dead_letter_queue if isinstance(queue, sqs.Queue) else None
        self.queue = queue
        self.fifo = queue.fifo
        self.dead_letter_queue = _agreed(
            "dead_letter_queue",
            dead_letter_queue,
            own.queue if own is not None else None,
            same=lambda given, known: given.node.path == known.node.path,
        ) or _missing_dead_letter_queue(queue)
        _require_redrive("dead_letter_queue", queue, self.dead_letter_queue)
        self.encryption_key = _agreed(
            "encryption_key", encryption_key, queue.encryption_master_key, same=same_key
        )
        if max_receive_count is not None:
            require_range("max_receive_count", max_receive_count, *MAX_RECEIVE_COUNT_RANGE)
        self.max_receive_count = _agreed(
            "max_receive_count",
            max_receive_count,
            int(own.max_receive_count) if own is not None and own.max_receive_count else None,
            same=lambda given, known: given == known,
        )
        self.visibility_timeout = _agreed(
            "visibility_timeout",
            visibility_timeout,
            _own_visibility_timeout(queue),
            same=lambda given, known: given.to_seconds() == known.to_seconds(),
        )


def _require_redrive(field: str, queue: sqs.IQueue, dead_letter: sqs.IQueue) -> None:
    """SQS's redrive rule (:func:`dead_letter_queue_problem`) where synth knows both ARNs (an
    imported queue); a queue of this app, whose ARN CloudFormation fills in, is held to its
    type part, which its kind tells (its account and region are its stack's)."""
    arns = (queue.queue_arn, dead_letter.queue_arn)
    if not any(Token.is_unresolved(arn) for arn in arns):
        problem = dead_letter_queue_problem(*(_parsed(field, arn) for arn in arns))
    else:
        problem = dead_letter_kind_problem(
            queue.node.path,
            fifo=queue.fifo,
            dead_letter=dead_letter.node.path,
            dead_letter_fifo=dead_letter.fifo,
        )
    if problem is not None:
        raise ValueError(f"{field}: {problem}")


def _agreed(
    field: str, given: _T | None, known: _T | None, *, same: Callable[[_T, _T], bool]
) -> _T | None:
    """``given``, or what the queue knows of itself; both only when they agree."""
    if given is not None and known is not None and not same(given, known):
        raise ValueError(
            f"{field}: the queue says otherwise ({_shown(known)}, not {_shown(given)}); "
            f"leave {field} out to use the queue's own"
        )
    return given if given is not None else known


def _shown(value: object) -> str:
    if isinstance(value, Construct):
        return value.node.path
    if isinstance(value, Duration):
        return f"{value.to_seconds():g} s"
    return repr(value)


def _missing_dead_letter_queue(queue: sqs.IQueue) -> NoReturn:
    raise ValueError(
        f"dead_letter_queue: {queue.node.path} does not say its redrive dead-letter queue (an "
        "imported queue, or an sqs.Queue made without dead_letter_queue); pass "
        "dead_letter_queue= (sqs.Queue.from_queue_arn(...) for one of another stack), and "
        "give the sqs.Queue a dead-letter queue if it has none: a relay puts what it refuses "
        "there"
    )


def _own_visibility_timeout(queue: sqs.IQueue) -> Duration | None:
    """An ``sqs.Queue``'s visibility timeout (SQS's default when it sets none); ``None`` for
    an imported queue, or one whose timeout synth does not know."""
    cfn = queue.node.default_child
    if not isinstance(cfn, sqs.CfnQueue):
        return None
    seconds = cfn.visibility_timeout
    if seconds is None:
        return SQS_DEFAULT_VISIBILITY_TIMEOUT
    return None if Token.is_unresolved(seconds) else Duration.seconds(seconds)


def _parsed(field: str, arn: str) -> QueueArn:
    """A queue ARN given as a string, or an error naming the prop and the fix."""
    if Token.is_unresolved(arn):
        raise ValueError(
            f"{field}: give the ARN as a string; a token cannot say the queue's account, "
            "region or kind. For a queue of this app, pass the queue itself to "
            "EndpointQueue.from_queue(scope, id, queue)"
        )
    try:
        return parse_queue_arn(arn)
    except AddressError as error:
        raise ValueError(f"{field}: {error}") from None
