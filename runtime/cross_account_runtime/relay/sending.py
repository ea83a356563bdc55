"""``SendMessage`` for the relay: one SQS client per destination region, kept for the container.

A relay forwards to queues in other accounts but, as a rule, in its own region; a route may
still name another region, so clients are kept by region. Each is created on first use with
the shared client settings (:mod:`cross_account_runtime.common.aws_clients`: short timeouts,
standard retries), so a cold container pays for boto3 only when its first message is sent.
"""

from __future__ import annotations

from cross_account_runtime.common.aws_clients import create_client

# A local flag rather than ``typing.TYPE_CHECKING``: importing ``typing`` costs more than this
# whole module; mypy and ruff treat the name the same way.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    Send = Callable[[str, dict[str, Any]], str]
    """``(region, SendMessage parameters) -> MessageId``; raises when SQS did not accept it."""


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

    def send(self, region: str, request: dict[str, Any]) -> str:
        """``SendMessage`` in ``region``; returns the new message's id."""
        message_id: str = self.client(region).send_message(**request)["MessageId"]
        return message_id


def create_sqs_client(region: str) -> Any:
    """A boto3 SQS client for ``region`` with the shared settings; the credentials and any
    endpoint override come from the environment as usual."""
    return create_client("sqs", region)
