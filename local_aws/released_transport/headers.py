"""Every header name, attribute name and transport constant of the model, defined once.

Sources (read at the released tags; paths in their repositories):

* NServiceBus.AmazonSQS 9.1.1 ``src/NServiceBus.Transport.SQS/TransportHeaders.cs``,
  ``TransportConstraints.cs``, ``TransportMessage.cs`` (``EmptyMessage``);
* NServiceBus 10.2.5 ``src/NServiceBus.Core/Headers.cs``,
  ``Recoverability/Faults/FaultsHeaderKeys.cs``,
  ``ServicePlatform/Retries/RetryAcknowledgementBehavior.cs``,
  ``ServicePlatform/Retries/MarkAsAcknowledgedBehavior.cs``;
* ServiceControl 6.19.2 ``src/ServiceControl/Recoverability/Retrying/`` (the ``ServiceControl.*``
  literals);
* NServiceBus.Metrics.ServiceControl 6.0.1 ``src/NServiceBus.Metrics.ServiceControl/MetricHeaders.cs``;
* NServiceBus.SagaAudit 6.0.1 ``src/NServiceBus.SagaAudit/SagaAuditHeaders.cs``.
"""

from __future__ import annotations

from typing import Final

HeaderDict = dict[str, str | None]
"""A ``Dictionary<string, string>`` of headers: a value can be null (a JSON ``null`` in the
wrapper, or a Binary message attribute, whose ``StringValue`` is null)."""

# Transport headers and message attributes (TransportHeaders.cs).
TIME_TO_BE_RECEIVED: Final = "NServiceBus.AmazonSQS.TimeToBeReceived"
DELAY_SECONDS: Final = "NServiceBus.AmazonSQS.DelaySeconds"
HEADERS_ATTRIBUTE: Final = "NServiceBus.AmazonSQS.Headers"
S3_BODY_KEY: Final = "S3BodyKey"
MESSAGE_TYPE_FULL_NAME: Final = "MessageTypeFullName"
STRING_DATA_TYPE: Final = "String"
"""Every attribute the transport writes has this ``DataType``."""

EMPTY_MESSAGE: Final = "empty message"
"""The body of an empty message: SQS refuses an empty body."""

# Transport constraints (TransportConstraints.cs).
SQS_MAXIMUM_MESSAGE_SIZE: Final = 1024 * 1024
SNS_MAXIMUM_MESSAGE_SIZE: Final = 256 * 1024
MAXIMUM_ITEMS_IN_BATCH: Final = 10
DELAYED_DELIVERY_QUEUE_SUFFIX: Final = "-delay.fifo"
DELAYED_DELIVERY_QUEUE_RETENTION_SECONDS: Final = 4 * 24 * 3600
AWS_MAXIMUM_QUEUE_DELAY_SECONDS: Final = 15 * 60

# SQS system attributes the pumps ask for.
SENT_TIMESTAMP: Final = "SentTimestamp"
APPROXIMATE_RECEIVE_COUNT: Final = "ApproximateReceiveCount"
APPROXIMATE_FIRST_RECEIVE_TIMESTAMP: Final = "ApproximateFirstReceiveTimestamp"
MESSAGE_DEDUPLICATION_ID: Final = "MessageDeduplicationId"

# NServiceBus core headers (Headers.cs).
MESSAGE_ID: Final = "NServiceBus.MessageId"
MESSAGE_INTENT: Final = "NServiceBus.MessageIntent"
REPLY_TO_ADDRESS: Final = "NServiceBus.ReplyToAddress"
CORRELATION_ID: Final = "NServiceBus.CorrelationId"
CONVERSATION_ID: Final = "NServiceBus.ConversationId"
RELATED_TO: Final = "NServiceBus.RelatedTo"
ORIGINATING_ENDPOINT: Final = "NServiceBus.OriginatingEndpoint"
ORIGINATING_MACHINE: Final = "NServiceBus.OriginatingMachine"
ORIGINATING_HOST_ID: Final = "$.diagnostics.originating.hostid"
TIME_SENT: Final = "NServiceBus.TimeSent"
DELIVER_AT: Final = "NServiceBus.DeliverAt"
ENCLOSED_MESSAGE_TYPES: Final = "NServiceBus.EnclosedMessageTypes"
CONTENT_TYPE: Final = "NServiceBus.ContentType"
NSERVICEBUS_VERSION: Final = "NServiceBus.Version"
CONTROL_MESSAGE: Final = "NServiceBus.ControlMessage"
CORE_TIME_TO_BE_RECEIVED: Final = "NServiceBus.TimeToBeReceived"
START_NEW_TRACE: Final = "NServiceBus.OpenTelemetry.StartNewTrace"
TRACE_PARENT: Final = "traceparent"
DELAYED_RETRIES: Final = "NServiceBus.Retries"
DELAYED_RETRIES_TIMESTAMP: Final = "NServiceBus.Retries.Timestamp"
IMMEDIATE_RETRIES: Final = "NServiceBus.FLRetries"
PROCESSING_ENDPOINT: Final = "NServiceBus.ProcessingEndpoint"
PROCESSING_MACHINE: Final = "NServiceBus.ProcessingMachine"
HOST_ID: Final = "$.diagnostics.hostid"
HOST_DISPLAY_NAME: Final = "$.diagnostics.hostdisplayname"
SUBSCRIPTION_MESSAGE_TYPE: Final = "SubscriptionMessageType"
SUBSCRIBER_ADDRESS: Final = "NServiceBus.SubscriberAddress"
SUBSCRIBER_ENDPOINT: Final = "NServiceBus.SubscriberEndpoint"
PROCESSING_STARTED: Final = "NServiceBus.ProcessingStarted"
PROCESSING_ENDED: Final = "NServiceBus.ProcessingEnded"
IS_SAGA_TIMEOUT_MESSAGE: Final = "NServiceBus.IsSagaTimeoutMessage"
ORIGINATING_ADDRESS: Final = "NServiceBus.OriginatingAddress"
SAGA_ID: Final = "NServiceBus.SagaId"
SAGA_TYPE: Final = "NServiceBus.SagaType"
ORIGINATING_SAGA_ID: Final = "NServiceBus.OriginatingSagaId"
ORIGINATING_SAGA_TYPE: Final = "NServiceBus.OriginatingSagaType"

# Fault metadata (FaultsHeaderKeys.cs).
FAILED_QUEUE: Final = "NServiceBus.FailedQ"
EXCEPTION_INFO_PREFIX: Final = "NServiceBus.ExceptionInfo."
EXCEPTION_TYPE: Final = f"{EXCEPTION_INFO_PREFIX}ExceptionType"
INNER_EXCEPTION_TYPE: Final = f"{EXCEPTION_INFO_PREFIX}InnerExceptionType"
EXCEPTION_MESSAGE: Final = f"{EXCEPTION_INFO_PREFIX}Message"
EXCEPTION_SOURCE: Final = f"{EXCEPTION_INFO_PREFIX}Source"
EXCEPTION_STACK_TRACE: Final = f"{EXCEPTION_INFO_PREFIX}StackTrace"
TIME_OF_FAILURE: Final = "NServiceBus.TimeOfFailure"

# ServiceControl retries (RetryAcknowledgementBehavior.cs, ServiceControl's RetryProcessor.cs,
# ReturnToSender.cs, RetryConfirmationProcessor.cs).
RETRY_UNIQUE_MESSAGE_ID: Final = "ServiceControl.Retry.UniqueMessageId"
RETRY_ACKNOWLEDGEMENT_QUEUE: Final = "ServiceControl.Retry.AcknowledgementQueue"
RETRY_SUCCESSFUL: Final = "ServiceControl.Retry.Successful"
RETRY_STAGING_ID: Final = "ServiceControl.Retry.StagingId"
RETRY_ATTEMPT_MESSAGE_ID: Final = "ServiceControl.Retry.Attempt.MessageId"
TARGET_ENDPOINT_ADDRESS: Final = "ServiceControl.TargetEndpointAddress"
RETRY_TO: Final = "ServiceControl.RetryTo"
EDIT_OF: Final = "ServiceControl.EditOf"
RETRY_ACKNOWLEDGEMENT_SENT: Final = "ServiceControl.Retry.AcknowledgementSent"
"""Audit metadata of a retried message the endpoint acknowledged itself."""
OLD_RETRY_ID: Final = "ServiceControl.RetryId"

# Metrics (MetricHeaders.cs) and saga audit (SagaAuditHeaders.cs).
METRIC_TYPE: Final = "NServiceBus.Metric.Type"
METRIC_INSTANCE_ID: Final = "NServiceBus.Metric.InstanceId"
SAGA_STATE_CHANGE: Final = "ServiceControl.SagaStateChange"
INVOKED_SAGAS: Final = "NServiceBus.InvokedSagas"

TRUE_STRING: Final = "True"
"""``bool.TrueString``."""
FALSE_STRING: Final = "False"
"""``bool.FalseString``."""
