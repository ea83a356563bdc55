"""boto3 clients configured alike for every runtime Lambda function, created on first use.

Both functions answer to a deadline: the relay must finish a batch of ten well within its
function timeout, and the SNS endpoint must answer within SNS's 15 s so that SNS retries rather
than counting a silent failure. So each attempt gives up quickly (2 s to connect, 5 s to read),
and botocore's standard retry mode retries throttling and transient errors with backoff, at most
3 times: botocore's ``max_attempts`` counts the retries after the first attempt, so a call makes
at most 4 attempts (its ``total_max_attempts``).

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

CLIENT_CONFIG: Final = {
    "connect_timeout": CONNECT_TIMEOUT_SECONDS,
    "read_timeout": READ_TIMEOUT_SECONDS,
    "retries": {"mode": "standard", "max_attempts": MAX_RETRIES},
}
"""The keyword arguments of ``botocore.config.Config`` for every client."""


def create_client(service: str, region: str | None = None) -> Any:
    """A boto3 client for ``service`` with :data:`CLIENT_CONFIG`; ``region`` ``None`` takes
    the region from the environment. Credentials and any endpoint override come from the
    environment as usual."""
    import boto3  # noqa: PLC0415 (lazy, for cold starts)
    from botocore.config import Config  # noqa: PLC0415 (lazy, for cold starts)

    return boto3.client(service, region_name=region, config=Config(**CLIENT_CONFIG))
