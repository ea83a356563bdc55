"""A stand-in for a partner's HTTPS endpoint, on 127.0.0.1, answering SNS as a partner does.

The example's ``PartnerWebhook`` subscription names a partner's URL the local AWS must never
call; the local SNS maps that host to this server instead
(:func:`local_aws.moto.sns_http_deliveries.map_http_host`). Like a real partner it confirms the
subscription by visiting the ``SubscribeURL`` of SNS's ``SubscriptionConfirmation``, and answers
notifications the way a partner's web server does on an ordinary day: mostly 200, now and then
a 5xx (a deploy, an overloaded pod), which SNS retries, and once a 4xx (a payload it rejects),
which SNS does not. The answers are scripted and seeded (:class:`PartnerScript`), so a run, and
its delivery report, come out the same every time. Every request is kept, in the order it came.
"""

from __future__ import annotations

import json
import random
import threading
import urllib.request
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import urlparse

from stacks.topology import Topology

SERVER_ERRORS = (500, 502, 503, 504)
CLIENT_ERROR = 400


def http_hosts(topology: Topology) -> tuple[str, ...]:
    """The hosts of the topology's HTTP(S) subscriptions: the partners a stand-in plays."""
    return tuple(
        sorted(
            {
                urlparse(s.url).hostname or ""
                for t in topology.topics
                for s in t.subscriptions
                if s.protocol in ("http", "https") and s.url
            }
            - {""}
        )
    )


@dataclass(frozen=True)
class PartnerRequest:
    """One request the partner received, and its answer."""

    kind: str
    """``x-amz-sns-message-type``: ``SubscriptionConfirmation`` or ``Notification``."""
    message_id: str
    topic_arn: str
    status: int


class PartnerScript:
    """How the partner answers each notification: the ``client_error_on``-th message (counted
    from 1, in the order first seen) gets one 4xx; any other attempt a 5xx with probability
    ``server_error_rate``, drawn from a generator seeded with ``seed``; 200 otherwise."""

    def __init__(
        self, seed: int, server_error_rate: float = 0.35, client_error_on: int = 2
    ) -> None:
        if not 0 <= server_error_rate < 1:
            raise ValueError(
                f"server_error_rate: a probability below 1 (every attempt failing would never "
                f"end a delivery), got {server_error_rate}"
            )
        if client_error_on < 1:
            raise ValueError(
                f"client_error_on: the message (counted from 1) answered 4xx, got {client_error_on}"
            )
        self._random = random.Random(seed)
        self._server_error_rate = server_error_rate
        self._client_error_on = client_error_on
        self._messages: list[str] = []
        self._lock = threading.Lock()

    def answer(self, message_id: str) -> int:
        with self._lock:
            if message_id not in self._messages:
                self._messages.append(message_id)
                if len(self._messages) == self._client_error_on:
                    return CLIENT_ERROR
            if self._random.random() < self._server_error_rate:
                return self._random.choice(SERVER_ERRORS)
            return 200


class StandInPartner:
    """The partner's web server on 127.0.0.1; a context manager that always stops it."""

    def __init__(self, script: PartnerScript) -> None:
        self.script = script
        self.requests: list[PartnerRequest] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """The loopback URL standing in for the partner's host."""
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def notifications(self) -> list[PartnerRequest]:
        with self._lock:
            return [r for r in self.requests if r.kind == "Notification"]

    def confirmations(self) -> list[PartnerRequest]:
        with self._lock:
            return [r for r in self.requests if r.kind == "SubscriptionConfirmation"]

    def _handle(self, kind: str, body: dict[str, Any]) -> int:
        if kind == "SubscriptionConfirmation":
            # What a partner's endpoint does once it trusts the topic: visit the SubscribeURL.
            with urllib.request.urlopen(str(body["SubscribeURL"]), timeout=10):
                status = 200
        elif kind == "Notification":
            status = self.script.answer(str(body.get("MessageId", "")))
        else:
            status = 200
        with self._lock:
            self.requests.append(
                PartnerRequest(
                    kind, str(body.get("MessageId", "")), str(body.get("TopicArn", "")), status
                )
            )
        return status

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        partner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except ValueError:
                    body = {}
                status = partner._handle(self.headers.get("x-amz-sns-message-type", ""), body)
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *_: Any) -> None:
                """Quiet: the requests are kept, not printed."""

        return Handler

    def __enter__(self) -> StandInPartner:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._server.shutdown()
        self._server.server_close()
