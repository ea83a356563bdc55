"""``AccountBridge``: one account's half of the account bridge, without the topology.

A released NServiceBus endpoint resolves every address by name in its own account, so it can
reach an endpoint of another account only through a queue of its own account with the name it
resolves: a *shadow* of the remote endpoint. The sending account's outbound relay reads its
shadows and forwards each message, stamped with the ARN header, to the remote endpoint's
*ingress* queue (``<queue>-ingress``) in the receiving account; that account's inbound relay
delivers it to the endpoint's queue, in the wire form the endpoint's own dispatcher writes and,
for a released endpoint, with every address header it can resolve by name translated to that
name.

An account is usually both: its endpoints send to other accounts (shadows, outbound relay) and
receive from them (ingress queues, inbound relay). So the bridge is one construct per account
(per stack of an account that has several), with either half or both: the two halves share the
account's name (which fixes both relay roles' names, so that other accounts can admit them
before they exist), its queue key, its organization, its body bucket and the relays' batch
size, from which every relay queue's visibility timeout and receive count follow
(:class:`~constructs_lib.relay_timing.RelayTiming`). The receiving account needs to know of
the sending accounts only their names and ids (:class:`BridgeAccount`), the sending account of
each remote endpoint only its queue's ARN (:class:`BridgeShadow`): each side is synthesized in
its own account's stack, and nothing crosses between them but names computed on both sides.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from aws_cdk import Duration, Stack, Token
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_s3 as s3
from constructs import Construct

from constructs_lib._private.attributes import Attribute
from constructs_lib._private.cdk_types import literal_queue_name
from constructs_lib._private.keywords import checked
from constructs_lib.cross_account_relay import (
    CrossAccountRelay,
    MessageForm,
    ReceiverAddressing,
    RelayDirection,
    RelayRoute,
)
from constructs_lib.defaults import DELAY_QUEUE_DELAY, RELAY_BATCH_SIZE, RELAY_STACK_NUMBER
from constructs_lib.endpoint_queue import EndpointQueue, IEndpointQueue
from constructs_lib.message_body_bucket import MessageBodyBucket
from constructs_lib.messaging_alarms import MessagingAlarms
from constructs_lib.messaging_dashboard import MessagingDashboard
from constructs_lib.messaging_key import MessagingKey
from constructs_lib.queue_naming import (
    FIFO_SUFFIX,
    QueueNameError,
    dead_letter_queue_name,
    delay_queue_name,
    ingress_queue_name,
    resolved_queue_name,
    shadow_queue_name,
)
from constructs_lib.relay_roles import RELAY_STACKS, relay_role_arn, relay_role_name
from constructs_lib.relay_timing import RelayTiming
from constructs_lib.validation import (
    require_account_ids,
    require_organization_ids,
    require_other_accounts,
    require_range,
)
from cross_account_runtime.common.partitions import partition_of
from cross_account_runtime.nservicebus.locations import AddressError
from cross_account_runtime.nservicebus.queue_arn import QueueArn, parse_queue_arn

OUTBOUND_RELAY_ID = "OutboundRelay"
INBOUND_RELAY_ID = "InboundRelay"


def shadow_id(queue_name: str) -> str:
    """The construct id of the shadow queue (or delay queue's shadow) ``queue_name``."""
    return f"Shadow{queue_name}"


def ingress_id(endpoint_name: str) -> str:
    """The construct id of the ingress queue of the endpoint ``endpoint_name``."""
    return f"Ingress{endpoint_name}"


@checked
@dataclass(frozen=True)
class BridgeAccount:
    """An account of the bridge, as the others name it: its relay roles' names derive from
    ``name`` (see :func:`~constructs_lib.relay_role_name`), so every account must call it the
    same. ``partition`` is the account's (``aws-cn``, ``aws-us-gov``); default ``aws``.
    ``relay_stacks`` are the numbers of its stacks (the ``stack_number`` of their
    :class:`AccountBridge`) whose outbound relays deliver to the ingress queue, or write into
    the body bucket, it is named for: those holding a shadow that leads there, whose relay
    roles alone are admitted, by exact ARN; default ``(1,)``, an account with one stack.
    """

    name: str
    account_id: str
    partition: str = "aws"
    relay_stacks: Sequence[int] = (RELAY_STACK_NUMBER,)

    def __post_init__(self) -> None:
        require_account_ids("account_id", [self.account_id])
        if not self.relay_stacks:
            raise ValueError(
                "relay_stacks: name the account's stacks whose outbound relays deliver here "
                f"(default: ({RELAY_STACK_NUMBER},), its first)"
            )
        for number in self.relay_stacks:
            require_range("relay_stacks", number, *RELAY_STACKS)

    @property
    def outbound_relay_roles(self) -> tuple[str, ...]:
        """The exact ARNs of the outbound relay roles of ``relay_stacks``, which an ingress
        queue or a body bucket of another account admits: those of the account's stacks that
        hold a shadow leading there, and no other role."""
        return tuple(
            relay_role_arn(
                self.name, self.account_id, RelayDirection.OUTBOUND, number, self.partition
            )
            for number in dict.fromkeys(self.relay_stacks)
        )


@checked
@dataclass(frozen=True)
class BridgeShadow:
    """A queue of another account that this account's endpoints send to by name.

    ``remote_queue_arn`` is the remote endpoint's queue (its transport address), as text; never
    a FIFO queue, which no endpoint could send to through the bridge (NServiceBus's transport
    sets a message group only on its delay queue's sends, and SQS refuses any other send to a
    FIFO queue). ``address`` is the name this account's endpoints send to (default: the remote
    queue's name), ``queue_name_prefix`` their ``QueueNamePrefix``: the shadow is named as they
    resolve the address (:func:`~constructs_lib.queue_naming.shadow_queue_name`). With
    ``delayed_delivery`` (default true) the shadow of the remote's delay queue is created too,
    where the endpoints send delays over 15 minutes; the outbound relay holds those messages
    until nearly due. ``body_bucket`` names the
    remote account's :class:`~constructs_lib.MessageBodyBucket`, into which the relay copies
    bodies sent through S3 (default: none, no bodies through S3). ``error_queue`` marks the
    error queue's shadow: a message the relay cannot read goes on unchanged, as the transport
    moves such a message to its error queue (default: false).
    """

    remote_queue_arn: str
    address: str | None = None
    queue_name_prefix: str = ""
    delayed_delivery: bool = True
    body_bucket: str | None = None
    error_queue: bool = False

    def __post_init__(self) -> None:
        if self.remote.name.endswith(FIFO_SUFFIX):
            raise ValueError(
                f"remote_queue_arn: {self.remote_queue_arn} is a FIFO queue, which NServiceBus "
                "endpoints cannot send to through the bridge (the transport sets a message "
                "group only on its delay queue's sends, and SQS refuses any other send to a "
                "FIFO queue)"
            )
        if self.address is not None and Token.is_unresolved(self.address):
            raise ValueError("address: give the name the endpoints send to as text")
        try:
            self.queue_name  # noqa: B018 (refused names are refused when the shadow is declared)
        except QueueNameError as error:
            raise ValueError(f"address: {error}") from None

    @property
    def remote(self) -> QueueArn:
        """The remote endpoint's queue."""
        if Token.is_unresolved(self.remote_queue_arn):
            raise ValueError(
                "remote_queue_arn: give the remote queue's ARN as text "
                "(arn:<partition>:sqs:<region>:<account>:<queue name>); a token of another "
                "account's stack cannot reach this one"
            )
        try:
            return parse_queue_arn(self.remote_queue_arn)
        except AddressError as error:
            raise ValueError(f"remote_queue_arn: {error}") from None

    @property
    def queue_name(self) -> str:
        """The shadow's name: the queue the endpoints resolve the address to."""
        return shadow_queue_name(self.address or self.remote.name, self.queue_name_prefix)

    @property
    def delay_queue_name(self) -> str | None:
        """The shadow of the remote endpoint's delay queue, if it gets one."""
        if not self.delayed_delivery:
            return None
        return delay_queue_name(self.address or self.remote.name, self.queue_name_prefix)

    @property
    def ingress_queue_arn(self) -> str:
        """The remote endpoint's ingress queue, where the outbound relay forwards."""
        remote = self.remote
        name = ingress_queue_name(remote.name)
        return f"arn:{remote.partition}:sqs:{remote.region}:{remote.account}:{name}"


@checked
@dataclass(frozen=True)
class BridgeIngress:
    """An endpoint queue of this account that other accounts' outbound relays deliver to,
    through its ingress queue.

    ``queue`` is the endpoint's queue: an :class:`~constructs_lib.EndpointQueue` (or another
    endpoint queue of this account whose name synth knows), or its ARN as text (a queue of
    another stack of the account). ``sender_accounts`` are the accounts whose outbound relays
    forward to it; the ingress queue admits their relay roles alone. ``endpoint_name`` names
    the ingress queue's construct (default: the EndpointQueue's endpoint name, else the queue's
    name). ``arn_aware`` says the endpoint runs the ARN-aware transport, which reads ARNs itself
    (default: false, a released endpoint, whose address headers the inbound relay translates to
    the names it resolves: those of ``reachable_queues``, the queue ARNs it reaches by name in
    its own account; default: this bridge's ``local_endpoints`` and ``ingress`` queues its
    queue-name generator leaves as they are, and the remote queues this bridge's shadows lead to by the names it gives them,
    with ``queue_name_prefix``, the endpoint's ``QueueNamePrefix``). ``wrap_outgoing_messages``
    is false for an endpoint configured with ``DoNotWrapOutgoingMessages`` (default: true):
    the relay delivers in the form the endpoint writes. ``error_queue`` marks the error queue:
    what the relay cannot read goes on to it unchanged (default: false).
    """

    queue: IEndpointQueue | str
    sender_accounts: Sequence[BridgeAccount]
    endpoint_name: str | None = None
    arn_aware: bool = False
    queue_name_prefix: str = ""
    reachable_queues: Sequence[str] | None = None
    wrap_outgoing_messages: bool = True
    error_queue: bool = False

    def __post_init__(self) -> None:
        if not self.sender_accounts:
            raise ValueError(
                "sender_accounts: name the accounts whose outbound relays deliver here "
                "(BridgeAccount(name, account_id)); the ingress queue admits their relays alone"
            )
        if self.arn_aware and self.reachable_queues:
            raise ValueError(
                "reachable_queues: an ARN-aware endpoint reads ARNs itself; leave it out"
            )


def reachable_queues(
    queue_name_prefix: str, local_queues: Iterable[str], shadows: Mapping[str, str]
) -> tuple[str, ...]:
    """The ARNs of the queues a released endpoint with ``queue_name_prefix`` reaches by name in
    its own account: of ``local_queues`` (the account's queue ARNs) those whose names its
    queue-name generator leaves as they are, and the remote queues ``shadows`` (shadow queue
    name to the remote queue's ARN) lead to under the name the generator gives their own
    names. The address that leads to each is the queue's name (a released endpoint's transport
    address); the inbound relay writes it into the address headers that carry the ARN."""
    names = {arn: parse_queue_arn(arn).name for arn in local_queues}
    reachable = [arn for arn, name in names.items() if _resolved(name, queue_name_prefix) == name]
    reachable += [
        remote
        for shadow, remote in shadows.items()
        if _resolved(parse_queue_arn(remote).name, queue_name_prefix) == shadow
    ]
    return tuple(dict.fromkeys(reachable))


def _resolved(name: str, prefix: str) -> str | None:
    try:
        return resolved_queue_name(name, prefix)
    except QueueNameError:
        return None


@checked
class AccountBridge(Construct):
    """One account's half of the account bridge (per stack, for an account with several):
    shadow queues and the outbound relay for the endpoints of other accounts that this
    account's endpoints send to (``shadows``), ingress queues and the inbound relay for this
    account's endpoints that other accounts send to (``ingress``); either or both.

    Its resources keep the ids the topology's stacks give them (``Shadow<queue>``,
    ``Ingress<endpoint>``, ``OutboundRelay``, ``InboundRelay``), so that a stack may hold the
    bridge under the id ``Default``, which aws-cdk-lib leaves out of logical ids.

    Example:

    ```python
    from aws_cdk import App, Environment, Stack

    from constructs_lib import AccountBridge, BridgeShadow, EndpointQueue

    app = App()
    stack = Stack(app, "Sales", env=Environment(account="111111111111", region="eu-west-1"))
    sales = EndpointQueue(stack, "Sales", endpoint_name="Sales")
    AccountBridge(
        stack,
        "Bridge",
        account_name="Sales",
        local_endpoints=[sales],
        shadows=[BridgeShadow("arn:aws:sqs:eu-west-1:222222222222:Billing")],
    )
    app.synth()
    ```
    """

    account_name = Attribute[str](
        "This account's name in the bridge (fixes its relay roles' names)."
    )
    shadow_queues = Attribute[dict[str, EndpointQueue]](
        "The shadows (and delay queues' shadows) by queue name."
    )
    ingress_queues = Attribute[dict[str, EndpointQueue]](
        "The ingress queues by the name of the endpoint queue they lead to."
    )
    outbound_relay = Attribute[CrossAccountRelay | None](
        "The relay reading the shadows; None without shadows."
    )
    inbound_relay = Attribute[CrossAccountRelay | None](
        "The relay reading the ingress queues; None without ingress."
    )

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        account_name: str,
        shadows: Sequence[BridgeShadow] = (),
        local_endpoints: Sequence[str | IEndpointQueue] = (),
        ingress: Sequence[BridgeIngress] = (),
        body_bucket: MessageBodyBucket | str | None = None,
        shared_key: MessagingKey | None = None,
        organization_id: str | None = None,
        stack_number: int = RELAY_STACK_NUMBER,
        batch_size: int = RELAY_BATCH_SIZE,
        max_batching_window: Duration | None = None,
        alarms: MessagingAlarms | None = None,
        dashboard: MessagingDashboard | None = None,
    ) -> None:
        """Create the shadows with the outbound relay, and the ingress queues with the
        inbound relay.

        :param account_name: this account's name, as every account of the bridge calls it
            (:class:`BridgeAccount`): it fixes the relay roles' names,
            ``messaging-relay-<direction>-<account_name>``.
        :param shadows: the endpoints of other accounts this account's endpoints send to by
            name. Default: none (no outbound relay).
        :param local_endpoints: this account's endpoint queues (and error queue), or their
            names: the addresses the outbound relay stamps with their ARNs, and those a
            released receiver here reaches by name. Required with ``shadows``.
            Default: none.
        :param ingress: this account's endpoints that other accounts' relays deliver to.
            Default: none (no inbound relay).
        :param body_bucket: this account's :class:`~constructs_lib.MessageBodyBucket` (or its
            name, when another stack of the account holds it): the outbound relay copies
            bodies sent through S3 from it, the inbound relay puts into it a body that no
            longer fits inline. Default: none (bodies stay inline).
        :param shared_key: the account's :class:`~constructs_lib.MessagingKey`, for every
            shadow and ingress queue. Default: a key per queue (a delay queue's shadow shares
            its shadow's).
        :param organization_id: the organization of every account the ingress queues admit:
            their grants then also require it. Default: none.
        :param stack_number: which of the account's stacks holds this bridge (each has relay
            roles of its own, ``-<n>`` after the first). Default:
            :data:`~constructs_lib.defaults.RELAY_STACK_NUMBER` (1).
        :param batch_size: messages per relay invocation (1-10,000; above 10 with
            ``max_batching_window``); every shadow's and ingress queue's visibility timeout
            and receive count follow from it. Default:
            :data:`~constructs_lib.defaults.RELAY_BATCH_SIZE` (10).
        :param max_batching_window: how long Lambda gathers a batch. Default: none.
        :param alarms: the account's :class:`~constructs_lib.MessagingAlarms`, which then watch
            every shadow and ingress queue (the age of its oldest message; a delay queue's
            shadow holds every message 15 minutes, so not its) and their dead-letter queues,
            and each relay (:meth:`~constructs_lib.MessagingAlarms.watch_relay`).
            Default: none.
        :param dashboard: the account's :class:`~constructs_lib.MessagingDashboard`, which
            then shows a section per relay, with the alarms on it and its queues.
            Default: none.
        """
        super().__init__(scope, construct_id)
        relay_role_name(account_name, RelayDirection.OUTBOUND)  # a name IAM takes
        require_range("stack_number", stack_number, *RELAY_STACKS)
        if organization_id is not None:
            require_organization_ids("organization_id", [organization_id])
        if shadows and not local_endpoints:
            raise ValueError(
                "local_endpoints: the outbound relay stamps the ARNs of this account's "
                "endpoints; list their queues (or queue names) and the error queue's if here"
            )
        self.account_name = account_name
        self._shared_key = shared_key
        self._organization_id = organization_id
        self._alarms = alarms
        self._dashboard = dashboard
        self._queue_alarms: list[cloudwatch.IAlarm] = []
        self._timing = RelayTiming.for_batch(batch_size)
        self._max_batching_window = max_batching_window
        self._stack_number = stack_number
        self._bodies = body_bucket
        self.shadow_queues = {}
        """The shadows (and delay queues' shadows) by queue name."""
        self.ingress_queues = {}
        """The ingress queues by the name of the endpoint queue they lead to."""
        self.outbound_relay = None
        self.inbound_relay = None
        local = [_local_name(queue) for queue in local_endpoints]
        planned = _merged(shadows)
        if planned:
            self.outbound_relay = self._watched(OUTBOUND_RELAY_ID, self._outbound(planned, local))
        if ingress:
            self.inbound_relay = self._watched(
                INBOUND_RELAY_ID, self._inbound(ingress, local, planned)
            )

    def _watched(self, relay_id: str, relay: CrossAccountRelay) -> CrossAccountRelay:
        """The relay, with its alarms and its dashboard section (beside its queues' alarms,
        made with the queues just before it)."""
        alarms = [*self._queue_alarms]
        self._queue_alarms.clear()
        if self._alarms is not None:
            alarms += self._alarms.watch_relay(relay_id, relay)
        if self._dashboard is not None:
            self._dashboard.show_relay(relay, alarms)
        return relay

    def _relay_queue(
        self, construct_id: str, queue_name: str, *, delay_of: EndpointQueue | None = None
    ) -> EndpointQueue:
        """A queue a relay reads: a shadow or an ingress queue, or (``delay_of``) the shadow of
        a delay queue, which holds every message 900 s as the real one does and shares its
        shadow's key. Its visibility timeout and receive count follow the relays' batch
        size."""
        queue = EndpointQueue(
            self,
            construct_id,
            endpoint_name=queue_name,
            queue_name=queue_name,
            dead_letter_queue_name=dead_letter_queue_name(queue_name),
            fifo=queue_name.endswith(FIFO_SUFFIX),
            max_receive_count=self._timing.max_receive_count,
            visibility_timeout=self._timing.visibility_timeout,
            delayed_delivery=False,
            delivery_delay=DELAY_QUEUE_DELAY if delay_of is not None else None,
            encryption_key=delay_of.encryption_key if delay_of is not None else None,
            shared_key=self._shared_key if delay_of is None else None,
            organization_id=self._organization_id,
        )
        if self._alarms is not None:
            if delay_of is None:
                self._queue_alarms.append(
                    self._alarms.watch_endpoint_queue(construct_id, queue.queue)
                )
            self._queue_alarms.append(
                self._alarms.watch_dead_letter_queue(construct_id, queue.dead_letter_queue)
            )
        return queue

    def _outbound(self, shadows: Sequence[BridgeShadow], local: Sequence[str]) -> CrossAccountRelay:
        routes = []
        for shadow in shadows:
            queue = self._relay_queue(shadow_id(shadow.queue_name), shadow.queue_name)
            self.shadow_queues[shadow.queue_name] = queue
            routes.append(
                RelayRoute(
                    queue,
                    shadow.ingress_queue_arn,
                    body_bucket=shadow.body_bucket,
                    forward_unreadable=shadow.error_queue,
                )
            )
            if shadow.delay_queue_name is not None:
                delay = self._relay_queue(
                    shadow_id(shadow.delay_queue_name), shadow.delay_queue_name, delay_of=queue
                )
                self.shadow_queues[shadow.delay_queue_name] = delay
                routes.append(
                    RelayRoute(
                        delay,
                        shadow.ingress_queue_arn,
                        delayed=True,
                        body_bucket=shadow.body_bucket,
                    )
                )
        return CrossAccountRelay(
            self,
            OUTBOUND_RELAY_ID,
            direction=RelayDirection.OUTBOUND,
            routes=routes,
            local_endpoints=local,
            body_bucket=self._bodies,
            role_name=relay_role_name(
                self.account_name, RelayDirection.OUTBOUND, self._stack_number
            ),
            batch_size=self._timing.batch_size,
            max_batching_window=self._max_batching_window,
        )

    def _inbound(
        self,
        ingress: Sequence[BridgeIngress],
        local: Sequence[str],
        shadows: Sequence[BridgeShadow],
    ) -> CrossAccountRelay:
        bodies = self._body_bucket_name()
        endpoints = [(self._endpoint_queue_arn(e.queue), e) for e in ingress]
        names = [parse_queue_arn(arn).name for arn, _ in endpoints]
        twice = sorted({name for name in names if names.count(name) > 1})
        if twice:
            raise ValueError(
                f"ingress: {', '.join(twice)} listed more than once; an endpoint queue has one "
                "ingress queue, admitting every account that sends to it (sender_accounts)"
            )
        # A released receiver reaches this account's queues by name, its own among them.
        local = list(dict.fromkeys([*local, *names]))
        routes = []
        for (queue_arn, endpoint), name in zip(endpoints, names, strict=True):
            queue = self._relay_queue(
                ingress_id(endpoint.endpoint_name or _endpoint_name(endpoint.queue, name)),
                ingress_queue_name(name),
            )
            self.ingress_queues[name] = queue
            require_other_accounts(
                "sender_accounts",
                [a.account_id for a in endpoint.sender_accounts],
                self,
                "this account's endpoints send to the endpoint queue itself, granted with "
                "EndpointQueue.grant_send_messages",
            )
            queue.add_sender_roles(
                *(role for a in endpoint.sender_accounts for role in a.outbound_relay_roles)
            )
            reachable: Sequence[str] = ()
            if not endpoint.arn_aware:
                reachable = (
                    endpoint.reachable_queues
                    if endpoint.reachable_queues is not None
                    else reachable_queues(
                        endpoint.queue_name_prefix,
                        [_arn_beside(queue_arn, n) for n in local],
                        {s.queue_name: s.remote_queue_arn for s in shadows},
                    )
                )
            routes.append(
                RelayRoute(
                    queue,
                    queue_arn,
                    receiver=ReceiverAddressing.ARN
                    if endpoint.arn_aware
                    else ReceiverAddressing.NAME,
                    reachable_queues=reachable,
                    body_bucket=bodies,
                    form=MessageForm.WRAPPED
                    if endpoint.wrap_outgoing_messages
                    else MessageForm.ATTRIBUTE,
                    forward_unreadable=endpoint.error_queue,
                )
            )
        return CrossAccountRelay(
            self,
            INBOUND_RELAY_ID,
            direction=RelayDirection.INBOUND,
            routes=routes,
            role_name=relay_role_name(
                self.account_name, RelayDirection.INBOUND, self._stack_number
            ),
            batch_size=self._timing.batch_size,
            max_batching_window=self._max_batching_window,
        )

    def _body_bucket_name(self) -> str | None:
        """This account's body bucket by its name, as the inbound routes carry it."""
        bucket = self._bodies
        if bucket is None or isinstance(bucket, str):
            return bucket
        cfn = bucket.bucket.node.default_child
        name = cfn.bucket_name if isinstance(cfn, s3.CfnBucket) else None
        if not isinstance(name, str) or Token.is_unresolved(name):
            raise ValueError(
                "body_bucket: the inbound relay names this account's bucket in its "
                "configuration file, written at synth; create it with bucket_name=..."
            )
        return name

    def _endpoint_queue_arn(self, queue: IEndpointQueue | str) -> str:
        """The endpoint queue's ARN as text: as given, an imported queue's, or computed from
        the name and the environment of a queue of this app."""
        if isinstance(queue, str):
            arn = queue
        elif not Token.is_unresolved(queue.queue_arn):
            arn = queue.queue_arn
        else:
            name = literal_queue_name(queue.queue)
            stack = Stack.of(queue.queue)
            if name is None or any(Token.is_unresolved(v) for v in (stack.account, stack.region)):
                raise ValueError(
                    f"ingress: the inbound relay's configuration file, written at synth, names "
                    f"each endpoint queue by its ARN, and {queue.queue.node.path} has none "
                    "known at synth: give its stack an account and region (env=...) and the "
                    "queue a name, or pass the queue's ARN as text"
                )
            arn = f"arn:{partition_of(stack.region)}:sqs:{stack.region}:{stack.account}:{name}"
        try:
            endpoint = parse_queue_arn(arn)
        except AddressError as error:
            raise ValueError(f"ingress: {error}") from None
        here = Stack.of(self)
        if not Token.is_unresolved(here.account) and endpoint.account != here.account:
            raise ValueError(
                f"ingress: {arn} is a queue of account {endpoint.account}, not of this "
                f"bridge's ({here.account}); the inbound relay delivers in its own account"
            )
        return arn


def _local_name(queue: str | IEndpointQueue) -> str:
    if isinstance(queue, str):
        return queue
    name = literal_queue_name(queue.queue)
    if name is None:
        raise ValueError(
            f"local_endpoints: {queue.queue.node.path} has no name known at synth; give its "
            "queue name as text"
        )
    return name


def _endpoint_name(queue: IEndpointQueue | str, queue_name: str) -> str:
    return queue.endpoint_name if isinstance(queue, EndpointQueue) else queue_name


def _arn_beside(queue_arn: str, name: str) -> str:
    """The ARN of the queue ``name`` in the account and region of ``queue_arn``."""
    return f"{queue_arn.rsplit(':', 1)[0]}:{name}"


def _merged(shadows: Sequence[BridgeShadow]) -> list[BridgeShadow]:
    """Each shadow once: two that share a name must lead to one remote queue (the one with a
    delay queue's shadow kept); two remotes behind one name are refused."""
    by_name: dict[str, BridgeShadow] = {}
    for shadow in shadows:
        known = by_name.setdefault(shadow.queue_name, shadow)
        if known.remote_queue_arn != shadow.remote_queue_arn:
            raise ValueError(
                f"shadows: {known.remote_queue_arn} and {shadow.remote_queue_arn} would share "
                f"the shadow queue {shadow.queue_name!r}, which the endpoints resolve both "
                "addresses to; give one of them another address"
            )
        if known.delay_queue_name is None and shadow.delay_queue_name is not None:
            by_name[shadow.queue_name] = shadow
    return list(by_name.values())
