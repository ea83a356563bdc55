"""How long a relay function may run, how long its source queues hide a received message, and
how many receives they allow: all three follow from the batch size.

A relay sends a batch of ``B`` messages in ``ceil(B / 10)`` ``SendMessageBatch`` calls (ten
entries a call, :data:`~cross_account_runtime.relay.send_batches.MAX_BATCH_ENTRIES`), made one
after the other. A call gives up within
:data:`~cross_account_runtime.common.aws_clients.WORST_CASE_CALL_SECONDS` (35 s: four
attempts of 2 s to connect and 5 s to read, and the backoff between them), and the relay starts
a call only while that much of the function's time is left; a call it does not start reports
its messages failed ("not attempted"), so SQS receives them again. So:

* **function timeout** ``T``: enough for every call of the batch at the worst case,
  ``ceil(B / 10) * 35 s``, where Lambda's 900 s allow, and never below the minute a batch of
  ten has always had (:data:`~constructs_lib.defaults.RELAY_MIN_TIMEOUT_SECONDS`);
* **visibility timeout** of the source queues: ``6 * T``, AWS's advice for SQS event sources
  (:data:`~constructs_lib.defaults.VISIBILITY_TIMEOUTS_PER_FUNCTION_TIMEOUT`); at most
  6 * 900 s = 5,400 s, within SQS's 12 hours;
* **maxReceiveCount** of the source queues: the receives a message has for failures
  (:data:`~constructs_lib.defaults.RELAY_RECEIVES_FOR_FAILURES`) plus the invocations beyond
  the first that the batch needs, at the worst case, for every message of it to be tried. An
  invocation makes at least ``floor(T / 35 s)`` calls, so a batch needs
  ``ceil(calls / floor(T / 35 s))`` invocations; the runtime tries the highest receive counts
  first, so a message waits at most that many receives minus one before it is tried, and still
  has all its receives for failures.

A dead-letter send (a refused message) may take one call more than the batch's forwards; its
messages then wait one receive, which the receives for failures absorb.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from aws_cdk import Duration

from constructs_lib._private.keywords import checked_keywords
from constructs_lib.defaults import (
    LAMBDA_MAX_TIMEOUT_SECONDS,
    RELAY_BATCH_SIZE_RANGE,
    RELAY_MIN_TIMEOUT_SECONDS,
    RELAY_RECEIVES_FOR_FAILURES,
    VISIBILITY_TIMEOUTS_PER_FUNCTION_TIMEOUT,
)
from constructs_lib.validation import require_range
from cross_account_runtime.common.aws_clients import WORST_CASE_CALL_SECONDS
from cross_account_runtime.relay.send_batches import MAX_BATCH_ENTRIES


@dataclass(frozen=True)
class RelayTiming:
    """The timing of a relay reading batches of ``batch_size`` (see the module's docstring);
    build it with :meth:`for_batch`."""

    batch_size: int
    calls: int
    """``SendMessageBatch`` calls a full batch needs."""
    function_timeout: Duration
    calls_per_invocation: int
    """Calls an invocation makes at the least, each taking its worst case."""
    invocations: int
    """Invocations a full batch needs, at the worst case, for every message to be tried."""
    visibility_timeout: Duration
    """Of each source queue (shadow or ingress)."""
    max_receive_count: int
    """Of each source queue's redrive policy."""

    @checked_keywords
    @classmethod
    def for_batch(cls, batch_size: int) -> RelayTiming:
        """The timing of a relay reading up to ``batch_size`` messages per invocation
        (1-10,000, what Lambda's SQS event source takes)."""
        require_range("batch_size", batch_size, *RELAY_BATCH_SIZE_RANGE)
        calls = math.ceil(batch_size / MAX_BATCH_ENTRIES)
        timeout = min(
            LAMBDA_MAX_TIMEOUT_SECONDS,
            max(RELAY_MIN_TIMEOUT_SECONDS, calls * WORST_CASE_CALL_SECONDS),
        )
        per_invocation = timeout // WORST_CASE_CALL_SECONDS
        invocations = math.ceil(calls / per_invocation)
        return cls(
            batch_size=batch_size,
            calls=calls,
            function_timeout=Duration.seconds(timeout),
            calls_per_invocation=per_invocation,
            invocations=invocations,
            visibility_timeout=Duration.seconds(VISIBILITY_TIMEOUTS_PER_FUNCTION_TIMEOUT * timeout),
            max_receive_count=RELAY_RECEIVES_FOR_FAILURES + invocations - 1,
        )
