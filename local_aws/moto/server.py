"""Start and stop moto in server mode on 127.0.0.1: a real HTTP endpoint boto3 and the CDK CLI
talk to, so nothing here can reach real AWS."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType

HOST = "127.0.0.1"
START_TIMEOUT_SECONDS = 60.0


class MotoServerError(RuntimeError):
    """moto did not start; the message holds the end of its log."""


def free_port(host: str = HOST) -> int:
    """A port nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


class MotoServer:
    """moto's server as a child process; use it as a context manager so it always stops."""

    def __init__(self, log_path: Path, port: int | None = None) -> None:
        self.port = port or free_port()
        self.log_path = log_path
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def endpoint_url(self) -> str:
        """The URL to give boto3 (``endpoint_url``) and the CLI (``AWS_ENDPOINT_URL``)."""
        return f"http://{HOST}:{self.port}"

    def start(self) -> MotoServer:
        """Start the server and wait until it answers."""
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        log = self.log_path.open("wb")
        env = {**os.environ, "MOTO_ALLOW_NONEXISTENT_REGION": "false"}
        self._process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "local_aws.moto.main",
                "-H",
                HOST,
                "-p",
                str(self.port),
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
        )
        log.close()
        deadline = time.monotonic() + START_TIMEOUT_SECONDS
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise MotoServerError(
                    f"moto exited with {self._process.returncode}: {self._log_tail()}"
                )
            try:
                with urllib.request.urlopen(f"{self.endpoint_url}/moto-api/", timeout=2):
                    return self
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(0.2)
        self.stop()
        raise MotoServerError(
            f"moto did not answer within {START_TIMEOUT_SECONDS:.0f} s: {self._log_tail()}"
        )

    def stop(self) -> None:
        """Stop the server (terminate, then kill if it lingers)."""
        if self._process is None:
            return
        if self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        self._process = None

    def _log_tail(self, lines: int = 20) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def __enter__(self) -> MotoServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()
