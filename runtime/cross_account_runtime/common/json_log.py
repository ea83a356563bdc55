"""One JSON object per log line, in the shape Powertools for AWS Lambda writes.

CloudWatch Logs Insights and metric filters read such lines field by field (``level``,
``message``, ``service``, ``timestamp`` and whatever the caller adds), so an operator can count
rejections by reason or find every line about one message id without parsing prose. Lambda
sends a function's standard output to CloudWatch Logs, so the lines go there; nothing else is
needed, and the module imports only ``json``, ``os``, ``sys`` and ``time``.
"""

from __future__ import annotations

import json
import os
import sys
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final, TextIO

ENV_SERVICE_NAME: Final = "POWERTOOLS_SERVICE_NAME"
"""The variable naming the ``service`` of the log lines: the one Powertools for AWS Lambda reads,
so a function keeps one service name whichever library writes its lines."""


class JsonLogger:
    """Writes ``{"level", "message", "service", "timestamp", ...fields}`` lines.

    Fields whose value is ``None`` are left out so that every key present carries information.
    ``stream`` defaults to the standard output current at the time of each write.
    """

    def __init__(self, service: str, *, stream: TextIO | None = None) -> None:
        self.service = service
        self._stream = stream

    def info(self, message: str, **fields: object) -> None:
        """Write an ``INFO`` line."""
        self.log("INFO", message, fields)

    def warning(self, message: str, **fields: object) -> None:
        """Write a ``WARNING`` line."""
        self.log("WARNING", message, fields)

    def error(self, message: str, **fields: object) -> None:
        """Write an ``ERROR`` line."""
        self.log("ERROR", message, fields)

    def log(self, level: str, message: str, fields: dict[str, object]) -> None:
        """Write one line at ``level``; values JSON cannot hold are written with ``str``."""
        now = time.time()
        record: dict[str, object] = {
            "level": level,
            "message": message,
            "service": self.service,
            "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now))
            + f".{int(now % 1 * 1000):03d}Z",
        }
        record.update((key, value) for key, value in fields.items() if value is not None)
        stream = self._stream if self._stream is not None else sys.stdout
        stream.write(json.dumps(record, default=str, separators=(",", ":")) + "\n")
        stream.flush()


def default_logger(default_service: str) -> JsonLogger:
    """A logger to standard output named by ``POWERTOOLS_SERVICE_NAME``, else by
    ``default_service`` (each component passes its own, defined beside its configuration)."""
    return JsonLogger(os.environ.get(ENV_SERVICE_NAME) or default_service)
