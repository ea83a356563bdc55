"""The HTTPS fetch behind the default certificate fetcher and subscription confirmer, against a
local TLS server whose certificate the test CA issued for 127.0.0.1."""

from __future__ import annotations

import contextlib
import http.server
import ssl
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from cross_account_runtime.sns_endpoint.confirmation import confirm_subscription_over_https
from cross_account_runtime.sns_endpoint.signature import (
    MAX_CERTIFICATE_BYTES,
    FetchError,
    download_certificate,
    https_get,
)
from tests.runtime.sns_endpoint.conftest import Pki, issue_certificate, pem

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class LocalTlsServer:
    """Where the server listens, what it was asked for, and a client context trusting it."""

    base_url: str
    client_context: ssl.SSLContext
    requested: list[str] = field(default_factory=list)


@pytest.fixture(scope="module")
def tls_server(pki: Pki, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalTlsServer]:
    server_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    server_certificate = issue_certificate(
        server_key, pki.ca_key, common_name="127.0.0.1", san_ip="127.0.0.1"
    )
    directory = tmp_path_factory.mktemp("tls")
    (directory / "server.pem").write_bytes(pem(server_certificate))
    (directory / "server.key").write_bytes(
        server_key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    requested: list[str] = []
    sns_pem = pem(pki.sns_certificate)
    routes: dict[str, tuple[int, bytes, dict[str, str]]] = {
        "/cert.pem": (200, sns_pem, {}),
        "/exactly-the-limit.pem": (200, b"A" * MAX_CERTIFICATE_BYTES, {}),
        "/too-big.pem": (200, b"A" * (MAX_CERTIFICATE_BYTES + 1), {}),
        "/missing.pem": (404, b"Not Found", {}),
        "/busy.pem": (503, b"Service Unavailable", {}),
        "/throttled.pem": (429, b"Slow Down", {}),
        "/moved.pem": (302, b"", {"Location": "/redirect-target.pem"}),
        "/redirect-target.pem": (200, sns_pem, {}),
    }

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            requested.append(self.path)
            if self.path == "/slow.pem":
                time.sleep(2)
            status, body, headers = routes.get(self.path, (200, sns_pem, {}))
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            """Keep the test output clean."""

        def handle(self) -> None:
            # The timeout test's client gives up first; nobody is left to answer.
            with contextlib.suppress(ConnectionError, ssl.SSLError):
                super().handle()

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    server_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_context.load_cert_chain(directory / "server.pem", directory / "server.key")
    server.socket = server_context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    client_context = ssl.create_default_context(cadata=pem(pki.ca_certificate).decode())
    try:
        yield LocalTlsServer(
            f"https://127.0.0.1:{server.server_address[1]}", client_context, requested
        )
    finally:
        server.shutdown()
        server.server_close()


def _get(server: LocalTlsServer, path: str, *, timeout: float = 5.0) -> bytes:
    return https_get(
        server.base_url + path,
        timeout=timeout,
        max_bytes=MAX_CERTIFICATE_BYTES,
        ssl_context=server.client_context,
    )


def test_a_certificate_is_fetched_over_verified_tls(tls_server: LocalTlsServer, pki: Pki) -> None:
    assert _get(tls_server, "/cert.pem") == pem(pki.sns_certificate)


def test_an_answer_of_exactly_the_limit_is_accepted(tls_server: LocalTlsServer) -> None:
    assert len(_get(tls_server, "/exactly-the-limit.pem")) == MAX_CERTIFICATE_BYTES


def test_an_answer_over_10_kb_is_refused_for_good(tls_server: LocalTlsServer) -> None:
    with pytest.raises(FetchError, match="answer larger than 10240 bytes") as raised:
        _get(tls_server, "/too-big.pem")
    assert raised.value.retryable is False


@pytest.mark.parametrize(
    ("path", "retryable"),
    [("/missing.pem", False), ("/busy.pem", True), ("/throttled.pem", True)],
)
def test_an_http_error_is_retryable_only_when_the_server_may_recover(
    tls_server: LocalTlsServer, path: str, retryable: bool
) -> None:
    with pytest.raises(FetchError, match="HTTP status") as raised:
        _get(tls_server, path)
    assert raised.value.retryable is retryable


def test_a_redirect_is_not_followed(tls_server: LocalTlsServer) -> None:
    with pytest.raises(FetchError, match="HTTP status 302") as raised:
        _get(tls_server, "/moved.pem")
    assert raised.value.retryable is False
    assert "/redirect-target.pem" not in tls_server.requested


def test_a_server_that_does_not_answer_in_time_is_a_retryable_failure(
    tls_server: LocalTlsServer,
) -> None:
    started = time.monotonic()
    with pytest.raises(FetchError, match="connection failed") as raised:
        _get(tls_server, "/slow.pem", timeout=0.3)
    assert raised.value.retryable is True
    assert time.monotonic() - started < 1.5


def test_the_default_fetcher_trusts_only_the_system_store(tls_server: LocalTlsServer) -> None:
    """The test CA is not a public CA, so TLS verification must fail, and retryably: to SNS's
    real host it would mean a network problem, not a forgery."""
    with pytest.raises(FetchError, match="CERTIFICATE_VERIFY_FAILED") as raised:
        download_certificate(tls_server.base_url + "/cert.pem")
    assert raised.value.retryable is True


def test_the_process_wide_opt_out_of_verification_does_not_apply(
    tls_server: LocalTlsServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PEP 476's global switch (what PYTHONHTTPSVERIFY=0 sets) leaves these fetches verified."""
    monkeypatch.setattr(ssl, "_create_default_https_context", ssl._create_unverified_context)
    with pytest.raises(FetchError, match="CERTIFICATE_VERIFY_FAILED"):
        download_certificate(tls_server.base_url + "/cert.pem")


def test_the_default_confirmer_gets_the_url_over_verified_tls(tls_server: LocalTlsServer) -> None:
    with pytest.raises(FetchError, match="CERTIFICATE_VERIFY_FAILED"):
        confirm_subscription_over_https(tls_server.base_url + "/?Action=ConfirmSubscription")


def test_plain_http_is_refused_without_connecting() -> None:
    with pytest.raises(FetchError, match="only https URLs are fetched") as raised:
        https_get("http://127.0.0.1:9/cert.pem", timeout=1, max_bytes=10)
    assert raised.value.retryable is False
