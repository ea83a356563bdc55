"""Routes the local AWS adds to moto's own API (``/moto-api/local-aws/...``), and the one
shape its ageing routes share: ``POST <path>?seconds=N`` moves a clock of the local AWS N
seconds on and answers how much that changed, a bad ``seconds`` a 400 naming the parameter.
"""

from __future__ import annotations

import json
import math
import urllib.request
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, urlparse

RouteResponse = tuple[int, dict[str, str], str]
"""A handler's answer in moto's ``(status, headers, body)`` form."""
Route = Callable[[Any, str, Any], RouteResponse]


def add_route(path: str, handler: Route) -> None:
    """Add ``handler`` at ``path`` to moto's own API, before the server starts."""
    from moto.moto_api._internal import urls  # noqa: PLC0415 (only the server process needs it)

    paths: dict[str, Any] = urls.url_paths
    paths["{0}" + path] = handler


def ageing_route(age: Callable[[float], int], answer: str, example_seconds: int) -> Route:
    """The handler of an ageing route: ``age(seconds)``'s count, answered as ``{answer: n}``."""

    def respond(_request: Any, full_url: str, _headers: Any) -> RouteResponse:
        values = parse_qs(urlparse(full_url).query).get("seconds", [])
        try:
            seconds = float(values[0])
        except (IndexError, ValueError):
            return (
                400,
                {},
                json.dumps(
                    {"error": f"seconds: give a number of seconds, e.g. ?seconds={example_seconds}"}
                ),
            )
        if not math.isfinite(seconds) or seconds < 0:
            return (
                400,
                {},
                json.dumps({"error": f"seconds: must be finite and not negative, got {seconds}"}),
            )
        return 200, {"Content-Type": "application/json"}, json.dumps({answer: age(seconds)})

    return respond


def request_ageing(endpoint_url: str, path: str, seconds: float, answer: str) -> int:
    """Call the ageing route at ``path`` of the local AWS at ``endpoint_url``; its count."""
    request = urllib.request.Request(
        f"{endpoint_url}{path}?seconds={seconds}", method="POST", data=b""
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        count: int = json.loads(response.read())[answer]
    return count
