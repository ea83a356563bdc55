"""``SendMessageBatch`` for the relay: one SQS client per destination region, kept for the
container.

A relay forwards to queues in other accounts but, as a rule, in its own region; a route may
still name another region, so clients are kept by region. Each is created on first use with
the shared client settings (:mod:`cross_account_runtime.common.aws_clients`: short timeouts,
standard retries of a throttled or failed call), so a cold container pays for boto3 only when
its first message is sent. Which messages share a call is
:mod:`cross_account_runtime.relay.batching`'s concern.
"""

from __future__ import annotations

from cross_account_runtime.common.aws_clients import create_client

# A local flag rather than ``typing.TYPE_CHECKING``: importing ``typing`` costs more than this
# whole module; mypy and ruff treat the name the same way.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

    SendBatch = Callable[[str, str, Sequence[dict[str, Any]]], "BatchResult"]
    """``(region, queue URL, entries) -> BatchResult``: one ``SendMessageBatch`` call; raises
    when the call as a whole failed (none of its entries was sent)."""


class BatchResult:
    """What SQS answered a ``SendMessageBatch``: ``sent`` maps each accepted entry's ``Id`` to
    its new message id, ``failed`` each refused entry's ``Id`` to SQS's code and message."""

    __slots__ = ("failed", "sent")

    def __init__(self, sent: dict[str, str], failed: dict[str, str]) -> None:
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
                entry["Id"]: f"{entry.get('Code')}: {entry.get('Message', '')}"
                + (" (sender fault)" if entry.get("SenderFault") else "")
                for entry in response.get("Failed", ())
            },
        )


def create_sqs_client(region: str) -> Any:
    """A boto3 SQS client for ``region`` with the shared settings; the credentials and any
    endpoint override come from the environment as usual."""
    return create_client("sqs", region)
