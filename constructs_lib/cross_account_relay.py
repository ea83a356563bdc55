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

The routes, the local endpoints and the address books are written at synth into a file of the
function's code asset (:data:`CONFIGURATION_FILE`), which the relay reads once per container:
Lambda's 4 KB of environment would hold about eight routes, or one address book of some 300
queues. So one function reads all of the relay's queues however many the account has, and only
what CloudFormation fills in stays in the environment: the account and region the file's queue
names belong to (``RELAY_HOME``) and the own body bucket (``RELAY_BODY_BUCKET``). Everything the
file holds must therefore be known at synth; a token there is refused, naming the keyword.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from dataclasses import dataclass

import jsii
from aws_cdk import AspectPriority, Aspects, Duration, IAspect, Stack, Token
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as event_sources
from aws_cdk import aws_logs as logs
from aws_cdk import aws_sqs as sqs
from constructs import Construct, IConstruct

from constructs_lib._private.acknowledgments import acknowledge
from constructs_lib._private.cdk_types import computed_queue_arn, literal_queue_name
from constructs_lib._private.grants import BUCKET_ENCRYPTION_CONTEXT, QUEUE_ENCRYPTION_CONTEXT
from constructs_lib._private.keywords import checked
from constructs_lib._private.lambda_assets import relay_code
from constructs_lib._private.lambda_function import role_with_own_logs, runtime_function
from constructs_lib.defaults import (
    LOG_RETENTION,
    RELAY_BATCH_SIZE,
    RELAY_BATCH_SIZE_RANGE,
    RELAY_FIFO_BATCH_SIZE,
    RELAY_MAX_BATCHING_WINDOW_RANGE,
    RELAY_MAX_CONCURRENCY,
    RELAY_MAX_CONCURRENCY_RANGE,
    RELAY_MEMORY_MB,
)
from constructs_lib.endpoint_queue import IEndpointQueue, endpoint_queue_of
from constructs_lib.message_body_bucket import BODY_KEY_ALIAS, WRITER_KEY_ACTIONS, MessageBodyBucket
from constructs_lib.relay_timing import RelayTiming
from constructs_lib.validation import require_range
from cross_account_runtime.nservicebus.transport_address import AddressError, parse_queue_arn
from cross_account_runtime.relay.bodies import relay_prefix
from cross_account_runtime.relay.config import (
    ENV_BODY_BUCKET,
    ENV_CONFIGURATION,
    ENV_HOME,
    FILE_ADDRESS_BOOKS,
    FILE_DIRECTION,
    FILE_LOCAL_ENDPOINTS,
    FILE_ROUTES,
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
CONFIGURATION_FILE = "relay-config.json"
"""The relay's configuration in its code asset, beside the runtime package (``RELAY_CONFIGURATION``
names it)."""
RESOURCES_PER_STATEMENT = 40
"""Queues per statement of the relay role's send grants: at the longest queue ARN (some 130
characters with an 80-character name and a GovCloud partition and region) 40 make about 5,300
characters, within the 6,144 of a managed policy the role's policy overflows into
(:meth:`CrossAccountRelay._grant_in_parts`)."""


@checked
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

    ``source`` is an endpoint queue (:class:`~constructs_lib.EndpointQueue`, or one imported
    with :meth:`~constructs_lib.EndpointQueue.from_queue_arn` or
    :meth:`~constructs_lib.EndpointQueue.from_queue`) or an aws-cdk-lib queue, which the relay
    reads as :meth:`~constructs_lib.EndpointQueue.from_queue` does (an ``sqs.Queue`` of this
    app with its dead-letter queue; an imported one needs ``from_queue`` and its
    ``dead_letter_queue``).
    """

    source: IEndpointQueue | sqs.IQueue
    destination_arn: str
    destination_encrypted: bool = True
    delayed: bool = False
    receiver: ReceiverAddressing | None = None
    reachable_queues: Sequence[str] = ()
    body_bucket: str | None = None
    form: MessageForm | None = None
    forward_unreadable: bool = False

    @property
    def source_queue(self) -> IEndpointQueue:
        """``source`` as an endpoint queue, once the relay has read an aws-cdk-lib queue."""
        if not isinstance(self.source, IEndpointQueue):
            raise TypeError(
                "source: an aws-cdk-lib queue is read by the relay it is given to; pass the "
                "route to CrossAccountRelay, or wrap the queue with EndpointQueue.from_queue"
            )
        return self.source

    def configuration(self, dead_letter_queue: str, address_book: str | None) -> dict[str, object]:
        """The route's member of the file's ``routes``, with ``dead_letter_queue`` as the file
        names it and its ``address_book`` when it has one."""
        member: dict[str, object] = {
            ROUTE_DESTINATION: self.destination_arn,
            ROUTE_DEAD_LETTER_QUEUE: dead_letter_queue,
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
        if self.source_queue.max_receive_count is not None:
            member[ROUTE_MAX_RECEIVE_COUNT] = self.source_queue.max_receive_count
        return member

    def address_book(self) -> dict[str, list[str]] | None:
        """``reachable_queues`` as the file's ``addressBooks`` hold them (queue names by account
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


@checked
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
        body_bucket: MessageBodyBucket | str | None = None,
        role_name: str | None = None,
        batch_size: int = RELAY_BATCH_SIZE,
        max_batching_window: Duration | None = None,
        max_concurrency: int = RELAY_MAX_CONCURRENCY,
        log_retention: logs.RetentionDays = LOG_RETENTION,
    ) -> None:
        """Create the function, its role, its log group and an event source per route.

        :param direction: outbound (stamp, cross the boundary) or inbound (deliver).
        :param routes: the queues read and their destinations (at least one); a route's
            source may be an aws-cdk-lib queue (see :class:`RelayRoute`).
        :param local_endpoints: outbound only (and required there): the transport addresses
            (queue names, the values address headers carry) of the queues of the relay's
            account and region that a message may name: endpoint queues and the error queue.
            Default: none (an inbound relay stamps nothing).
        :param body_bucket: outbound only: this account's body bucket, from which the routes
            with a ``body_bucket`` copy S3 bodies (required when one has; an inbound route's
            ``body_bucket`` is this account's bucket by name, which it only puts into); its
            name alone when another stack of the account holds it (the relay may then read
            it by name, and its key only through S3 by the body key's alias).
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
        :param max_concurrency: the most invocations each route's event source runs at once
            (2-1000), so that a flood into one queue cannot take the account's whole Lambda
            concurrency. Default: :data:`~constructs_lib.defaults.RELAY_MAX_CONCURRENCY` (10).
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
        require_range("max_concurrency", max_concurrency, *RELAY_MAX_CONCURRENCY_RANGE)
        for address in local_endpoints:
            _known_at_synth(
                address,
                "local_endpoints",
                "list the queue names as text (the values the endpoints' address headers carry)",
            )
        timing = RelayTiming.for_batch(batch_size)
        routes = [
            dataclasses.replace(
                route, source=endpoint_queue_of(self, f"Source{index}", route.source, "routes")
            )
            for index, route in enumerate(routes)
        ]
        for route in routes:
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
        Aspects.of(self.role).add(_OverflowPolicyDescriptions(), priority=AspectPriority.DEFAULT)
        self._grant_routes(stack, routes)
        own_bucket = None
        if isinstance(body_bucket, str):
            if copying:
                self._grant_read_bodies_by_name(stack, body_bucket)
                own_bucket = body_bucket
        elif body_bucket is not None and copying:
            body_bucket.grant_read_bodies(self.role)
            own_bucket = body_bucket.bucket_name
        if any(route.body_bucket is not None for route in routes):
            self._grant_body_puts(stack, routes)
        configuration = _configuration(stack, direction, routes, local_endpoints)
        environment = {
            ENV_CONFIGURATION: CONFIGURATION_FILE,
            ENV_HOME: f"arn:{stack.partition}:sqs:{stack.region}:{stack.account}",
        }
        if own_bucket is not None:
            environment[ENV_BODY_BUCKET] = own_bucket
        self.function: lambda_.Function = runtime_function(
            self,
            role=self.role,
            log_group=self.log_group,
            handler="cross_account_runtime.relay.lambda_handler.handler",
            code=relay_code(CONFIGURATION_FILE, configuration),
            memory_size=RELAY_MEMORY_MB,
            timeout=timing.function_timeout,
            environment=environment,
        )
        """The relay's function: it reads every route's queue."""
        self.configuration = configuration
        """The configuration file's text, as the function's code asset holds it."""
        for route in routes:
            route.source_queue.queue.grant_consume_messages(self.role)
            fifo = bool(route.source_queue.queue.fifo)
            self.function.add_event_source(
                event_sources.SqsEventSource(
                    route.source_queue.queue,
                    batch_size=min(batch_size, RELAY_FIFO_BATCH_SIZE) if fifo else batch_size,
                    max_batching_window=None if fifo else max_batching_window,
                    max_concurrency=max_concurrency,
                    report_batch_item_failures=True,
                )
            )

    def _grant_in_parts(self, sid: str, actions: list[str], resources: list[str]) -> None:
        """Grant ``actions`` on ``resources`` in statements of at most
        :data:`RESOURCES_PER_STATEMENT` resources each, named ``<sid><n>``.

        aws-cdk-lib merges statements that differ only in their resources into one
        (``@aws-cdk/aws-iam:minimizePolicies``), and then cannot split that statement when the
        role's policy overflows into managed policies: a relay with a hundred queues in its
        stack got one statement over IAM's 6,144 characters for a managed policy. It never
        merges statements that carry a Sid, so parts of bounded size stay apart and are spread
        over the overflow policies."""
        for start in range(0, len(resources), RESOURCES_PER_STATEMENT):
            self.role.add_to_policy(
                iam.PolicyStatement(
                    sid=f"{sid}{start // RESOURCES_PER_STATEMENT + 1}",
                    actions=actions,
                    resources=resources[start : start + RESOURCES_PER_STATEMENT],
                )
            )

    def _grant_routes(self, stack: Stack, routes: Sequence[RelayRoute]) -> None:
        """Send to the destinations, to the sources' own DLQs (refused messages go there with
        their reason) and back to delay queues' shadows (messages not due yet); use keys only
        through SQS and only for queues' encryption (``kms:EncryptionContext:aws:sqs:arn``):
        whichever key encrypts them, a queue's own or its account's shared one, before and
        after a change of key granularity (messages already queued keep the key they were sent
        with).

        A destination's key is granted for the destinations' encryption alone; the relay's own
        account's keys for the encryption of the relay's own queues alone, the sources and
        their DLQs, listed in statements of :data:`RESOURCES_PER_STATEMENT` queues each (which
        fit the managed policies a large relay's policy overflows into), used only through
        SQS."""
        destinations = sorted({r.destination_arn for r in routes})
        self._grant_in_parts("SendToDestinations", ["sqs:SendMessage"], destinations)
        self._grant_in_parts(
            "SendToOwnQueues",
            ["sqs:SendMessage"],
            [r.source_queue.dead_letter_queue.queue_arn for r in routes]
            + [r.source_queue.queue_arn for r in routes if r.delayed],
        )
        if any(r.source_queue.encryption_key is not None for r in routes):
            own = f"{stack.region}:{stack.account}"
            # Computed from their names where synth knows them: aws-cdk-lib sizes a policy by
            # its text, where a reference counts far shorter than the ARN it becomes.
            queues = list(
                dict.fromkeys(
                    computed_queue_arn(queue) or queue.queue_arn
                    for r in routes
                    for queue in (r.source_queue.queue, r.source_queue.dead_letter_queue)
                )
            )
            for start in range(0, len(queues), RESOURCES_PER_STATEMENT):
                self.role.add_to_policy(
                    iam.PolicyStatement(
                        sid=f"UseOwnQueueKeys{start // RESOURCES_PER_STATEMENT + 1}",
                        actions=list(SEND_KEY_ACTIONS),
                        resources=[f"arn:{stack.partition}:kms:{own}:key/*"],
                        conditions={
                            "StringEquals": {
                                "kms:ViaService": f"sqs.{stack.region}.{stack.url_suffix}",
                                QUEUE_ENCRYPTION_CONTEXT: queues[
                                    start : start + RESOURCES_PER_STATEMENT
                                ],
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
                "the key they were sent with; the grant is narrowed to those queues' "
                "encryption (kms:EncryptionContext:aws:sqs:arn, each listed) through SQS.",
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

    def _grant_read_bodies_by_name(self, stack: Stack, bucket: str) -> None:
        """Read bodies from this account's bucket held by another of its stacks, as
        :meth:`MessageBodyBucket.grant_read_bodies` would, without a reference to it: the
        bucket by name, its key (id unknown here) only through S3 and only by the body key's
        alias, for that bucket's objects (``kms:EncryptionContext:aws:s3:arn``)."""
        bucket_arn = f"arn:{stack.partition}:s3:::{bucket}"
        self.role.add_to_policy(
            iam.PolicyStatement(actions=["s3:GetObject"], resources=[f"{bucket_arn}/*"])
        )
        self.role.add_to_policy(
            iam.PolicyStatement(
                actions=["kms:Decrypt"],
                resources=[f"arn:{stack.partition}:kms:{stack.region}:{stack.account}:key/*"],
                conditions={
                    "ForAnyValue:StringEquals": {"kms:ResourceAliases": [BODY_KEY_ALIAS]},
                    "StringLike": {"kms:ViaService": "s3.*.amazonaws.com"},
                    "StringEquals": {BUCKET_ENCRYPTION_CONTEXT: bucket_arn},
                },
            )
        )
        for finding, reason in (
            (
                f"Resource::arn:<AWS::Partition>:s3:::{bucket}/*",
                "Bodies are named {KeyPrefix}/{MessageId} by the sending endpoint's transport, "
                "unknown in advance; the grant is confined to this account's one body bucket.",
            ),
            (
                f"Resource::arn:<AWS::Partition>:kms:{stack.region}:{stack.account}:key/*",
                "The body bucket's key is created in another stack of this account with an id "
                "unknown here; the grant is narrowed to the key carrying the body key's alias, "
                "used through S3.",
            ),
        ):
            acknowledge(self.role, f"AwsSolutions-IAM5[{finding}]", reason)

    def _grant_body_puts(self, stack: Stack, routes: Sequence[RelayRoute]) -> None:
        """Put bodies into the routes' body buckets (outbound the destinations' accounts',
        inbound its own) under this account's prefix there (``relay/<account id>/``, the only
        keys the relay writes and a receiving bucket admits), with their keys only through S3,
        only if they carry the body key's alias (their ids are unknown here) and only for those
        buckets' objects (``kms:EncryptionContext:aws:s3:arn``)."""
        copies = sorted(
            {(r.body_bucket, parse_queue_arn(r.destination_arn)) for r in routes if r.body_bucket},
            key=lambda pair: pair[0] or "",
        )
        prefix = relay_prefix(stack.account)
        self.role.add_to_policy(
            iam.PolicyStatement(
                actions=["s3:PutObject"],
                resources=[
                    f"arn:{stack.partition}:s3:::{bucket}/{prefix}*" for bucket, _ in copies
                ],
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
                    "StringEquals": {
                        BUCKET_ENCRYPTION_CONTEXT: sorted(
                            {f"arn:{stack.partition}:s3:::{bucket}" for bucket, _ in copies}
                        )
                    },
                },
            )
        )
        for bucket, _ in copies:
            acknowledge(
                self.role,
                f"AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:s3:::{bucket}/{prefix}*]",
                "Bodies are named after the transport's {KeyPrefix}/{MessageId}, unknown in "
                "advance, under this account's own prefix, the only keys the relay writes into "
                "this one bucket.",
            )
        for region, account in places:
            acknowledge(
                self.role,
                f"AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:kms:{region}:{account}:key/*]",
                "Body bucket keys are created in their accounts' stacks with ids unknown here; "
                "the grant is narrowed to keys carrying the body buckets' alias, used through "
                "S3.",
            )


HIDDEN_ID = "Default"
"""The construct id aws-cdk-lib leaves out of logical ids (a stack may hold its
:class:`~constructs_lib.AccountBridge` under it)."""


@jsii.implements(IAspect)
class _OverflowPolicyDescriptions:
    """Describe the managed policies a relay role's policy overflows into (aws-cdk-lib splits a
    policy over IAM's 10,240 bytes into them) by the path its logical ids are made of, without
    the ``Default`` scopes they leave out: aws-cdk-lib writes the role's construct path, and a
    description is changed only by replacing the policy, so a relay moved under such a scope
    would replace every one. Added to the role after the split, at the same priority, so it
    runs after it."""

    def visit(self, node: IConstruct) -> None:
        path = "/".join(part for part in node.node.path.split("/") if part != HIDDEN_ID)
        for child in node.node.children:
            policy = child.node.default_child
            if child.node.id.startswith("OverflowPolicy") and isinstance(
                policy, iam.CfnManagedPolicy
            ):
                policy.description = f"Part of the policies for {path}"


def _configuration(
    stack: Stack,
    direction: RelayDirection,
    routes: Sequence[RelayRoute],
    local_endpoints: Sequence[str],
) -> str:
    """The configuration file's text: compact JSON, keys sorted, so that the same routes always
    give the same bytes (and the code asset the same hash: a synth that changes nothing
    redeploys no function). Routes whose released endpoints reach the same queues share one
    address book."""
    books: dict[str, dict[str, list[str]]] = {}
    members: dict[str, object] = {}
    for route in routes:
        source = _queue_reference(stack, route.source_queue.queue, "the source queue", None)
        dead_letter = _queue_reference(
            stack, route.source_queue.dead_letter_queue, "the dead-letter queue", source
        )
        book = route.address_book()
        name = None
        if book is not None:
            name = next((n for n, known in books.items() if known == book), str(len(books) + 1))
            books[name] = book
        members[source] = route.configuration(dead_letter, name)
    document: dict[str, object] = {FILE_DIRECTION: direction.value, FILE_ROUTES: members}
    if local_endpoints:
        document[FILE_LOCAL_ENDPOINTS] = sorted(set(local_endpoints))
    if books:
        document[FILE_ADDRESS_BOOKS] = books
    return json.dumps(document, sort_keys=True, separators=(",", ":"))


def _queue_reference(stack: Stack, queue: sqs.IQueue, what: str, source: str | None) -> str:
    """How the file names ``queue``: by its ARN when synth knows it (an imported queue), else
    by its name when it is a queue of the relay's own account and region (``RELAY_HOME``; a
    dead-letter queue named beside a ``source`` named so too), which CloudFormation alone
    would otherwise fill in."""
    arn = queue.queue_arn
    if not Token.is_unresolved(arn):
        return arn
    name = literal_queue_name(queue)
    queue_stack = Stack.of(queue)
    own = queue_stack is stack or (
        not Token.is_unresolved(stack.account)
        and not Token.is_unresolved(stack.region)
        and (queue_stack.account, queue_stack.region) == (stack.account, stack.region)
    )
    beside = source is None or not source.startswith("arn:")
    if name is not None and own and beside:
        return name
    raise ValueError(
        f"routes: {what} {queue.node.path} has no ARN known at synth and no name there in the "
        "relay's own account and region; the relay's configuration file is written at synth: "
        "create the queue with a queue_name in the relay's stack (EndpointQueue does), or "
        "import it with EndpointQueue.from_queue_arn and its ARNs as text"
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
