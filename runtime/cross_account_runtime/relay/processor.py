"""The relay's batch processor: a Lambda SQS event in, a partial batch response out.

Each record goes through the pure core
(:func:`cross_account_runtime.relay.core.relay_message`); then what was decided is sent in
``SendMessageBatch`` calls planned by :mod:`cross_account_runtime.relay.send_batches` (per queue,
up to 10 entries and 1 MiB; on FIFO queues one message per group per call) and made one after
the other (:mod:`cross_account_runtime.relay.sending`). On AWS a request costs 5-20 ms and is
billed, so one per ten messages instead of one per message is what the relay's throughput and
cost turn on. The processor owns what is about the batch, as Powertools for AWS Lambda's batch
processor does for its record handlers:

* **Failure semantics.** A message is acknowledged (left out of ``batchItemFailures``, so Lambda
  deletes it) only after SQS accepted a send of it, to its destination or to its dead-letter
  queue, or when its time to be received has run out (the receiving transport would discard
  it). A message whose body the transport put in S3 is sent only after the body was copied
  into the receiving account's bucket, and one whose body no longer fits inline only after the
  relay put it in S3 (:mod:`cross_account_runtime.relay.bodies`); a body that no longer exists
  sends the message to its dead-letter queue with the reason. Every other failure is reported
  as a batch-item failure and left to SQS: a failed copy or upload, an entry SQS refused in a
  batch (exactly that message), a call that failed as a whole or stayed throttled through
  botocore's retries (exactly the messages it carried), a failed dead-letter send, a record no
  send can carry (a queue with no route, whose dead-letter queue is therefore unknown), an
  unexpected error, and a call not started because less than its worst case
  (:data:`~cross_account_runtime.common.aws_clients.WORST_CASE_CALL_SECONDS`) is left of the
  function's time. SQS retries the message and, after ``maxReceiveCount`` receives, its redrive
  policy moves it to the same dead-letter queue. A message is never lost.
* **Nothing reaches a dead-letter queue untried.** On a standard queue the records with the
  most receives are decided and sent first, so a batch larger than the function's time can
  carry tries the messages closest to their queue's ``maxReceiveCount`` (FIFO queues keep their
  order). A send that fails on a record's last receive (``ApproximateReceiveCount`` reaching the
  route's ``maxReceiveCount``) does not leave the message to the redrive policy, which would
  move it without a word: the relay dead-letters it itself, with a ``Relay.Rejection`` naming
  the failure (``destination_missing`` for a queue that is gone, ``key_refused`` for a KMS key
  that refuses, ``send_failed`` otherwise).
* **FIFO order.** A failed message stops the later messages of its group in the batch (reported
  failed, not attempted) so that order within the group holds; other groups go on, as
  Powertools' ``SqsFifoPartialProcessor(skip_group_on_error=True)`` does. Since no call carries
  two messages of a group, a message is never stored after one of its group that failed.
* **Logs** (JSON lines, :mod:`cross_account_runtime.common.json_log`): one ``batch relayed``
  line per invocation with the counts (``send_requests``: the calls made; ``expired``: messages
  whose time to be received had run out) and a map of each forwarded message id to the id it
  was sent under, and one line per message that was not simply forwarded, with its
  ``message_id``, ``outcome`` (:class:`LoggedOutcome`), ``kind`` and ``reason``.

**Delivery guarantee.** At least once. On standard queues a message is forwarded again if the
invocation fails after its send (duplicates possible); on FIFO queues the deduplication id the
core derives makes a retry within SQS's 5-minute interval a no-op.
"""

from __future__ import annotations

import time
import traceback

from cross_account_runtime.common.aws_clients import WORST_CASE_CALL_SECONDS
from cross_account_runtime.common.emf import SERVICE_DIMENSION, write_metrics
from cross_account_runtime.common.json_log import JsonLogger, default_logger
from cross_account_runtime.relay.bodies import BodyMissingError, BodyStore
from cross_account_runtime.relay.config import RelayConfig
from cross_account_runtime.relay.config_format import DEFAULT_SERVICE_NAME
from cross_account_runtime.relay.core import refuse, relay_message
from cross_account_runtime.relay.decision import Decision, DecisionKind
from cross_account_runtime.relay.invocation import Invocation, event_records
from cross_account_runtime.relay.outcomes import (
    BODY_COPIED,
    BODY_UPLOADED,
    DIRECTION_DIMENSION,
    FORM_CONVERTED,
    LoggedOutcome,
    OutcomeTally,
    batch_counts,
)
from cross_account_runtime.relay.send_batches import PendingSend, batch_calls
from cross_account_runtime.relay.sending import BatchResult, SendFailure, SqsClients

# A local flag rather than ``typing.TYPE_CHECKING``: importing ``typing`` costs more than most
# of this module; mypy and ruff treat the name the same way.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any, Final

    from cross_account_runtime.common.emf import MetricsWriter
    from cross_account_runtime.relay.invocation import BatchResponse
    from cross_account_runtime.relay.send_batches import BatchCall
    from cross_account_runtime.relay.sending import SendBatch


RECOUNT_AFTER_SECONDS: Final = 1.0
"""How long a decided message may wait for its call before its time to be received is counted
again: the receiver's deadline is then late by at most this and one call's duration."""

_FAILED_SEND_OUTCOMES: Final = {
    "destination_missing": LoggedOutcome.DESTINATION_MISSING,
    "key_refused": LoggedOutcome.KEY_REFUSED,
    "send_failed": LoggedOutcome.SEND_FAILED,
}
_LAST_RECEIVE_KINDS: Final = {
    "destination_missing": DecisionKind.DESTINATION_MISSING,
    "key_refused": DecisionKind.KEY_REFUSED,
    "send_failed": DecisionKind.SEND_FAILED,
}


class Relay:
    """The batch processor: call it with a Lambda SQS event and context; returns the partial
    batch response ``{"batchItemFailures": [{"itemIdentifier": <messageId>}, ...]}``.

    ``send_batch`` performs one ``SendMessageBatch`` (default: :class:`SqsClients`),
    ``bodies`` copies and puts S3 bodies (default: a :class:`BodyStore` when a route has a body
    bucket), ``logger`` writes the JSON log lines, ``clock`` (epoch seconds) times delays and
    time to be received; all are injectable.
    """

    def __init__(
        self,
        config: RelayConfig,
        *,
        send_batch: SendBatch | None = None,
        bodies: BodyStore | None = None,
        logger: JsonLogger | None = None,
        clock: Callable[[], float] = time.time,
        metrics: MetricsWriter = write_metrics,
    ) -> None:
        self.config = config
        self.send_batch = send_batch if send_batch is not None else SqsClients().send_batch
        if bodies is None and any(r.body_bucket for r in config.routes.values()):
            home = next(iter(config.routes.values())).source
            bodies = BodyStore(config.body_bucket, home.account)
        self.bodies = bodies
        self.logger = logger if logger is not None else default_logger(DEFAULT_SERVICE_NAME)
        self.clock = clock
        self.metrics = metrics
        self._cold = True
        self._tally = OutcomeTally()

    @classmethod
    def from_environment(cls, environ: Mapping[str, str], **dependencies: Any) -> Relay:
        """Build from ``environ`` (see :mod:`cross_account_runtime.relay.config`)."""
        return cls(RelayConfig.from_environment(environ), **dependencies)

    def __call__(self, event: Mapping[str, Any], context: Any = None) -> BatchResponse:
        records = event_records(event)
        state = Invocation(records, context)
        self._tally = OutcomeTally()
        for index in state.in_priority_order():
            record = records[index]
            if state.group_stopped(index):
                self._not_attempted(record, state.request_id)
                state.fail(index)
                continue
            decision = self._decide(record, state)
            if decision is None:
                state.fail(index)
            elif decision.kind is DecisionKind.EXPIRED:
                state.expired += 1
            else:
                state.decided[index] = decision
        calls = self._send(state)
        failed, forwarded = state.failed, state.forwarded
        dead_lettered = len(records) - len(forwarded) - len(failed) - state.expired
        # One line for the whole batch: a line per forwarded message would cost more than
        # relaying it. It maps each forwarded message id to the id it was sent under.
        self.logger.info(
            "batch relayed",
            records=len(records),
            forwarded=len(forwarded),
            dead_lettered=dead_lettered,
            expired=state.expired,
            failed=len(failed),
            send_requests=calls,
            forwarded_messages=forwarded or None,
            cold_start=self._cold,
            function_request_id=state.request_id,
        )
        core = (len(records), len(forwarded), dead_lettered, state.expired, len(failed), calls)
        dimensions = {
            SERVICE_DIMENSION: self.logger.service,
            DIRECTION_DIMENSION: str(self.config.direction),
        }
        self.metrics(dimensions, batch_counts(core, self._tally))
        self._cold = False
        return {
            "batchItemFailures": [
                {"itemIdentifier": records[index]["messageId"]} for index in sorted(failed)
            ]
        }

    def _decide(self, record: Mapping[str, Any], state: Invocation) -> Decision | None:
        """The record's decision, its body copied or uploaded first; ``None`` (logged) when it
        cannot be sent anywhere in this invocation, so it must be reported failed."""
        request_id = state.request_id
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
            return None
        if decision.kind is DecisionKind.EXPIRED:
            self._log(
                "INFO",
                "expired; not delivered, as the receiving transport would discard it",
                record,
                request_id,
                outcome=LoggedOutcome.EXPIRED,
                **_facts(decision),
            )
            return decision
        if decision.body_copy is not None or decision.upload is not None:
            if state.remaining_seconds() < WORST_CASE_CALL_SECONDS:
                self._log(
                    "WARNING",
                    "not attempted: too little of the function's time is left for its S3 call; "
                    "reported failed, so SQS retries it",
                    record,
                    request_id,
                    outcome=LoggedOutcome.NOT_ATTEMPTED,
                )
                return None
            stored = self._store_body(record, request_id, decision)
            if stored is None:
                return None
            decision = stored
        if decision.request is None or decision.queue is None:
            self._log(
                "ERROR",
                "refused; reported failed, so the queue's redrive policy moves it to its "
                "dead-letter queue",
                record,
                request_id,
                outcome=LoggedOutcome.REFUSED,
                **_facts(decision),
            )
            return None
        return decision

    def _send(self, state: Invocation) -> int:
        """Send every decided record in the planned ``SendMessageBatch`` calls (see
        :mod:`~cross_account_runtime.relay.send_batches`), one after the other, the calls with the
        most received messages first, and account for each. Returns the number of calls made."""
        pending = [
            PendingSend(
                index, decision.queue, decision.request, timed=decision.decided_at is not None
            )
            for index, decision in state.decided.items()
            if decision.queue is not None and decision.request is not None
        ]
        made = 0
        for call in sorted(batch_calls(pending), key=state.call_priority):
            made += self._make_call(call, state)
        return made

    def _make_call(self, call: BatchCall, state: Invocation) -> int:
        """One planned call: its sends not stopped by their FIFO group, if time allows; then
        the records whose send failed on their last receive go to their dead-letter queue.
        Returns the number of calls made."""
        records, request_id = state.records, state.request_id
        sends = []
        for send in call.sends:
            if state.group_stopped(send.index):
                self._not_attempted(records[send.index], request_id)
                state.fail(send.index)
            else:
                sends.append(send)
        if not sends:
            return 0
        if state.remaining_seconds() < WORST_CASE_CALL_SECONDS:
            for send in sends:
                self._log(
                    "WARNING",
                    "not sent: too little of the function's time is left for another "
                    "SQS call; reported failed, so SQS retries it",
                    records[send.index],
                    request_id,
                    outcome=LoggedOutcome.NOT_ATTEMPTED,
                    destination_queue=str(call.queue),
                )
                state.fail(send.index)
            return 0
        sends = self._counted_again(sends, state)
        if not sends:
            return 0
        call.sends = sends
        result = self._call(call)
        last_tries: list[tuple[int, SendFailure]] = []
        for position, send in enumerate(sends):
            entry = str(position)
            record, decision = records[send.index], state.decided[send.index]
            sent_id = result.sent.get(entry)
            if sent_id is not None:
                self._sent(record, request_id, decision, sent_id, state.forwarded)
                continue
            failure = result.failed.get(entry) or SendFailure(None, "no result for the entry")
            self._send_failed(record, request_id, decision, failure)
            if decision.forwarded and _last_receive(record, state.counts[send.index], self.config):
                last_tries.append((send.index, failure))
            else:
                state.fail(send.index)
        if not last_tries:
            return 1
        return 1 + self._dead_letter_last_tries(last_tries, state)

    def _counted_again(self, sends: list[PendingSend], state: Invocation) -> list[PendingSend]:
        """The sends of a call, those whose time to be received was counted more than
        :data:`RECOUNT_AFTER_SECONDS` ago counted again (a large batch with slow calls may
        wait minutes for its call): a message that expired meanwhile is dropped from the call
        and acknowledged as expired, the others carry the time that remains now."""
        now = self.clock()
        kept = []
        for send in sends:
            decision = state.decided[send.index]
            if decision.decided_at is None or now - decision.decided_at < RECOUNT_AFTER_SECONDS:
                kept.append(send)
                continue
            record = state.records[send.index]
            again = relay_message(record, self.config, now)
            if again.kind is DecisionKind.EXPIRED:
                self._log(
                    "INFO",
                    "expired while waiting for its call; not delivered",
                    record,
                    state.request_id,
                    outcome=LoggedOutcome.EXPIRED,
                    **_facts(again),
                )
                del state.decided[send.index]
                state.expired += 1
                continue
            if again.kind is decision.kind and again.request is not None:
                # The same send, its body already stored: only the time left changed.
                again.body_copy, again.upload = decision.body_copy, decision.upload
                state.decided[send.index] = again
                send.request = again.request
            kept.append(send)
        return kept

    def _dead_letter_last_tries(
        self, last_tries: list[tuple[int, SendFailure]], state: Invocation
    ) -> int:
        """Send the records whose send failed on their last receive to their dead-letter
        queues with the failure as the reason, rather than leave them to the redrive policy,
        which moves them without one. Returns the number of calls made."""
        now = self.clock()
        refused: dict[int, Decision] = {}
        for index, failure in last_tries:
            record = state.records[index]
            refused[index] = refuse(
                record,
                self.config,
                _LAST_RECEIVE_KINDS[failure.kind],
                f"the send to {state.decided[index].queue} failed on the message's last receive "
                f"(ApproximateReceiveCount {record['attributes'].get('ApproximateReceiveCount')}"
                f" of the queue's maxReceiveCount): {failure}",
                now,
            )
        made = 0
        pending = []
        for index, decision in refused.items():
            if decision.request is None or decision.queue is None:
                state.fail(index)
                continue
            state.decided[index] = decision
            pending.append(PendingSend(index, decision.queue, decision.request))
        for call in batch_calls(pending):
            if state.remaining_seconds() < WORST_CASE_CALL_SECONDS:
                for send in call.sends:
                    state.fail(send.index)
                continue
            made += 1
            result = self._call(call)
            for position, send in enumerate(call.sends):
                entry, record = str(position), state.records[send.index]
                sent_id = result.sent.get(entry)
                if sent_id is None:
                    failure = result.failed.get(entry) or SendFailure(None, "no result")
                    self._send_failed(record, state.request_id, refused[send.index], failure)
                    state.fail(send.index)
                else:
                    self._sent(
                        record, state.request_id, refused[send.index], sent_id, state.forwarded
                    )
        return made

    def _call(self, call: BatchCall) -> BatchResult:
        """One ``SendMessageBatch``; a call that failed as a whole fails each of its entries."""
        try:
            return self.send_batch(call.queue.region, call.queue.url, call.entries())
        except Exception as error:
            # Whatever SQS or the network answered, the messages stay in their queue.
            failure = SendFailure.of(error)
            return BatchResult({}, {str(n): failure for n in range(len(call.sends))})

    def _sent(
        self,
        record: Mapping[str, Any],
        request_id: str | None,
        decision: Decision,
        sent_id: str,
        forwarded: dict[str, str],
    ) -> None:
        """Account for a record SQS accepted: forwarded (noted for the batch line, with a
        warning if the receiver will not read it as intended) or dead-lettered (logged)."""
        if decision.unreachable_headers:
            self._log(
                "WARNING",
                "forwarded with address headers the receiver cannot resolve back: no queue of "
                "its account leads to their queue; give the topology a route for the way back",
                record,
                request_id,
                outcome=LoggedOutcome.UNREACHABLE_ADDRESS,
                unreachable_headers=list(decision.unreachable_headers),
                **_facts(decision),
            )
        for outcome, reason in decision.warnings:
            self._log(
                "WARNING",
                "forwarded, with a caveat",
                record,
                request_id,
                outcome=outcome,
                reason=reason,
                wire_form=decision.wire_form,
            )
        if decision.kind is DecisionKind.FORWARDED_UNREADABLE:
            self._log(
                "WARNING",
                "unreadable; forwarded unchanged to the error queue",
                record,
                request_id,
                outcome=LoggedOutcome.FORWARDED_UNREADABLE,
                destination_queue=str(decision.queue),
                sent_message_id=sent_id,
                **_facts(decision),
            )
        if decision.forwarded:
            forwarded[record["messageId"]] = sent_id
            if decision.converted_to is not None:
                self._tally.note(FORM_CONVERTED)
        else:
            self._log(
                "ERROR",
                "refused; sent to the dead-letter queue",
                record,
                request_id,
                outcome=LoggedOutcome.DEAD_LETTERED,
                destination_queue=str(decision.queue),
                sent_message_id=sent_id,
                **_facts(decision),
            )

    def _send_failed(
        self,
        record: Mapping[str, Any],
        request_id: str | None,
        decision: Decision,
        failure: SendFailure,
    ) -> None:
        self._log(
            "WARNING",
            ("forward failed" if decision.forwarded else "dead-letter send failed")
            + ": "
            + {
                "destination_missing": "the queue does not exist",
                "key_refused": "the queue's KMS key refused it",
                "send_failed": "SQS did not take it",
            }[failure.kind]
            + "; reported failed, so SQS retries it unless this was its last receive",
            record,
            request_id,
            outcome=_FAILED_SEND_OUTCOMES[failure.kind],
            destination_queue=str(decision.queue),
            error=str(failure),
            error_code=failure.code,
            **_facts(decision),
        )

    def _not_attempted(self, record: Mapping[str, Any], request_id: str | None) -> None:
        self._log(
            "INFO",
            "not attempted: an earlier message of its FIFO group failed in this batch",
            record,
            request_id,
            outcome=LoggedOutcome.NOT_ATTEMPTED,
        )

    def _store_body(
        self, record: Mapping[str, Any], request_id: str | None, decision: Decision
    ) -> Decision | None:
        """Copy the record's S3 body into the destination account's bucket, or put a body
        that no longer fits inline: the decision to send on success, the dead-letter decision
        if the body to copy is gone, ``None`` (reported failed, retried by SQS) for any other
        failure."""
        route = self.config.routes[record["eventSourceARN"]]
        if self.bodies is None or route.body_bucket is None:
            raise ValueError("bodies: a route stores bodies but the relay has no body store")
        upload = decision.upload
        try:
            if upload is not None:
                self.bodies.put(upload)
                self._tally.note(BODY_UPLOADED)
            elif decision.body_copy is not None:
                self.bodies.copy(
                    *decision.body_copy,
                    route.body_bucket,
                    route.destination.account,
                    route.destination.region,
                )
                self._tally.note(BODY_COPIED)
        except BodyMissingError as error:
            return refuse(record, self.config, DecisionKind.BODY_MISSING, str(error), self.clock())
        except Exception as error:
            self._log(
                "WARNING",
                ("body upload" if upload is not None else "body copy")
                + " failed; reported failed, so SQS retries it",
                record,
                request_id,
                outcome=LoggedOutcome.BODY_UPLOAD_FAILED
                if upload is not None
                else LoggedOutcome.BODY_COPY_FAILED,
                body_key=upload.key
                if upload is not None
                else decision.body_copy[0]
                if decision.body_copy is not None
                else None,
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
        self._tally.count(fields)
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


def _facts(decision: Decision) -> dict[str, object]:
    """What a log line about a decided message says of the decision."""
    return {
        "kind": decision.kind,
        "reason": decision.reason or None,
        "wire_form": decision.wire_form,
        "rewritten_headers": list(decision.rewritten_headers) or None,
    }


def _last_receive(record: Mapping[str, Any], count: int, config: RelayConfig) -> bool:
    """Whether this (its ``count``-th) is the record's last receive before its queue's
    redrive policy moves it (known when its route names the queue's ``maxReceiveCount``)."""
    route = config.routes.get(record.get("eventSourceARN", ""))
    limit = route.max_receive_count if route is not None else None
    return limit is not None and count >= limit
