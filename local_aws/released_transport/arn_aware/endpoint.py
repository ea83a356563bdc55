"""The seed's ARN-aware ("New") endpoint: the released endpoint plus the ARN header.

Seed 000 designs, and no release implements, three changes to the transport:

* **sending** (in the dispatcher, so every outgoing message: sends, replies, forwards, delayed
  retries, moves to the error queue, acknowledgements): every header whose value equals the
  endpoint's own transport address (its receive address, a queue name) gets an entry
  ``header=<own queue ARN>`` in ``NServiceBus.Transport.Sqs.ARN``; an existing ARN header is
  parsed first and its entries kept. The headers themselves keep the legacy names, so released
  ("Old") receivers still work within an account. A header is rewritten only when an entry is
  added, so a forward stays an exact copy. The rule compares values only: without a queue name
  prefix an endpoint's name *is* its transport address, so ``NServiceBus.OriginatingEndpoint``
  and ``NServiceBus.ProcessingEndpoint`` get entries too, and a New receiver replaces those
  endpoint names with a queue ARN — the model keeps the seed's rule as written;
* **receiving** (in the input pump, before the pipeline and before recoverability): every
  header named in the ARN header that the message has takes the entry's value. A malformed ARN
  header fails the extraction, so the message is poison and goes to the error queue unchanged
  (the seed does not say; this is the pump's rule for unreadable messages);
* **addressing**: a destination given as a queue ARN (a send, a reply, or a publish's copy to a
  subscriber stored by ARN) (``arn:<partition>:sqs:<region>:<account>:
  <name>``) is sent to that queue in that account — the URL is built from the ARN (the client's
  endpoint when the region is the client's, else the region's public endpoint), no prefix or
  sanitizing applied — and ``use_account_for_endpoint`` / ``use_region_for_endpoint`` (the seed's
  ``UseAccountForEndpoint`` / ``UseRegionForEndpoint``) turn a send to a mapped endpoint name into
  the ARN of its queue (the name through the generator, as the queue is named). Everything else
  is resolved by name in the endpoint's own account, as the released transport does.

In the message-driven compatibility mode (the seed's "Hybrid mode message-driven pub-sub"): a
subscribe request goes to the publisher's queue ARN when the publisher's endpoint is mapped
(else by name), and is stamped like every message — ``NServiceBus.ReplyToAddress`` and
``NServiceBus.SubscriberAddress`` carry the own address, so both get entries (and, without a
prefix, ``NServiceBus.SubscriberEndpoint`` too). A New publisher's pump substitutes before the
subscription storage sees the request, so it stores the subscriber's queue ARN (and, without a
prefix, the ARN as its endpoint name) and sends its copies of an event to that ARN. A
subscription stored earlier by name stays, so the storage holds two entries for one queue; with
the same endpoint name they are one group and each publish goes to one of them, round-robin
(the seed's remark); with different names (no prefix) both get every event. The hybrid
de-duplication is the released one: it compares subscription endpoints with the destination's
*sanitized name*, which for an ARN destination never matches, so a natively subscribed
subscriber stored by ARN gets the event twice, and an ARN over 80 characters fails the name
derivation and with it the publish (the seed says nothing about it).

The own queue ARN is the input queue's ``QueueArn`` attribute, read once through the queue
cache. The ``:name`` address form of the seed is not modelled.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Final

from local_aws.released_transport.arn_aware.header import (
    ARN_HEADER,
    format_arn_header,
    parse_arn_header,
)
from local_aws.released_transport.core.outgoing import TransportTransaction
from local_aws.released_transport.dotnet.time_formats import Clock, system_clock
from local_aws.released_transport.endpoint.released_endpoint import (
    ReleasedEndpoint,
)
from local_aws.released_transport.endpoint.settings import EndpointSettings
from local_aws.released_transport.headers import HeaderDict
from local_aws.released_transport.transport.pubsub.topic_cache import TopicCache
from local_aws.released_transport.transport.queues.queue_cache import QueueCache
from local_aws.released_transport.transport.queues.sqs_shapes import ReceivedMessage
from local_aws.released_transport.transport.receiving.extraction import ExtractedMessage
from local_aws.released_transport.transport.receiving.input_pump import InputQueuePump
from local_aws.released_transport.transport.s3_settings import S3Settings
from local_aws.released_transport.transport.sending.dispatcher import MessageDispatcher, Operation
from local_aws.released_transport.transport.sending.hybrid_pubsub import (
    DEFAULT_SUBSCRIPTIONS_CACHE_TTL,
)

_ARN_PARTS: Final = 6
_SQS_SERVICE: Final = "sqs"


@dataclass(frozen=True)
class QueueArn:
    """An SQS queue ARN, ``arn:<partition>:sqs:<region>:<account>:<queue name>``."""

    partition: str
    region: str
    account_id: str
    queue_name: str

    def __str__(self) -> str:
        return (
            f"arn:{self.partition}:{_SQS_SERVICE}:{self.region}:{self.account_id}:{self.queue_name}"
        )


def parse_queue_arn(text: str) -> QueueArn | None:
    """The queue ARN ``text`` is, or ``None`` when it is not a well-formed SQS queue ARN."""
    parts = text.split(":")
    if len(parts) != _ARN_PARTS or parts[0] != "arn" or parts[2] != _SQS_SERVICE:
        return None
    _, partition, _, region, account_id, queue_name = parts
    if not (partition and region and account_id.isdigit() and queue_name):
        return None
    return QueueArn(partition, region, account_id, queue_name)


def stamp_arn_header(headers: HeaderDict, own_address: str, own_arn: str) -> None:
    """The sending step: an entry for every header that carries ``own_address``."""
    carrying = [name for name, value in headers.items() if value == own_address]
    if not carrying:
        return
    existing = headers.get(ARN_HEADER)
    entries = parse_arn_header(existing) if existing else {}
    for name in carrying:
        entries[name] = own_arn
    headers[ARN_HEADER] = format_arn_header(entries)


def substitute_arn_header(headers: HeaderDict) -> None:
    """The receiving step: each header named in the ARN header takes the entry's value."""
    text = headers.get(ARN_HEADER)
    if not text:
        return
    for name, value in parse_arn_header(text).items():
        if name in headers:
            headers[name] = value


class ArnAwareDispatcher(MessageDispatcher):
    """The released dispatcher, stamping the ARN header and resolving queue ARNs."""

    def __init__(
        self,
        sqs: Any,
        queue_cache: QueueCache,
        *,
        own_address: str,
        own_arn: Callable[[], str],
        topic_cache: TopicCache | None = None,
        s3: S3Settings | None = None,
        wrap_outgoing_messages: bool = True,
        reserve_bytes_in_message_size_calculation: int = 0,
        subscriptions_cache_ttl: timedelta = DEFAULT_SUBSCRIPTIONS_CACHE_TTL,
        clock: Clock = system_clock,
    ) -> None:
        super().__init__(
            sqs,
            queue_cache,
            topic_cache=topic_cache,
            s3=s3,
            wrap_outgoing_messages=wrap_outgoing_messages,
            reserve_bytes_in_message_size_calculation=reserve_bytes_in_message_size_calculation,
            subscriptions_cache_ttl=subscriptions_cache_ttl,
            clock=clock,
        )
        self._own_address = own_address
        self._own_arn = own_arn

    def dispatch(
        self, operations: Sequence[Operation], transaction: TransportTransaction | None = None
    ) -> None:
        """Stamp every operation's headers (a publish's operations share them), then send."""
        for operation in operations:
            headers = operation.message.headers
            if any(value == self._own_address for value in headers.values()):
                stamp_arn_header(headers, self._own_address, self._own_arn())
        super().dispatch(operations, transaction)

    def resolve(self, destination: str) -> str:
        arn = parse_queue_arn(destination)
        if arn is None:
            return super().resolve(destination)
        endpoint = str(self._sqs.meta.endpoint_url).rstrip("/")
        if arn.region != self._sqs.meta.region_name:
            endpoint = f"https://sqs.{arn.region}.amazonaws.com"
        return f"{endpoint}/{arn.account_id}/{arn.queue_name}"


class ArnAwareInputQueuePump(InputQueuePump):
    """The released input pump, substituting from the ARN header before the pipeline."""

    def extract(self, message: ReceivedMessage, native_id: str) -> ExtractedMessage:
        extracted = super().extract(message, native_id)
        substitute_arn_header(extracted.headers)
        return extracted


class ArnAwareEndpoint(ReleasedEndpoint):
    """A "New" endpoint: the released endpoint with the seed's ARN handling."""

    input_pump_type = ArnAwareInputQueuePump

    def __init__(
        self,
        endpoint_name: str,
        sqs: Any,
        settings: EndpointSettings | None = None,
        *,
        sns: Any = None,
    ):
        self._accounts: dict[str, str] = {}
        self._regions: dict[str, str] = {}
        super().__init__(endpoint_name, sqs, settings, sns=sns)

    def use_account_for_endpoint(self, endpoint_name: str, account_id: str) -> None:
        """``UseAccountForEndpoint``: sends to ``endpoint_name`` go to its queue in that
        account."""
        self._accounts[endpoint_name] = account_id

    def use_region_for_endpoint(self, endpoint_name: str, region: str) -> None:
        """``UseRegionForEndpoint``: the region of a mapped endpoint (default: the client's)."""
        self._regions[endpoint_name] = region

    @property
    def queue_arn(self) -> str:
        """The endpoint's own queue ARN (its input queue's ``QueueArn``)."""
        return self.queue_cache.queue_arn(self.queue_cache.queue_url(self.receive_address))

    def route(self, destination: str) -> str:
        """A mapped endpoint name becomes its queue ARN; anything else stays as it is."""
        if destination not in self._accounts:
            return destination
        own = parse_queue_arn(self.queue_arn)
        partition = own.partition if own is not None else "aws"
        region = self._regions.get(destination, self._sqs.meta.region_name)
        queue_name = self.queue_cache.physical_queue_name(destination)
        return str(QueueArn(partition, region, self._accounts[destination], queue_name))

    def publisher_address(self, publisher_endpoint: str) -> str:
        """A mapped publisher's queue ARN (the seed's instance mapping), else its name."""
        if publisher_endpoint in self._accounts:
            return self.route(publisher_endpoint)
        return super().publisher_address(publisher_endpoint)

    def _create_dispatcher(self) -> MessageDispatcher:
        return ArnAwareDispatcher(
            self._sqs,
            self.queue_cache,
            own_address=self.receive_address,
            own_arn=lambda: self.queue_arn,
            topic_cache=self.topic_cache,
            s3=self.settings.s3,
            wrap_outgoing_messages=self.settings.wrap_outgoing_messages,
            reserve_bytes_in_message_size_calculation=(
                self.settings.reserve_bytes_in_message_size_calculation
            ),
            subscriptions_cache_ttl=self._subscriptions_cache_ttl(),
            clock=self.settings.clock,
        )
