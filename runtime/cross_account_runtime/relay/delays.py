"""Delays over 15 minutes across accounts: the relay as NServiceBus's delayed messages pump.

A released endpoint sends a message delayed by more than 900 s (SQS's longest per-message
delay) to ``<destination>-delay.fifo`` by name in its own account, with the whole delay in the
``NServiceBus.AmazonSQS.DelaySeconds`` attribute; the queue holds every message 900 s. Where the
destination lives in another account, that queue is the bridge's shadow, and the outbound relay
does what the destination's ``DelayedMessagesPump`` would do with its own delay queue
(NServiceBus.AmazonSQS ``Receiving/DelayedMessagesPump.cs``):

* ``remaining = DelaySeconds - (received - sent)``, where ``DelaySeconds`` is the attribute read
  with ``long.TryParse`` (text it refuses, such as ``1_200``, ``" 12 3"``, full-width digits
  or a value past a long, counts as no delay, as in the pump), ``sent`` is the message's
  ``SentTimestamp`` and ``received`` its ``ApproximateFirstReceiveTimestamp``, or now when it
  was received before (the first receive may be long past), in whole seconds toward zero;
* while ``remaining`` is over 900 s, the message goes back to the same delay queue with the
  remaining delay and its deduplication id as group and deduplication id (a retried send inside
  SQS's 5-minute window is then dropped, not doubled);
* otherwise it is forwarded to the destination's ingress queue, a standard queue, with
  ``DelaySeconds = remaining`` when positive and the attribute removed.

Each step is one ``SendMessage`` before the acknowledgement, so a relay that fails midway leaves
the message in the queue to be retried: nothing is lost, and the worst case is one duplicate on
the standard ingress queue.
"""

from __future__ import annotations

from cross_account_runtime.nservicebus.dotnet_text import try_parse_int64

# A local flag rather than ``typing.TYPE_CHECKING``: importing ``typing`` costs more than this
# whole module; mypy and ruff treat the name the same way.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any, Final

DELAY_SECONDS_ATTRIBUTE: Final = "NServiceBus.AmazonSQS.DelaySeconds"
QUEUE_DELAY_SECONDS: Final = 900
"""The delay queue's own delay, and SQS's longest per-message delay."""


def remaining_delay(record: Mapping[str, Any], now: float) -> int:
    """The seconds of delay a record of a delay queue still has, as the pump computes them
    (a missing ``DelaySeconds`` attribute, or one ``long.TryParse`` refuses, counts as no
    delay)."""
    system = record["attributes"]
    attribute = (record.get("messageAttributes") or {}).get(DELAY_SECONDS_ATTRIBUTE) or {}
    text = attribute.get("stringValue")
    delay = (try_parse_int64(text) if isinstance(text, str) else None) or 0
    sent = int(system["SentTimestamp"]) / 1000
    received = (
        now
        if int(system.get("ApproximateReceiveCount", "1")) > 1
        else int(system["ApproximateFirstReceiveTimestamp"]) / 1000
    )
    return delay - int(received - sent)
