"""What the account bridge writes into address headers, and nothing else.

Only the headers that hold a queue address
(:data:`~cross_account_runtime.nservicebus.address_headers.ADDRESS_HEADERS`) are touched:
an endpoint name, a machine or a host may equal a queue name, but rewriting one would make
ServiceControl list an endpoint by ARN or a publisher store a second subscriber.

* Outbound, in the sender's account: every address header whose value is the address of a queue
  of that account gets an entry in the ARN header (``NServiceBus.Transport.Sqs.ARN``) with the
  queue's ARN, the form seed 000 defines; the headers themselves keep their values.
* Inbound, for an ARN-aware receiver: nothing; it substitutes the ARN header itself.
* Inbound, for a released receiver, which resolves every address by name in its own account:
  every address header whose queue is known by ARN (the ARN header's entry for it, or the
  header's own value when a forwarding ARN-aware endpoint left an ARN there) gets the address
  that leads to that queue from the receiver's account, the queue's name, when the receiver
  reaches it (a local queue, or one the bridge shadows there under that name). One it does not
  reach gets the ARN, which no name resolves: an answer to it fails at the receiver, and its
  recoverability keeps the message, where the name could have led to another queue of the same
  name in the receiver's account. The ARN header stays, so that the next hop translates from
  the same canonical ARNs.
"""

from __future__ import annotations

from cross_account_runtime.nservicebus.address_headers import ADDRESS_HEADERS
from cross_account_runtime.nservicebus.arn_header import ARN_HEADER, decode, encode

# A local flag rather than ``typing.TYPE_CHECKING``: importing ``typing`` costs more than this
# whole module; mypy and ruff treat the name the same way.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

ARN_PREFIX = "arn:"


def stamp(
    headers: Mapping[str, str], local_queues: Mapping[str, str]
) -> tuple[dict[str, str], tuple[str, ...]]:
    """The changes that list in the ARN header every address header naming a local queue
    (``local_queues``: address to queue ARN), and the names listed.

    The changes are the ARN header alone, or nothing when it already lists them all. Existing
    entries are kept (an earlier hop's), and an entry for a header that now names a local queue
    is replaced: the value is what the message carries now. The ARN header must already be
    valid; :func:`cross_account_runtime.nservicebus.arn_header.encode` refuses what it cannot
    list.
    """
    stamped = {
        name: local_queues[value]
        for name, value in headers.items()
        if name in ADDRESS_HEADERS and value in local_queues
    }
    if not stamped:
        return {}, ()
    entries = decode(headers[ARN_HEADER]) if ARN_HEADER in headers else {}
    if all(entries.get(name) == arn for name, arn in stamped.items()):
        return {}, tuple(stamped)
    entries.update(stamped)
    return {ARN_HEADER: encode(entries)}, tuple(stamped)


def translate(
    headers: Mapping[str, str], addresses: Mapping[str, str]
) -> tuple[dict[str, str], tuple[str, ...]]:
    """The changes that write every address header whose queue ARN is known as the address
    ``addresses`` gives for that ARN, or as the ARN where it gives none; and the names of the
    headers whose queue the receiver cannot reach by name."""
    entries = decode(headers[ARN_HEADER]) if ARN_HEADER in headers else {}
    changes: dict[str, str] = {}
    unreachable: list[str] = []
    for name, value in headers.items():
        if name not in ADDRESS_HEADERS:
            continue
        arn = entries.get(name) or (value if value.startswith(ARN_PREFIX) else None)
        if arn is None:
            continue
        address = addresses.get(arn)
        if address is None:
            unreachable.append(name)
            address = arn
        if address != value:
            changes[name] = address
    return changes, tuple(unreachable)
