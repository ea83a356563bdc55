"""``SendMessageBatch`` for the relay: one SQS client per destination region, kept for the
container.

A relay forwards to queues in other accounts but, as a rule, in its own region; a route may
still name another region, so clients are kept by region. Each is created on first use with
the shared client settings (:mod:`cross_account_runtime.common.aws_clients`: short timeouts,
standard retries of a throttled or failed call), so a cold container pays for boto3 only when
its first message is sent. Which messages share a call is
:mod:`cross_account_runtime.relay.send_batches`' concern.
"""

from __future__ import annotations

from cross_account_runtime.common.aws_clients import create_client

# A local flag rather than ``typing.TYPE_CHECKING``: importing ``typing`` costs more than this
# whole module; mypy and ruff treat the name the same way.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any, Final

    SendBatch = Callable[[str, str, Sequence[dict[str, Any]]], "BatchResult"]
    """``(region, queue URL, entries) -> BatchResult``: one ``SendMessageBatch`` call; raises
    when the call as a whole failed (none of its entries was sent)."""


DESTINATION_MISSING_CODES: Final = frozenset(
    {"AWS.SimpleQueueService.NonExistentQueue", "QueueDoesNotExist"}
)
"""What SQS answers for a queue that does not exist: the query protocol's code, which botocore
reports for SQS (``awsQueryCompatible``), and the JSON protocol's."""
KEY_REFUSED_PREFIXES: Final = ("KMS.", "Kms")
"""SQS's codes for a KMS key that refuses (disabled, pending deletion, access denied, not
found, throttled...): ``KMS.DisabledException`` and the like in the query protocol,
``KmsDisabled`` and the like in the JSON protocol."""


class SendFailure:
    """Why SQS did not take a message: its error ``code`` (``None`` for a failure without one,
    a timeout), the ``message`` and whether it was the sender's fault.

    ``kind`` sorts it for the logs and for a dead-lettered message's reason:
    ``destination_missing`` (the queue is gone), ``key_refused`` (the queue's KMS key refuses)
    or ``send_failed`` (anything else: throttling, a timeout, a server error).
    """

    __slots__ = ("code", "message", "sender_fault")

    def __init__(self, code: str | None, message: str, *, sender_fault: bool = False) -> None:
        self.code = code
        self.message = message
        self.sender_fault = sender_fault

    @classmethod
    def of(cls, error: Exception) -> SendFailure:
        """The failure of a call that raised ``error`` (botocore's ``ClientError`` carries
        SQS's code; a network error has none)."""
        response = getattr(error, "response", None)
        code = response.get("Error", {}).get("Code") if isinstance(response, dict) else None
        return cls(code if isinstance(code, str) else None, f"{type(error).__name__}: {error}")

    @property
    def kind(self) -> str:
        if self.code in DESTINATION_MISSING_CODES:
            return "destination_missing"
        if self.code is not None and self.code.startswith(KEY_REFUSED_PREFIXES):
            return "key_refused"
        return "send_failed"

    def __str__(self) -> str:
        fault = " (sender fault)" if self.sender_fault else ""
        prefix = "" if self.code is None or self.code in self.message else f"{self.code}: "
        return f"{prefix}{self.message}{fault}"


class BatchResult:
    """What SQS answered a ``SendMessageBatch``: ``sent`` maps each accepted entry's ``Id`` to
    its new message id, ``failed`` each refused entry's ``Id`` to why."""

    __slots__ = ("failed", "sent")

    def __init__(self, sent: dict[str, str], failed: dict[str, SendFailure]) -> None:
        self.sent = sent
        self.failed = failed


class SqsClients:
    """One SQS client per region, created on first use and kept for the container's life.

    ``create`` makes a client for a region (default: :func:`create_sqs_client`); tests and
    benchmarks pass their own.
    """

    def __init__(self, create: Callable[[str], Any] | None = None) -> None:
        self._create = create if create is not None else create_sqs_client
        self._clients: dict[str, Any] = {}

    def client(self, region: str) -> Any:
        """The client for ``region``."""
        client = self._clients.get(region)
        if client is None:
            client = self._clients[region] = self._create(region)
        return client

    def send_batch(
        self, region: str, queue_url: str, entries: Sequence[dict[str, Any]]
    ) -> BatchResult:
        """``SendMessageBatch`` of ``entries`` (each with its ``Id``) to ``queue_url``."""
        response = self.client(region).send_message_batch(QueueUrl=queue_url, Entries=entries)
        return BatchResult(
            {entry["Id"]: entry["MessageId"] for entry in response.get("Successful", ())},
            {
                entry["Id"]: SendFailure(
                    entry.get("Code"),
                    entry.get("Message", ""),
                    sender_fault=bool(entry.get("SenderFault")),
                )
                for entry in response.get("Failed", ())
            },
        )


def create_sqs_client(region: str) -> Any:
    """A boto3 SQS client for ``region`` with the shared settings; the credentials and any
    endpoint override come from the environment as usual."""
    return create_client("sqs", region)
