"""SNS deliveries to Lambda as SNS records them, though the local AWS runs no function.

In AWS, SNS delivers to a Lambda subscription by invoking the function asynchronously: the
delivery succeeds once Lambda accepts the event (status 202, ``providerResponse``
``{"lambdaRequestId": ...}``, and, on a first try, no ``attempts`` in the record, as AWS's own
sample record shows), whatever the function then does with it; a function that does not exist
is a client-side error SNS does not retry (404, ``ResourceNotFoundException``), logged as a
``FAILURE`` (the shapes the delivery report reads, ``../shared/reference/sns-delivery-logs.md``).

moto's ``Subscription.publish`` (``moto/sns/models.py``) runs the function in Docker, which the
local AWS has not, and fails the publish when the function is not in moto, as the topology's
subscribed functions never are (the stacks import them); it keeps no outcome. :func:`register`
replaces that branch (it never calls moto's for a Lambda subscription, so it composes with any
other wrapper of ``Subscription.publish``, inside or outside it): a message the subscription's filter policy lets through is accepted when
the function is in the local AWS (in the account and region its ARN names) and refused when it
is not, the outcome counted in the ledger and logged through
:mod:`local_aws.moto.delivery_status`. The function is not run (:mod:`local_aws.lambda_poller`
runs the relays, from their queues). Not modelled: Lambda's throttling and its retries, and a
function's resource policy (SNS's permission to invoke it).
"""

from __future__ import annotations

import json
from typing import Any

from moto.awslambda.exceptions import UnknownFunctionException
from moto.awslambda.models import lambda_backends
from moto.moto_api._internal import mock_random
from moto.sns.models import Subscription
from moto.utilities.arns import parse_arn

from local_aws.moto.delivery_status import (
    FAILURE,
    SUCCESS,
    Outcome,
    count_delivery,
    log_delivery,
    published_ms,
)
from local_aws.moto.patching import replacing

ACCEPTED_STATUS = 202
"""Lambda's answer to an asynchronous invocation it accepted."""
NOT_FOUND_STATUS = 404

_PATCHED = "_local_aws_sns_lambda_deliveries"


def lambda_outcome(function_arn: str) -> Outcome:
    """What SNS records for a delivery to ``function_arn``: accepted if the function is in the
    local AWS, else refused as missing (one attempt: SNS does not retry it)."""
    try:
        arn = parse_arn(function_arn)
        lambda_backends[arn.account][arn.region].get_function(function_arn)
    except (UnknownFunctionException, ValueError, IndexError):
        body = {
            "ErrorCode": "ResourceNotFoundException",
            "ErrorMessage": f"Function not found: {function_arn}",
        }
        return Outcome(FAILURE, NOT_FOUND_STATUS, json.dumps(body, separators=(",", ":")))
    accepted = json.dumps({"lambdaRequestId": str(mock_random.uuid4())}, separators=(",", ":"))
    return Outcome(SUCCESS, ACCEPTED_STATUS, accepted, logs_attempts=False)


def register() -> None:
    """Make moto's SNS record its Lambda deliveries instead of running the function (see
    above). Idempotent."""
    original = Subscription.publish

    @replacing(Subscription, "publish", _PATCHED)
    def publish(
        self: Subscription,
        message: str,
        message_id: str,
        subject: str | None = None,
        message_attributes: dict[str, Any] | None = None,
        *args: Any,
        **kwargs: Any,
    ) -> None:
        if self.protocol != "lambda":
            original(self, message, message_id, subject, message_attributes, *args, **kwargs)
            return
        matcher = self._filter_policy_matcher
        if matcher is not None and not matcher.matches(message_attributes, message):
            return
        if kwargs.get("message_structure") == "json":
            message = self._parse_message_structure(message, self.protocol)
        outcome = lambda_outcome(self.endpoint)
        count_delivery(self, outcome)
        log_delivery(self, message, message_id, outcome, published_ms(message_id))
