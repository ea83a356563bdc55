"""``CrossAccountRelay``: the Lambda relay of the account bridge (:mod:`cross_account_runtime.relay`).

An outbound relay reads shadow queues in the sender's account and forwards to ingress queues
in other accounts, stamping the ARN header on the address headers (and holds the messages of a
delay queue's shadow until they are nearly due); an inbound relay reads ingress queues and
delivers to the local endpoint queues in the wire form each endpoint's dispatcher writes, with
the addresses unchanged for an ARN-aware endpoint and translated for a released one. Its role
may receive only from its own queues, send only to the declared destinations, its delay queues'
shadows and their own dead-letter queues, use a key only for those queues' encryption (whichever
key encrypts them), and put bodies only into the routes' body buckets. Its function's timeout follows
the batch size (:class:`~constructs_lib.relay_timing.RelayTiming`).

Lambda allows a function 4 KB of environment, and an account that reaches many remote
endpoints has many shadow queues, so the routes are spread over as many functions as their
configuration needs (``Function``, ``Function2``, ...). They share the role, the log group
(whose stream names carry the function name) and everything else; each reads its own queues.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from aws_cdk import Duration, Stack, Token
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as event_sources
from aws_cdk import aws_logs as logs
from constructs import Construct

from constructs_lib._private.acknowledgments import acknowledge
from constructs_lib._private.grants import QUEUE_ENCRYPTION_CONTEXT
from constructs_lib._private.lambda_assets import runtime_code
from constructs_lib._private.lambda_environment import (
    LAMBDA_ENVIRONMENT_LIMIT_BYTES,
    environment_size,
)
from constructs_lib._private.lambda_function import role_with_own_logs, runtime_function
from constructs_lib.defaults import (
    LOG_RETENTION,
    RELAY_BATCH_SIZE,
    RELAY_BATCH_SIZE_RANGE,
    RELAY_FIFO_BATCH_SIZE,
    RELAY_MAX_BATCHING_WINDOW_RANGE,
)
from constructs_lib.endpoint_queue import IEndpointQueue
from constructs_lib.message_body_bucket import BODY_KEY_ALIAS, WRITER_KEY_ACTIONS, MessageBodyBucket
from constructs_lib.relay_timing import RelayTiming
from cross_account_runtime.nservicebus.transport_address import parse_queue_arn
from cross_account_runtime.relay.config import (
    ENV_ADDRESS_BOOKS,
    ENV_BODY_BUCKET,
    ENV_DIRECTION,
    ENV_LOCAL_ENDPOINTS,
    ENV_ROUTES,
    ROUTE_ADDRESS_BOOK,
    ROUTE_BODY_BUCKET,
    ROUTE_DEAD_LETTER_QUEUE,
    ROUTE_DELAYED,
    ROUTE_DESTINATION,
    ROUTE_FORM,
    ROUTE_FORWARD_UNREADABLE,
    ROUTE_MAX_RECEIVE_COUNT,
    ROUTE_RECEIVER,
    MessageForm,
    ReceiverAddressing,
    RelayDirection,
)

__all__ = [
    "CrossAccountRelay",
    "MessageForm",
    "ReceiverAddressing",
    "RelayDirection",
    "RelayRoute",
]

SEND_KEY_ACTIONS = ("kms:GenerateDataKey", "kms:Decrypt")
"""What the relay needs on a destination's key (and its own queues' keys) to send."""
RELAY_MEMORY_MB = 256


@dataclass(frozen=True)
class RelayRoute:
    """One queue the relay reads and where its messages go.

    ``destination_arn`` is computed (from the topology), never a token from another stack;
    ``destination_encrypted`` says whether the destination's key must be granted (for that
    queue's encryption only). Outbound, ``delayed`` marks the shadow of a
    delay queue (FIFO), whose messages are held there until nearly due. Inbound, ``receiver``
    says how the destination endpoint reads addresses, and for a released one (``NAME``)
    ``reachable_queues`` lists the queue ARNs it reaches by name in its own account (its
    account's queues and those a shadow queue there leads to): an address header carrying one
    of them gets the queue's name, the others its ARN; ``form`` (required inbound) is the wire
    form the destination endpoint's own dispatcher writes, in which the relay delivers every
    NServiceBus message. ``body_bucket`` names a :class:`MessageBodyBucket`: outbound the
    destination account's, into which S3 bodies are copied (and bodies that no longer fit
    inline once stamped are put) before their messages are forwarded; inbound the relay's own
    account's, into which it puts a body that no longer fits inline after form conversion or
    address translation. ``forward_unreadable`` marks a route to an error queue (its shadow's,
    or the error queue's own inbound route): a message the relay cannot read goes on unchanged
    instead of to the dead-letter queue, as the transport moves such a message to its error
    queue. The route also carries the source queue's ``maxReceiveCount`` when the source knows
    it, so that the relay knows a receive is the last.
    """

    source: IEndpointQueue
    destination_arn: str
    destination_encrypted: bool = True
    delayed: bool = False
    receiver: ReceiverAddressing | None = None
    reachable_queues: Sequence[str] = ()
    body_bucket: str | None = None
    form: MessageForm | None = None
    forward_unreadable: bool = False

    def configuration(self, address_book: str | None) -> dict[str, object]:
        """The route's member of ``RELAY_ROUTES`` (tokens for the source's queues), naming its
        ``address_book`` when it has one."""
        member: dict[str, object] = {
            ROUTE_DESTINATION: self.destination_arn,
            ROUTE_DEAD_LETTER_QUEUE: self.source.dead_letter_queue.queue_arn,
        }
        if self.delayed:
            member[ROUTE_DELAYED] = True
        if self.receiver is not None:
            member[ROUTE_RECEIVER] = self.receiver.value
        if address_book is not None:
            member[ROUTE_ADDRESS_BOOK] = address_book
        if self.body_bucket is not None:
            member[ROUTE_BODY_BUCKET] = self.body_bucket
        if self.form is not None:
            member[ROUTE_FORM] = self.form.value
        if self.forward_unreadable:
            member[ROUTE_FORWARD_UNREADABLE] = True
        if self.source.max_receive_count is not None:
            member[ROUTE_MAX_RECEIVE_COUNT] = self.source.max_receive_count
        return member

    def address_book(self) -> dict[str, list[str]] | None:
        """``reachable_queues`` as ``RELAY_ADDRESS_BOOKS`` holds them (queue names by account
        and region), or ``None`` for a route that translates nothing."""
        if self.receiver is not ReceiverAddressing.NAME:
            return None
        book: dict[str, list[str]] = {}
        for arn in sorted(set(self.reachable_queues)):
            queue = parse_queue_arn(arn)
            book.setdefault(f"arn:{queue.partition}:sqs:{queue.region}:{queue.account}", []).append(
                queue.name
            )
        return book


class CrossAccountRelay(Construct):
    """A relay function with its event sources, its least-privilege role and its logs."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        direction: RelayDirection,
        routes: Sequence[RelayRoute],
        local_endpoints: Sequence[str] = (),
        body_bucket: MessageBodyBucket | None = None,
        role_name: str | None = None,
        batch_size: int = RELAY_BATCH_SIZE,
        max_batching_window: Duration | None = None,
        log_retention: logs.RetentionDays = LOG_RETENTION,
    ) -> None:
        """Create the function, its role, its log group and an event source per route.

        :param direction: outbound (stamp, cross the boundary) or inbound (deliver).
        :param routes: the queues read and their destinations (at least one).
        :param local_endpoints: outbound only (and required there): the transport addresses
            (queue names, the values address headers carry) of the queues of the relay's
            account and region that a message may name: endpoint queues and the error queue.
            Default: none (an inbound relay stamps nothing).
        :param body_bucket: outbound only: this account's body bucket, from which the routes
            with a ``body_bucket`` copy S3 bodies (required when one has; an inbound route's
            ``body_bucket`` is this account's bucket by name, which it only puts into).
            Default: none.
        :param role_name: a fixed role name, so that other accounts can admit the role by ARN
            before it exists. Default: a name CloudFormation generates.
        :param batch_size: messages per invocation from a standard queue (1-10,000; above
            10 Lambda requires ``max_batching_window``); FIFO sources take at most 10. The
            function's timeout follows from it, and every source queue whose visibility
            timeout is known must hide a message at least as long as it needs
            (:class:`~constructs_lib.relay_timing.RelayTiming`).
            Default: :data:`~constructs_lib.defaults.RELAY_BATCH_SIZE` (10).
        :param max_batching_window: how long Lambda gathers a batch from a standard queue
            (1 s to 5 min; FIFO sources take none). Default: none.
        :param log_retention: of the function's log group. Default:
            :data:`~constructs_lib.defaults.LOG_RETENTION` (three months).
        """
        super().__init__(scope, construct_id)
        if not routes:
            raise ValueError("routes: a relay needs at least one queue to read")
        if direction is RelayDirection.OUTBOUND and not local_endpoints:
            raise ValueError(
                "local_endpoints: an outbound relay stamps the local endpoints' ARNs; list the "
                "addresses (queue names) of the account's endpoint queues and error queue"
            )
        if direction is RelayDirection.INBOUND and local_endpoints:
            raise ValueError("local_endpoints: an inbound relay stamps nothing; leave it empty")
        copying = direction is RelayDirection.OUTBOUND and any(
            route.body_bucket is not None for route in routes
        )
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
        timing = RelayTiming.for_batch(batch_size)
        for route in routes:
            _check_visibility(route, timing)
            parse_queue_arn(route.destination_arn)
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
                raise ValueError(
                    "routes: delayed routes are outbound (delays end in the sender's account)"
                )
            if (direction is RelayDirection.INBOUND) == (route.form is None):
                raise ValueError(
                    "routes: an inbound route says the wire form its endpoint's dispatcher "
                    "writes (form=MessageForm.WRAPPED, or ATTRIBUTE for an endpoint with "
                    "DoNotWrapOutgoingMessages) and an outbound one does not (it forwards "
                    f"what its sender wrote); got form={route.form} on a {direction.value} relay"
                )
        stack = Stack.of(self)
        self.role, self.log_group = role_with_own_logs(
            self,
            description=f"The {direction.value} relay of the account bridge",
            log_retention=log_retention,
            role_name=role_name,
        )
        self._grant_routes(stack, routes)
        own_bucket = None
        if body_bucket is not None and copying:
            body_bucket.grant_read_bodies(self.role)
            own_bucket = body_bucket.bucket_name
        if any(route.body_bucket is not None for route in routes):
            self._grant_body_puts(stack, routes)
        functions = []
        for index, shard in enumerate(_shards(direction, routes, local_endpoints, own_bucket)):
            function = runtime_function(
                self,
                construct_id="Function" if index == 0 else f"Function{index + 1}",
                role=self.role,
                log_group=self.log_group,
                handler="cross_account_runtime.relay.lambda_handler.handler",
                code=runtime_code(),
                memory_size=RELAY_MEMORY_MB,
                timeout=timing.function_timeout,
                environment=shard.environment(stack),
            )
            for route in shard.routes:
                route.source.queue.grant_consume_messages(self.role)
                fifo = bool(route.source.queue.fifo)
                function.add_event_source(
                    event_sources.SqsEventSource(
                        route.source.queue,
                        batch_size=min(batch_size, RELAY_FIFO_BATCH_SIZE) if fifo else batch_size,
                        max_batching_window=None if fifo else max_batching_window,
                        report_batch_item_failures=True,
                    )
                )
            functions.append(function)
        self.functions: tuple[lambda_.Function, ...] = tuple(functions)
        """The relay's functions, one per share of the routes that fits Lambda's 4 KB of
        environment (a single one unless the account reaches many queues)."""

    def _grant_routes(self, stack: Stack, routes: Sequence[RelayRoute]) -> None:
        """Send to the destinations, to the sources' own DLQs (refused messages go there with
        their reason) and back to delay queues' shadows (messages not due yet); use keys only
        through SQS and only for queues' encryption (``kms:EncryptionContext:aws:sqs:arn``):
        whichever key encrypts them, a queue's own or its account's shared one, before and
        after a change of key granularity (messages already queued keep the key they were sent
        with).

        A destination's key is granted for the destinations' encryption alone; the relay's own
        account's keys for its queues' encryption, a pattern (the sources and their DLQs,
        listed, would double the role's policy, which IAM bounds at 10,240 bytes per role): the
        grant is used only through SQS, and the role may call SQS on its own queues alone."""
        destinations = sorted({r.destination_arn for r in routes})
        self.role.add_to_policy(
            iam.PolicyStatement(actions=["sqs:SendMessage"], resources=destinations)
        )
        self.role.add_to_policy(
            iam.PolicyStatement(
                actions=["sqs:SendMessage"],
                resources=[r.source.dead_letter_queue.queue_arn for r in routes]
                + [r.source.queue_arn for r in routes if r.delayed],
            )
        )
        if any(r.source.encryption_key is not None for r in routes):
            own = f"{stack.region}:{stack.account}"
            self.role.add_to_policy(
                iam.PolicyStatement(
                    actions=list(SEND_KEY_ACTIONS),
                    resources=[f"arn:{stack.partition}:kms:{own}:key/*"],
                    conditions={
                        "StringEquals": {
                            "kms:ViaService": f"sqs.{stack.region}.{stack.url_suffix}"
                        },
                        "StringLike": {
                            QUEUE_ENCRYPTION_CONTEXT: f"arn:{stack.partition}:sqs:{own}:*"
                        },
                    },
                )
            )
            own_region, own_account = (
                f"<AWS::{name}>" if Token.is_unresolved(value) else value
                for name, value in (("Region", stack.region), ("AccountId", stack.account))
            )
            acknowledge(
                self.role,
                f"AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:kms:{own_region}:{own_account}:key/*]",
                "The relay's own queues may share the account's key or have one each, and keep "
                "the key they were sent with; the grant is narrowed to queues' encryption "
                "(kms:EncryptionContext:aws:sqs:arn) through SQS, where the role reaches its "
                "own queues alone.",
            )
        encrypted = sorted({r.destination_arn for r in routes if r.destination_encrypted})
        if not encrypted:
            return
        accounts = sorted({parse_queue_arn(a).account for a in encrypted})
        regions = sorted({parse_queue_arn(a).region for a in encrypted})
        self.role.add_to_policy(
            iam.PolicyStatement(
                actions=list(SEND_KEY_ACTIONS),
                resources=[
                    f"arn:{stack.partition}:kms:{region}:{account}:key/*"
                    for account in accounts
                    for region in regions
                ],
                conditions={
                    "StringEquals": {QUEUE_ENCRYPTION_CONTEXT: encrypted},
                    "StringLike": {"kms:ViaService": "sqs.*.amazonaws.com*"},
                },
            )
        )
        for account in accounts:
            for region in regions:
                acknowledge(
                    self.role,
                    f"AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:kms:{region}:{account}:key/*]",
                    "Destination keys are created in other accounts with ids unknown here; the "
                    "grant is narrowed to the destination queues' encryption "
                    "(kms:EncryptionContext:aws:sqs:arn), used through SQS.",
                )

    def _grant_body_puts(self, stack: Stack, routes: Sequence[RelayRoute]) -> None:
        """Put bodies into the routes' body buckets (outbound the destinations' accounts',
        inbound its own), with their keys only through S3 and only if they carry the body
        key's alias (their ids are unknown here)."""
        copies = sorted(
            {(r.body_bucket, parse_queue_arn(r.destination_arn)) for r in routes if r.body_bucket},
            key=lambda pair: pair[0] or "",
        )
        self.role.add_to_policy(
            iam.PolicyStatement(
                actions=["s3:PutObject"],
                resources=[f"arn:{stack.partition}:s3:::{bucket}/*" for bucket, _ in copies],
            )
        )
        places = sorted({(queue.region, queue.account) for _, queue in copies})
        self.role.add_to_policy(
            iam.PolicyStatement(
                actions=list(WRITER_KEY_ACTIONS),
                resources=[
                    f"arn:{stack.partition}:kms:{region}:{account}:key/*"
                    for region, account in places
                ],
                conditions={
                    "ForAnyValue:StringEquals": {"kms:ResourceAliases": [BODY_KEY_ALIAS]},
                    "StringLike": {"kms:ViaService": "s3.*.amazonaws.com"},
                },
            )
        )
        for bucket, _ in copies:
            acknowledge(
                self.role,
                f"AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:s3:::{bucket}/*]",
                "Bodies are named {KeyPrefix}/{MessageId} by the sending endpoint's transport, "
                "or by the relay after that fashion for a body that no longer fits inline; the "
                "relay puts them into this one bucket.",
            )
        for region, account in places:
            acknowledge(
                self.role,
                f"AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:kms:{region}:{account}:key/*]",
                "Body bucket keys are created in their accounts' stacks with ids unknown here; "
                "the grant is narrowed to keys carrying the body buckets' alias, used through "
                "S3.",
            )


@dataclass(frozen=True)
class _Shard:
    """The routes one function reads, with what its environment holds for them."""

    direction: RelayDirection
    routes: tuple[RelayRoute, ...]
    local_endpoints: Sequence[str]
    body_bucket: str | None = None

    def environment(self, stack: Stack | None = None) -> dict[str, str]:
        """The function's variables; with ``stack``, ``RELAY_ROUTES`` is the stack's JSON of
        the source queues' tokens, without it plain JSON for counting."""
        books: dict[str, dict[str, list[str]]] = {}
        book_of: dict[int, str] = {}
        for index, route in enumerate(self.routes):
            book = route.address_book()
            if book is None:
                continue
            name = next((n for n, known in books.items() if known == book), str(len(books) + 1))
            books[name] = book
            book_of[index] = name
        routes = {
            route.source.queue_arn: route.configuration(book_of.get(index))
            for index, route in enumerate(self.routes)
        }
        environment = {
            ENV_DIRECTION: self.direction.value,
            ENV_ROUTES: json.dumps(routes) if stack is None else stack.to_json_string(routes),
        }
        if self.local_endpoints:
            environment[ENV_LOCAL_ENDPOINTS] = json.dumps(sorted(set(self.local_endpoints)))
        if books:
            environment[ENV_ADDRESS_BOOKS] = json.dumps(books, sort_keys=True)
        if self.body_bucket is not None:
            environment[ENV_BODY_BUCKET] = self.body_bucket
        return environment

    def size(self) -> int:
        return environment_size(self.environment())


def _shards(
    direction: RelayDirection,
    routes: Sequence[RelayRoute],
    local_endpoints: Sequence[str],
    body_bucket: str | None,
) -> list[_Shard]:
    """The routes in order, cut into as few functions as Lambda's environment limit allows."""
    shards: list[_Shard] = []
    current: tuple[RelayRoute, ...] = ()
    for route in routes:
        candidate = _Shard(direction, (*current, route), local_endpoints, body_bucket)
        if candidate.size() <= LAMBDA_ENVIRONMENT_LIMIT_BYTES:
            current = candidate.routes
            continue
        alone = _Shard(direction, (route,), local_endpoints, body_bucket)
        if alone.size() > LAMBDA_ENVIRONMENT_LIMIT_BYTES:
            raise ValueError(
                f"routes: the route reading {route.source.queue.node.path} needs about "
                f"{alone.size()} bytes of environment with the local endpoints and its address "
                f"book ({len(route.reachable_queues)} reachable queues), over Lambda's "
                f"{LAMBDA_ENVIRONMENT_LIMIT_BYTES}; make its endpoint ARN-aware (it then needs "
                "no address book) or split the account's endpoints over more accounts"
            )
        shards.append(_Shard(direction, current, local_endpoints, body_bucket))
        current = (route,)
    shards.append(_Shard(direction, current, local_endpoints, body_bucket))
    return shards


def _check_visibility(route: RelayRoute, timing: RelayTiming) -> None:
    """Refuse a source queue known to hide a received message for less than the function may
    run (six times over): a message still being sent would be received again."""
    known = route.source.visibility_timeout
    needed = timing.visibility_timeout.to_seconds()
    if known is None or known.to_seconds() >= needed:
        return
    raise ValueError(
        f"routes: the source queue {route.source.queue.node.path} has a visibility timeout of "
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
