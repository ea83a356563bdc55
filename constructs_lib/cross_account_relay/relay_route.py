"""``RelayRoute``: one queue a relay reads, where its messages go, and how the route is written
into the relay's configuration file."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from aws_cdk import aws_sqs as sqs

from constructs_lib._private.keywords import checked
from constructs_lib.endpoint_queue import IEndpointQueue
from cross_account_runtime.nservicebus.queue_arn import parse_queue_arn
from cross_account_runtime.relay.config_format import (
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
)


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
