"""ServiceControl against the local AWS, in the endpoint's account: it ingests the error queue,
retries a failed message through its staging queue to ``NServiceBus.FailedQ`` by name, the
endpoint succeeds and acknowledges to ``ServiceControl.Retry.AcknowledgementQueue``, and
ServiceControl marks the failure resolved. A message without ``FailedQ`` fails ingestion."""

from __future__ import annotations

import json
from typing import Any

import pytest

from local_aws.released_transport.core.recoverability import MoveToError, RecoverabilitySettings
from local_aws.released_transport.endpoint.handler_context import (
    MessageHandlerContext,
)
from local_aws.released_transport.endpoint.released_endpoint import (
    ReleasedEndpoint,
)
from local_aws.released_transport.endpoint.settings import EndpointSettings
from local_aws.released_transport.service_control.main_instance import (
    FailedMessageStatus,
    ServiceControl,
    ServiceControlSettings,
)
from local_aws.released_transport.transport.receiving.input_pump import MessageFate

pytestmark = pytest.mark.moto

NO_RETRIES = EndpointSettings(
    recoverability=RecoverabilitySettings(immediate_retries=0, delayed_retries=0),
    wait_time_seconds=0,
    max_concurrency=10,
)
ORDER = "Sales.Messages.PlaceOrder"


def _fail(_context: MessageHandlerContext) -> None:
    raise RuntimeError("not yet")


def _service_control(sqs: Any) -> ServiceControl:
    service_control = ServiceControl(sqs, ServiceControlSettings(wait_time_seconds=0))
    service_control.install()
    service_control.start()
    return service_control


def test_a_failed_message_is_ingested_retried_processed_and_acknowledged(sqs: Any) -> None:
    sales = ReleasedEndpoint("Sales", sqs, NO_RETRIES)
    billing = ReleasedEndpoint("Billing", sqs, NO_RETRIES)
    for endpoint in (sales, billing):
        endpoint.install()
        endpoint.start()
    service_control = _service_control(sqs)
    sent = sales.send("Billing", ORDER, b'{"OrderId":3}')
    (failure,) = billing.process(_fail)
    assert failure.action == MoveToError("error")

    (ingested,) = service_control.ingest()
    (failed,) = service_control.failed_messages.values()
    assert ingested.fate is MessageFate.PROCESSED
    assert failed.failing_endpoint_address == "Billing"
    assert failed.message_id == sent.message_id
    assert failed.body == b'{"OrderId":3}'

    service_control.retry(failed.unique_message_id)
    (forwarded,) = service_control.forward_staged()
    (retried,) = billing.process(lambda _context: None)

    assert forwarded.fate is MessageFate.PROCESSED
    assert retried.pump.fate is MessageFate.PROCESSED
    assert retried.message is not None
    headers = retried.message.headers
    assert retried.message.message_id == sent.message_id
    assert retried.message.body == b'{"OrderId":3}'
    assert headers["ServiceControl.Retry.UniqueMessageId"] == failed.unique_message_id
    assert headers["ServiceControl.Retry.AcknowledgementQueue"] == "error"
    for removed in (
        "NServiceBus.FailedQ",
        "NServiceBus.TimeOfFailure",
        "NServiceBus.ExceptionInfo.Message",
        "ServiceControl.TargetEndpointAddress",
        "ServiceControl.Retry.StagingId",
        "ServiceControl.Retry.Attempt.MessageId",
    ):
        assert removed not in headers
    assert headers["NServiceBus.ProcessingEndpoint"] == "Billing"

    (acknowledgement,) = service_control.ingest()
    assert acknowledgement.headers is not None
    assert acknowledgement.headers["ServiceControl.Retry.Successful"]
    assert acknowledgement.headers["NServiceBus.ControlMessage"] == "True"
    assert failed.status is FailedMessageStatus.RESOLVED


def test_a_retried_message_that_fails_again_keeps_its_unique_id(sqs: Any) -> None:
    billing = ReleasedEndpoint("Billing", sqs, NO_RETRIES)
    billing.install()
    billing.start()
    service_control = _service_control(sqs)
    billing.send("Billing", ORDER, b"{}")
    billing.process(_fail)
    service_control.ingest()
    (failed,) = service_control.failed_messages.values()

    service_control.retry(failed.unique_message_id)
    service_control.forward_staged()
    billing.process(_fail)
    service_control.ingest()

    assert list(service_control.failed_messages) == [failed.unique_message_id]
    assert (
        service_control.failed_messages[failed.unique_message_id].status
        is FailedMessageStatus.UNRESOLVED
    )


def test_a_message_without_failed_queue_fails_ingestion_on_the_third_attempt(sqs: Any) -> None:
    service_control = _service_control(sqs)
    error_url = sqs.get_queue_url(QueueName="error")["QueueUrl"]
    sqs.send_message(
        QueueUrl=error_url,
        MessageBody=json.dumps({"Headers": {"NServiceBus.MessageId": "m"}, "Body": "e30="}),
    )

    fates = [result.fate for _ in range(3) for result in service_control.ingest()]

    assert fates == [
        MessageFate.RETRY_REQUIRED,
        MessageFate.RETRY_REQUIRED,
        MessageFate.HANDLED_AFTER_FAILURE,
    ]
    (failed_import,) = service_control.failed_imports
    assert failed_import.reason == (
        "Missing 'NServiceBus.FailedQ' header. Message is poison message or incorrectly send to"
        " (error) queue."
    )
    assert service_control.failed_messages == {}
