"""The relay's batch processor: a Lambda SQS event in, a partial batch response out.

Each record goes through the pure core
(:func:`cross_account_runtime.relay.decision.relay_message`) and what it decides is sent
(:mod:`cross_account_runtime.relay.sending`). The processor owns what is about the batch, as
Powertools for AWS Lambda's batch processor does for its record handlers:

* **Failure semantics.** A message is acknowledged (left out of ``batchItemFailures``, so Lambda
  deletes it) only after SQS accepted a send of it, to its destination or to its dead-letter
  queue. A message whose body the transport put in S3 is sent only after the body was copied
  into the receiving account's bucket (:mod:`cross_account_runtime.relay.bodies`); a body that
  no longer exists sends the message to its dead-letter queue with the reason. Every other
  failure is reported as a batch-item failure and left to SQS: a failed copy, a failed or
  throttled ``SendMessage``, a failed dead-letter send, a record no send can carry (a queue with
  no route, whose dead-letter queue is therefore unknown), an unexpected error. SQS retries the
  message and, after ``maxReceiveCount`` receives, its redrive policy moves it to the same
  dead-letter queue. A message is never lost.
* **FIFO order.** A failed message stops the later messages of its group in the batch (reported
  failed, not attempted) so that order within the group holds; other groups go on, as
  Powertools' ``SqsFifoPartialProcessor(skip_group_on_error=True)`` does.
* **Logs** (JSON lines, :mod:`cross_account_runtime.common.json_log`): one ``batch relayed``
  line per invocation with the counts and a map of each forwarded message id to the id it was
  sent under, and one line per message that was not simply forwarded, with its ``message_id``,
  ``outcome`` (:class:`LoggedOutcome`), ``kind`` and ``reason``.

**Delivery guarantee.** At least once. On standard queues a message is forwarded again if the
invocation fails after its send (duplicates possible); on FIFO queues the deduplication id the
core derives makes a retry within SQS's 5-minute interval a no-op.
"""

from __future__ import annotations

import enum
import time
import traceback

from cross_account_runtime.common.json_log import JsonLogger, default_logger
from cross_account_runtime.relay.bodies import BodyCopier, BodyMissingError
from cross_account_runtime.relay.config import DEFAULT_SERVICE_NAME, RelayConfig
from cross_account_runtime.relay.decision import Decision, refuse, relay_message
from cross_account_runtime.relay.sending import SqsClients

# A local flag rather than ``typing.TYPE_CHECKING``: importing ``typing`` costs more than most
# of this module; mypy and ruff treat the name the same way.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    from cross_account_runtime.relay.sending import Send

    BatchResponse = dict[str, list[dict[str, str]]]
    """``{"batchItemFailures": [{"itemIdentifier": <messageId>}, ...]}``."""


class LoggedOutcome(enum.StrEnum):
    """The ``outcome`` of a log line about a message that was not simply forwarded (and of
    the configuration error line). A ``StrEnum``, so the lines carry the plain text."""

    NOT_ATTEMPTED = "not_attempted"
    """FIFO: an earlier message of the same group failed in this batch."""
    REFUSED = "refused"
    """No send can carry it; reported failed, so the queue's redrive policy moves it."""
    SEND_FAILED = "send_failed"
    """The forward or the dead-letter send failed; reported failed, so SQS retries it."""
    BODY_COPY_FAILED = "body_copy_failed"
    """The S3 body could not be copied (for a reason a retry may cure); reported failed."""
    DEAD_LETTERED = "dead_lettered"
    """Refused and sent to the dead-letter queue; acknowledged."""
    ERROR = "error"
    """An unexpected error; reported failed (a defect costs a retry, never the message)."""
    MISCONFIGURED = "misconfigured"
    """The configuration is unusable; every record is reported failed."""
    UNREACHABLE_ADDRESS = "unreachable_address"
    """Forwarded, but an address header names a queue the released receiver cannot reach by
    name: an answer to it would fail there (and reach the receiver's error queue)."""


class Relay:
    """The batch processor: call it with a Lambda SQS event and context; returns the partial
    batch response ``{"batchItemFailures": [{"itemIdentifier": <messageId>}, ...]}``.

    ``send`` performs one ``SendMessage`` (default: :class:`SqsClients`), ``copier`` copies S3
    bodies (default: a :class:`BodyCopier` from the relay's own body bucket, when the
    configuration has one), ``logger`` writes the JSON log lines, ``clock`` (epoch seconds)
    times the records of delay queues; all are injectable.
    """

    def __init__(
        self,
        config: RelayConfig,
        *,
        send: Send | None = None,
        copier: BodyCopier | None = None,
        logger: JsonLogger | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.config = config
        self.send = send if send is not None else SqsClients().send
        if copier is None and config.body_bucket is not None:
            home = next(iter(config.routes.values())).source
            copier = BodyCopier(config.body_bucket, home.account)
        self.copier = copier
        self.logger = logger if logger is not None else default_logger(DEFAULT_SERVICE_NAME)
        self.clock = clock
        self._cold = True

    @classmethod
    def from_environment(cls, environ: Mapping[str, str], **dependencies: Any) -> Relay:
        """Build from ``environ`` (see :mod:`cross_account_runtime.relay.config`)."""
        return cls(RelayConfig.from_environment(environ), **dependencies)

    def __call__(self, event: Mapping[str, Any], context: Any = None) -> BatchResponse:
        failures: list[dict[str, str]] = []
        forwarded: dict[str, str] = {}
        stopped_groups: set[tuple[str, str]] = set()
        request_id = getattr(context, "aws_request_id", None)
        records = _records(event)
        for record in records:
            group = _fifo_group(record)
            if group is not None and group in stopped_groups:
                self._log(
                    "INFO",
                    "not attempted: an earlier message of its FIFO group failed in this batch",
                    record,
                    request_id,
                    outcome=LoggedOutcome.NOT_ATTEMPTED,
                )
                failures.append({"itemIdentifier": record["messageId"]})
                continue
            if not self._relay(record, request_id, forwarded):
                failures.append({"itemIdentifier": record["messageId"]})
                if group is not None:
                    stopped_groups.add(group)
        # One line for the whole batch: a line per forwarded message would cost more than
        # relaying it. It maps each forwarded message id to the id it was sent under.
        self.logger.info(
            "batch relayed",
            records=len(records),
            forwarded=len(forwarded),
            dead_lettered=len(records) - len(forwarded) - len(failures),
            failed=len(failures),
            forwarded_messages=forwarded or None,
            cold_start=self._cold,
            function_request_id=request_id,
        )
        self._cold = False
        return {"batchItemFailures": failures}

    def _relay(
        self, record: Mapping[str, Any], request_id: str | None, forwarded: dict[str, str]
    ) -> bool:
        """Relay one record; ``True`` once SQS accepted it somewhere (so it may be deleted).

        A forwarded record is added to ``forwarded`` (its id to the id it was sent under)
        instead of being logged on its own line.
        """
        try:
            decision = relay_message(record, self.config, self.clock())
        except Exception as error:
            # A defect must cost a retry, never the message.
            self._log(
                "ERROR",
                "unexpected error; the message is reported failed and will be retried",
                record,
                request_id,
                outcome=LoggedOutcome.ERROR,
                exception_name=type(error).__name__,
                exception="".join(traceback.format_exception(error)),
            )
            return False
        if decision.body_key is not None:
            copied = self._copy_body(record, request_id, decision, decision.body_key)
            if copied is None:
                return False
            decision = copied
        facts: dict[str, object] = {
            "kind": decision.kind,
            "reason": decision.reason or None,
            "wire_form": decision.wire_form,
            "rewritten_headers": list(decision.rewritten_headers) or None,
        }
        if decision.request is None or decision.queue is None:
            self._log(
                "ERROR",
                "refused; reported failed, so the queue's redrive policy moves it to its "
                "dead-letter queue",
                record,
                request_id,
                outcome=LoggedOutcome.REFUSED,
                **facts,
            )
            return False
        try:
            sent_id = self.send(decision.queue.region, decision.request)
        except Exception as error:
            # Whatever SQS or the network answered, the message stays in its queue to be retried.
            self._log(
                "WARNING",
                ("forward failed" if decision.forwarded else "dead-letter send failed")
                + "; reported failed, so SQS retries it",
                record,
                request_id,
                outcome=LoggedOutcome.SEND_FAILED,
                destination_queue=str(decision.queue),
                error=f"{type(error).__name__}: {error}",
                **facts,
            )
            return False
        if decision.unreachable_headers:
            self._log(
                "WARNING",
                "forwarded with address headers the receiver cannot resolve back: no queue of "
                "its account leads to their queue; give the topology a route for the way back",
                record,
                request_id,
                outcome=LoggedOutcome.UNREACHABLE_ADDRESS,
                unreachable_headers=list(decision.unreachable_headers),
                **facts,
            )
        if decision.forwarded:
            forwarded[record["messageId"]] = sent_id
        else:
            self._log(
                "ERROR",
                "refused; sent to the dead-letter queue",
                record,
                request_id,
                outcome=LoggedOutcome.DEAD_LETTERED,
                destination_queue=str(decision.queue),
                sent_message_id=sent_id,
                **facts,
            )
        return True

    def _copy_body(
        self, record: Mapping[str, Any], request_id: str | None, decision: Decision, key: str
    ) -> Decision | None:
        """Copy the record's S3 body into the destination account's bucket: the decision to
        send on success, the dead-letter decision if the body is gone, ``None`` (reported
        failed, retried by SQS) for any other failure."""
        route = self.config.routes[record["eventSourceARN"]]
        if self.copier is None or route.body_bucket is None:
            raise ValueError("copier: a route copies bodies but the relay has no copier")
        try:
            self.copier.copy(
                key,
                route.body_bucket,
                route.destination.account,
                route.destination.region,
            )
        except BodyMissingError as error:
            return refuse(record, self.config, str(error))
        except Exception as error:
            self._log(
                "WARNING",
                "body copy failed; reported failed, so SQS retries it",
                record,
                request_id,
                outcome=LoggedOutcome.BODY_COPY_FAILED,
                body_key=key,
                destination_bucket=route.body_bucket,
                error=f"{type(error).__name__}: {error}",
            )
            return None
        return decision

    def _log(
        self,
        level: str,
        message: str,
        record: Mapping[str, Any],
        request_id: str | None,
        **fields: object,
    ) -> None:
        attributes = record.get("attributes")
        self.logger.log(
            level,
            message,
            {
                "message_id": record.get("messageId"),
                "source_queue": record.get("eventSourceARN"),
                "receive_count": (
                    attributes.get("ApproximateReceiveCount")
                    if isinstance(attributes, dict)
                    else None
                ),
                **fields,
                "cold_start": self._cold,
                "function_request_id": request_id,
            },
        )


def _records(event: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The event's records; an event that is not an SQS batch fails the whole invocation, so
    Lambda retries the batch rather than the relay guessing which messages it holds."""
    records = event.get("Records") if isinstance(event, dict) else None
    if not isinstance(records, list) or not all(
        isinstance(record, dict) and isinstance(record.get("messageId"), str) for record in records
    ):
        raise ValueError(
            "the event is not a Lambda SQS event (a 'Records' list whose items have a "
            "'messageId'); invoke the relay through an SQS event source mapping"
        )
    return records


def _fifo_group(record: Mapping[str, Any]) -> tuple[str, str] | None:
    """``(source queue, message group)`` for a record from a FIFO queue, else ``None``."""
    source = record.get("eventSourceARN")
    attributes = record.get("attributes")
    if not isinstance(source, str) or not source.endswith(".fifo"):
        return None
    group = attributes.get("MessageGroupId") if isinstance(attributes, dict) else None
    return (source, group if isinstance(group, str) else "")


def failed_batch(event: Mapping[str, Any]) -> BatchResponse:
    """The partial batch response reporting every record of ``event`` failed: what a relay
    answers while it cannot relay at all, so the messages stay in their queues."""
    return {
        "batchItemFailures": [{"itemIdentifier": record["messageId"]} for record in _records(event)]
    }
