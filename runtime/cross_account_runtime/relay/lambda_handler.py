"""The relay's Lambda entry point: ``cross_account_runtime.relay.lambda_handler.handler``.

Thin on purpose, as Powertools for AWS Lambda's ``process_partial_response`` is over its batch
processor: it builds the :class:`~cross_account_runtime.relay.processor.Relay` from its
configuration file and the environment (:mod:`cross_account_runtime.relay.config`) on a
container's first invocation, keeps it, with its SQS clients, for the container's life, and
hands it each event.
The file is read and checked then, once: a warm invocation reads nothing. What is decided, sent and
logged lives in :mod:`~cross_account_runtime.relay.core`,
:mod:`~cross_account_runtime.relay.sending` and :mod:`~cross_account_runtime.relay.processor`,
which tests drive directly.

Nothing heavy is imported with this module: ``boto3`` loads when the first client is created.
"""

from __future__ import annotations

import functools
import os

from cross_account_runtime.common.configuration import ConfigurationError
from cross_account_runtime.common.json_log import default_logger
from cross_account_runtime.relay.config_format import DEFAULT_SERVICE_NAME
from cross_account_runtime.relay.invocation import failed_batch
from cross_account_runtime.relay.outcomes import LoggedOutcome
from cross_account_runtime.relay.processor import Relay

# A local flag rather than ``typing.TYPE_CHECKING``: importing ``typing`` costs more than this
# whole module; mypy and ruff treat the name the same way.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from cross_account_runtime.relay.invocation import BatchResponse


@functools.cache
def _default_relay() -> Relay:
    """The relay configured from the file ``os.environ`` names, built on a container's first
    invocation."""
    return Relay.from_environment(os.environ)


def handler(event: Mapping[str, Any], context: Any) -> BatchResponse:
    """The Lambda entry point.

    While the configuration is unusable every record is reported failed, with the error and
    its fix logged: the messages stay in their queues (and reach the dead-letter queues after
    ``maxReceiveCount`` receives) instead of being forwarded anywhere or dropped.
    """
    try:
        relay = _default_relay()
    except ConfigurationError as error:
        default_logger(DEFAULT_SERVICE_NAME).error(
            "configuration error; every message is reported failed",
            outcome=LoggedOutcome.MISCONFIGURED,
            reason=str(error),
            function_request_id=getattr(context, "aws_request_id", None),
        )
        return failed_batch(event)
    return relay(event, context)
