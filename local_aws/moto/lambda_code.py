"""A deployed function's code, as the local AWS's Lambda poller unpacks it.

Lambda unpacks a function's deployment package into ``/var/task`` (``LAMBDA_TASK_ROOT``), and
a handler may read files shipped beside its modules: the relay reads its configuration file
there. moto keeps each function's package (the object CloudFormation named, or the uploaded
zip) but cannot run it, and its ``GetFunction`` answers a ``Code.Location`` in a bucket that
does not exist. So the local AWS server hands out the package itself:

``GET /moto-api/local-aws/lambda/code?function=<function ARN>`` answers the zip moto holds for
the function (its ``$LATEST`` code), 404 naming the function when there is none. moto has no
such call; the local AWS server registers it (:func:`register`) before it starts serving.
"""

from __future__ import annotations

import json
import urllib.parse
import urllib.request
from typing import Any
from urllib.parse import parse_qs, urlparse

from local_aws.moto.api_routes import add_route

CODE_PATH = "/moto-api/local-aws/lambda/code"
"""The route, relative to the server's root."""


def function_code(function_arn: str) -> bytes | None:
    """The deployment package moto holds for ``function_arn``, or ``None`` when it holds none."""
    # moto loads its services lazily; only the server process needs it.
    from moto.awslambda.exceptions import UnknownFunctionException  # noqa: PLC0415
    from moto.awslambda.models import lambda_backends  # noqa: PLC0415

    parts = function_arn.split(":")
    if len(parts) < 7 or parts[2] != "lambda" or parts[5] != "function":
        return None
    region, account = parts[3], parts[4]
    try:
        function = lambda_backends[account][region].get_function(function_arn)
    except UnknownFunctionException:
        return None
    code: bytes = function.code_bytes
    return code or None


def _code_response(_request: Any, full_url: str, _headers: Any) -> tuple[int, dict[str, str], Any]:
    """The route's handler, in moto's ``(status, headers, body)`` form."""
    values = parse_qs(urlparse(full_url).query).get("function", [])
    if not values:
        error = "function: give the function's ARN, e.g. ?function=arn:aws:lambda:...:function:f"
        return 400, {}, json.dumps({"error": error})
    code = function_code(values[0])
    if code is None:
        error = f"function {values[0]!r}: no such function with a deployment package here"
        return 404, {}, json.dumps({"error": error})
    return 200, {"Content-Type": "application/zip"}, code


def register() -> None:
    """Add the route to moto's own API (the ``/moto-api/`` paths) before the server starts."""
    add_route(CODE_PATH, _code_response)


def download_code(endpoint_url: str, function_arn: str) -> bytes:
    """The deployment package of ``function_arn`` from the local AWS at ``endpoint_url``."""
    query = urllib.parse.urlencode({"function": function_arn})
    with urllib.request.urlopen(f"{endpoint_url}{CODE_PATH}?{query}", timeout=30) as response:
        code: bytes = response.read()
    return code
