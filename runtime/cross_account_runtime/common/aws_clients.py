"""boto3 clients configured alike for every runtime Lambda function, created on first use.

Both functions answer to a deadline: the relay must finish its batch within its function
timeout, and the SNS endpoint must answer within SNS's 15 s so that SNS retries rather than
counting a silent failure. So each attempt gives up quickly (2 s to connect, 5 s to read), and
botocore's standard retry mode retries throttling and transient errors with backoff, at most 3
times: botocore's ``max_attempts`` counts the retries after the first attempt, so a call makes
at most 4 attempts (its ``total_max_attempts``).

**The retry mode, chosen knowingly.** ``standard`` (botocore 1.4x, ``botocore/retries/``)
retries throttling codes, 5xx answers, connection errors and timeouts, waiting
``rand(0, 1) * min(base * 2 ** i, 20)`` seconds before retry ``i`` (base 1 s for throttling,
50 ms otherwise), and spends a retry quota kept per client, so per container: 500 units, a
retry costs 5 after throttling and 14 after any other error, a call that succeeds without retry
gives 1 back and one that succeeds after retries gives back what they cost. Under a sustained
failure the quota is empty after about 100 throttled retries (33 calls retried three times) or
35 other retries (about 12 calls); from then on every call makes one attempt until successes
refill it. That is the behaviour the relay wants, and why the mode stays ``standard``:

* the relay's own retry is the message's next receive, so a call that fails fast costs no
  message anything but a receive, while a call that retries costs the function's time: with
  ``legacy`` (no quota) every failing call would take up to its full worst case, fewer calls
  would fit the invocation, and more messages would return "not attempted", which is what
  reaches a dead-letter queue untried; with the quota empty, every message of a large batch is
  at least tried once, and on its last receive dead-lettered with the failure as its reason;
* ``adaptive`` adds a client-side rate limiter that sleeps before sends for as long as it
  judges, so no call would have a worst case the relay could budget.

**What a throttled call costs in receives.** While the quota lasts, none unless all four
attempts are throttled (the retries wait up to 1, 2 and 4 s); then, and at once when the quota
is spent, each message of the call spends one receive: it comes back after the source queue's
visibility timeout. A message survives ``maxReceiveCount - 1`` such receives; on the last the
relay sends it to its dead-letter queue itself, with the failure as the reason
(:mod:`cross_account_runtime.relay.processor`).

``boto3`` is imported inside :func:`create_client`, never when this module is imported: it
costs more than the rest of a cold start, and a container pays for it only with its first call.
"""

from __future__ import annotations

# A local flag rather than ``typing.TYPE_CHECKING``: importing ``typing`` costs more than this
# whole module; mypy and ruff treat the name the same way.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Final

CONNECT_TIMEOUT_SECONDS: Final = 2
READ_TIMEOUT_SECONDS: Final = 5
MAX_RETRIES: Final = 3
"""botocore's ``max_attempts``: retries after the first attempt."""

WORST_CASE_CALL_SECONDS: Final = (CONNECT_TIMEOUT_SECONDS + READ_TIMEOUT_SECONDS) * (
    MAX_RETRIES + 1
) + sum(2**attempt for attempt in range(MAX_RETRIES))
"""The longest one call can take before botocore gives up: every attempt timing out, plus the
standard mode's backoff of at most ``2 ** i`` seconds before retry ``i`` (throttling's base of
1 s; other errors back off less). 35 s: a caller with a deadline starts a call only while this
much time remains."""

RETRY_MODE: Final = "standard"
"""botocore's standard mode, with its per-client retry quota (module docstring: under a
sustained failure, calls fail fast after the quota is spent, so a large batch is still tried
message by message instead of timing out call by call)."""

CLIENT_CONFIG: Final = {
    "connect_timeout": CONNECT_TIMEOUT_SECONDS,
    "read_timeout": READ_TIMEOUT_SECONDS,
    "retries": {"mode": RETRY_MODE, "max_attempts": MAX_RETRIES},
}
"""The keyword arguments of ``botocore.config.Config`` for every client."""


def create_client(service: str, region: str | None = None) -> Any:
    """A boto3 client for ``service`` with :data:`CLIENT_CONFIG`; ``region`` ``None`` takes
    the region from the environment. Credentials and any endpoint override come from the
    environment as usual."""
    import boto3  # noqa: PLC0415 (lazy, for cold starts)
    from botocore.config import Config  # noqa: PLC0415 (lazy, for cold starts)

    return boto3.client(service, region_name=region, config=Config(**CLIENT_CONFIG))
