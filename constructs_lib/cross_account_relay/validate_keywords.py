"""The checks of :class:`CrossAccountRelay`'s keywords and routes that their types alone do not
make (as aws-cdk-lib's ``aws-sqs`` keeps ``validate-queue-props.ts``): each refuses with the
keyword and the fix before the relay's function or role is created. What the configuration file
holds must be known at synth; a token there is refused, naming the keyword."""

from __future__ import annotations

from collections.abc import Sequence

from aws_cdk import Duration, Token

from constructs_lib.cross_account_relay.relay_route import RelayRoute
from constructs_lib.defaults import (
    RELAY_BATCH_SIZE_RANGE,
    RELAY_FIFO_BATCH_SIZE,
    RELAY_MAX_BATCHING_WINDOW_RANGE,
    RELAY_MAX_CONCURRENCY_RANGE,
)
from constructs_lib.message_body_bucket import MessageBodyBucket
from constructs_lib.relay_timing import RelayTiming
from constructs_lib.validation import require_range
from cross_account_runtime.nservicebus.locations import AddressError
from cross_account_runtime.nservicebus.queue_arn import parse_queue_arn
from cross_account_runtime.relay.config_format import ReceiverAddressing, RelayDirection


def validate_relay_keywords(
    *,
    direction: RelayDirection,
    routes: Sequence[RelayRoute],
    local_endpoints: Sequence[str],
    body_bucket: MessageBodyBucket | str | None,
    copying: bool,
    batch_size: int,
    max_batching_window: Duration | None,
    max_concurrency: int,
) -> None:
    """Refuse keywords a relay of ``direction`` cannot serve together, before its routes'
    sources are read; ``copying`` says whether it copies bodies out (an outbound relay with a
    route that has a ``body_bucket``)."""
    if not routes:
        raise ValueError("routes: a relay needs at least one queue to read")
    if direction is RelayDirection.OUTBOUND and not local_endpoints:
        raise ValueError(
            "local_endpoints: an outbound relay stamps the local endpoints' ARNs; list the "
            "addresses (queue names) of the account's endpoint queues and error queue"
        )
    if direction is RelayDirection.INBOUND and local_endpoints:
        raise ValueError("local_endpoints: an inbound relay stamps nothing; leave it empty")
    if copying and body_bucket is None:
        raise ValueError(
            "body_bucket: outbound routes with a body_bucket copy bodies from this "
            "account's MessageBodyBucket; pass it"
        )
    if direction is RelayDirection.INBOUND and body_bucket is not None:
        raise ValueError(
            "body_bucket: an inbound relay copies no bodies out; its routes' body_bucket "
            "names this account's bucket, which it only puts into: leave body_bucket out"
        )
    _check_batching(batch_size, max_batching_window)
    require_range("max_concurrency", max_concurrency, *RELAY_MAX_CONCURRENCY_RANGE)
    for address in local_endpoints:
        _known_at_synth(
            address,
            "local_endpoints",
            "list the queue names as text (the values the endpoints' address headers carry)",
        )


def validate_route(direction: RelayDirection, route: RelayRoute, timing: RelayTiming) -> None:
    """Refuse a route, its source read as an endpoint queue, that a relay of ``direction``
    whose batches take ``timing`` cannot serve."""
    _check_visibility(route, timing)
    _check_known_at_synth(route)
    if route.reachable_queues and route.receiver is not ReceiverAddressing.NAME:
        raise ValueError(
            "routes: reachable_queues lists what a released endpoint (receiver="
            "ReceiverAddressing.NAME) reaches by name; drop it from a route with "
            f"receiver={route.receiver}"
        )
    if (direction is RelayDirection.INBOUND) == (route.receiver is None):
        raise ValueError(
            "routes: an inbound route says how its endpoint reads addresses (receiver="
            "ReceiverAddressing.ARN or NAME) and an outbound one does not; got "
            f"receiver={route.receiver} on a {direction.value} relay"
        )
    if route.delayed and direction is RelayDirection.INBOUND:
        raise ValueError("routes: delayed routes are outbound (delays end in the sender's account)")
    if (direction is RelayDirection.INBOUND) == (route.form is None):
        raise ValueError(
            "routes: an inbound route says the wire form its endpoint's dispatcher "
            "writes (form=MessageForm.WRAPPED, or ATTRIBUTE for an endpoint with "
            "DoNotWrapOutgoingMessages) and an outbound one does not (it forwards "
            f"what its sender wrote); got form={route.form} on a {direction.value} relay"
        )


def _check_known_at_synth(route: RelayRoute) -> None:
    """What a route writes into the file (its destination, reachable queues and body bucket)
    must be text at synth; the ARNs must read as queue ARNs."""
    where = f"the route reading {route.source_queue.queue.node.path}"
    for member, arns in (
        ("destination_arn", [route.destination_arn]),
        ("reachable_queues", list(route.reachable_queues)),
    ):
        for arn in arns:
            _known_at_synth(
                arn,
                f"routes: {member} of {where}",
                "give the ARN as text (arn:<partition>:sqs:<region>:<account>:<queue name>), "
                "computed from the account, region and queue name as the topology does",
            )
            try:
                parse_queue_arn(arn)
            except AddressError as error:
                raise ValueError(f"routes: {member} of {where}: {error}") from None
    if route.body_bucket is not None:
        _known_at_synth(
            route.body_bucket,
            f"routes: body_bucket of {where}",
            "give the bucket's name as text (MessageBodyBucket(bucket_name=...) fixes it)",
        )


def _known_at_synth(value: str, where: str, fix: str) -> None:
    """Refuse a value CloudFormation would fill in where the file needs text."""
    if Token.is_unresolved(value):
        raise ValueError(
            f"{where} is a CloudFormation token, which the relay's configuration file, written "
            f"at synth, cannot hold; {fix}"
        )


def _check_visibility(route: RelayRoute, timing: RelayTiming) -> None:
    """Refuse a source queue known to hide a received message for less than the function may
    run (six times over): a message still being sent would be received again."""
    known = route.source_queue.visibility_timeout
    needed = timing.visibility_timeout.to_seconds()
    if known is None or known.to_seconds() >= needed:
        return
    raise ValueError(
        f"routes: the source queue {route.source_queue.queue.node.path} has a visibility timeout of "
        f"{known.to_seconds():g} s, under the {needed:g} s a batch of {timing.batch_size} needs "
        f"(6 x the function timeout of {timing.function_timeout.to_seconds():g} s); create it "
        f"with visibility_timeout=RelayTiming.for_batch({timing.batch_size}).visibility_timeout, "
        "or lower batch_size"
    )


def _check_batching(batch_size: int, max_batching_window: Duration | None) -> None:
    """What Lambda's SQS event source accepts: a batch size it takes from a standard queue, a
    window within its range, and a window whenever a batch may exceed ten messages."""
    low, high = RELAY_BATCH_SIZE_RANGE
    if not low <= batch_size <= high:
        raise ValueError(f"batch_size: must be from {low} to {high}, got {batch_size}")
    if max_batching_window is not None:
        shortest, longest = RELAY_MAX_BATCHING_WINDOW_RANGE
        seconds = max_batching_window.to_seconds()
        if not shortest.to_seconds() <= seconds <= longest.to_seconds():
            raise ValueError(
                f"max_batching_window: must be from {shortest.to_seconds()} to "
                f"{longest.to_seconds()} seconds, got {seconds}"
            )
    if batch_size > RELAY_FIFO_BATCH_SIZE and max_batching_window is None:
        raise ValueError(
            f"max_batching_window: Lambda takes more than {RELAY_FIFO_BATCH_SIZE} messages per "
            f"invocation only with a batching window; set one (at least 1 s) or a batch_size "
            f"of at most {RELAY_FIFO_BATCH_SIZE}"
        )
