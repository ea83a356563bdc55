"""The SNS endpoint's Lambda entry point:
``cross_account_runtime.sns_endpoint.lambda_handler.handler``.

Thin on purpose: it builds the
:class:`~cross_account_runtime.sns_endpoint.receiver.SnsHttpsReceiver` from the environment
(:mod:`cross_account_runtime.sns_endpoint.config`, and the handler named by
``SNS_ENDPOINT_HANDLER``) on a container's first delivery, keeps it, with its certificate cache
and DynamoDB client, for the container's life, and hands it each event. Everything it checks
and answers lives in :mod:`~cross_account_runtime.sns_endpoint.receiver`, which tests drive
directly.

Importing this module loads neither ``cryptography`` nor ``boto3``: they load on first use.
"""

from __future__ import annotations

import functools
import os

from cross_account_runtime.common.configuration import ConfigurationError
from cross_account_runtime.common.json_log import default_logger
from cross_account_runtime.sns_endpoint.config import DEFAULT_SERVICE_NAME
from cross_account_runtime.sns_endpoint.receiver import Answer, AnswerOutcome, SnsHttpsReceiver

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


@functools.cache
def _default_receiver() -> SnsHttpsReceiver:
    """The receiver configured from ``os.environ``, built on the first invocation only."""
    return SnsHttpsReceiver.from_environment(os.environ)


def handler(event: object, context: Any) -> dict[str, object]:
    """The Lambda entry point.

    A configuration error answers 500 to every delivery, so that SNS keeps retrying until the
    configuration is fixed, and is logged with the fix.
    """
    try:
        receiver = _default_receiver()
    except ConfigurationError as error:
        default_logger(DEFAULT_SERVICE_NAME).error(
            "configuration error",
            outcome=AnswerOutcome.MISCONFIGURED,
            reason=str(error),
            status=500,
        )
        return Answer(
            500, AnswerOutcome.MISCONFIGURED, "endpoint misconfigured; see its logs"
        ).response()
    return receiver(event, context)
