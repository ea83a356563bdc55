"""The wrapping hazard of the released transport, against the local AWS (moto in server mode).

Sales sends with ``DoNotWrapOutgoingMessages``: its headers travel in the
``NServiceBus.AmazonSQS.Headers`` attribute. Billing wraps (the default) and its handler fails.
Every message recoverability sends for it keeps the incoming message id, so Billing's dispatcher
copies the received attributes onto it (``MessageDispatcher.GetNativeMessageAttributes``,
``SqsPreparedMessage.CopyMessageAttributes``; ``RemoveNativeHeaders`` drops only
``MessageTypeFullName`` and ``S3BodyKey``) — Sales' stale headers attribute among them — and
wraps it. A receiver reads the attribute before the body (``InputQueuePump.ExtractTransportMessage``),
so:

* each delayed retry arrives with Sales' headers, without the ``NServiceBus.Retries`` Billing
  wrote: the count starts again at every round and the retries never end (no
  ``NServiceBus.Retries.Timestamp`` either, so the one-day limit never applies), while the body
  the handler gets is the previous round's envelope, one level deeper each round;
* the error copy arrives at ServiceControl with Sales' headers, without the ``NServiceBus.FailedQ``
  Billing wrote: it cannot be imported, so it cannot be retried.

With both endpoints wrapping, the same failure ends in the error queue after the configured
delayed retries and ServiceControl imports it. Delays pass by time travel
(``local_aws.moto.time_travel.age_sqs_messages``)."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest

from local_aws.moto.time_travel import age_sqs_messages
from local_aws.released_transport.core.recoverability import (
    DelayedRetry,
    MessageDeserializationError,
    MoveToError,
    RecoverabilitySettings,
)
from local_aws.released_transport.endpoint.handler_context import (
    MessageHandlerContext,
)
from local_aws.released_transport.endpoint.receive_pipeline import (
    ProcessingOutcome,
)
from local_aws.released_transport.endpoint.released_endpoint import (
    ReleasedEndpoint,
)
from local_aws.released_transport.endpoint.settings import EndpointSettings
from local_aws.released_transport.service_control.main_instance import (
    MISSING_FAILED_QUEUE,
    ServiceControl,
    ServiceControlSettings,
)
from local_aws.released_transport.transport.receiving.input_pump import MessageFate

pytestmark = pytest.mark.moto

ORDER = "Sales.PlaceOrder, Sales, Version=1.0.0.0, Culture=neutral, PublicKeyToken=null"
RETRIES = RecoverabilitySettings(immediate_retries=0, delayed_retries=2)


def _started(name: str, sqs: Any, **settings: Any) -> ReleasedEndpoint:
    endpoint = ReleasedEndpoint(
        name, sqs, EndpointSettings(wait_time_seconds=0, max_concurrency=10, **settings)
    )
    endpoint.install()
    endpoint.start()
    return endpoint


def _fail(_context: MessageHandlerContext) -> None:
    raise RuntimeError("Billing is down")


def _rounds(billing: ReleasedEndpoint, moto_endpoint: str, count: int) -> list[ProcessingOutcome]:
    """``count`` receives of Billing, letting each delayed retry's delay pass in between."""
    outcomes: list[ProcessingOutcome] = []
    for _ in range(count):
        (outcome,) = billing.process(_fail)
        outcomes.append(outcome)
        if isinstance(outcome.action, DelayedRetry):
            age_sqs_messages(moto_endpoint, outcome.action.delay.total_seconds())
    return outcomes


def test_an_unwrapped_message_failing_at_a_wrapping_endpoint_is_retried_for_ever(
    sqs: Any, moto_endpoint: str
) -> None:
    sales = _started("Sales", sqs, wrap_outgoing_messages=False)
    billing = _started("Billing", sqs, recoverability=RETRIES)
    sent = sales.send("Billing", ORDER, b'{"OrderId":1}')

    outcomes = _rounds(billing, moto_endpoint, 5)

    assert [outcome.action for outcome in outcomes] == [
        DelayedRetry(RETRIES.delayed_retry_time_increase)
    ] * 5
    for outcome in outcomes:
        assert outcome.message is not None
        assert outcome.message.message_id == sent.message_id
        assert "NServiceBus.Retries" not in outcome.message.headers
    bodies = [outcome.message.body for outcome in outcomes if outcome.message is not None]
    assert bodies[0] == b'{"OrderId":1}'
    assert json.loads(bodies[1])["Headers"]["NServiceBus.Retries"] == "1"
    assert all(len(later) > len(earlier) for earlier, later in itertools.pairwise(bodies))


def test_with_both_endpoints_wrapping_the_delayed_retries_end_in_the_error_queue(
    sqs: Any, moto_endpoint: str
) -> None:
    sales = _started("Sales", sqs)
    billing = _started("Billing", sqs, recoverability=RETRIES)
    sales.send("Billing", ORDER, b'{"OrderId":1}')

    outcomes = _rounds(billing, moto_endpoint, 3)

    assert [outcome.action for outcome in outcomes] == [
        DelayedRetry(RETRIES.delayed_retry_time_increase),
        DelayedRetry(RETRIES.delayed_retry_time_increase * 2),
        MoveToError("error"),
    ]


@pytest.mark.parametrize(("sales_wraps", "imported"), [(False, False), (True, True)])
def test_the_error_copy_of_an_unwrapped_message_cannot_be_imported_by_servicecontrol(
    sqs: Any, sales_wraps: bool, imported: bool
) -> None:
    sales = _started("Sales", sqs, wrap_outgoing_messages=sales_wraps)
    billing = _started("Billing", sqs)
    service_control = ServiceControl(sqs, ServiceControlSettings(wait_time_seconds=0))
    service_control.install()
    service_control.start()
    sales.send("Billing", ORDER, b'{"OrderId":1}')

    def unreadable(_context: MessageHandlerContext) -> None:
        raise MessageDeserializationError("cannot read it")

    (failure,) = billing.process(unreadable)
    fates = [result.fate for _ in range(3) for result in service_control.ingest()]

    assert failure.action == MoveToError("error")
    if imported:
        assert fates[0] is MessageFate.PROCESSED
        (failed,) = service_control.failed_messages.values()
        assert failed.failing_endpoint_address == "Billing"
    else:
        assert fates == [
            MessageFate.RETRY_REQUIRED,
            MessageFate.RETRY_REQUIRED,
            MessageFate.HANDLED_AFTER_FAILURE,
        ]
        assert service_control.failed_messages == {}
        (failed_import,) = service_control.failed_imports
        assert failed_import.reason == MISSING_FAILED_QUEUE
        assert "NServiceBus.ProcessingEndpoint" not in failed_import.headers
