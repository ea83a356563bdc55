"""NServiceBus core's recoverability, as an SQS endpoint runs it with the defaults.

``DefaultRecoverabilityPolicy``:

1. an unrecoverable exception (``MessageDeserializationException`` by default, modelled by
   :class:`MessageDeserializationError`) goes to the error queue at once;
2. while ``ImmediateProcessingFailures`` (the pump's delivery attempts, starting at 1) is at most
   the number of immediate retries (5): an immediate retry — on SQS the message is made visible
   again, so a message is processed 6 times per round;
3. then, unless ``NServiceBus.Retries`` already reached the number of delayed retries (3) or the
   first delayed retry is more than a day old (``NServiceBus.Retries.Timestamp``): a delayed
   retry after ``10 s * (retries performed + 1)`` — a new message to the receive address with
   ``NServiceBus.Retries`` incremented and the timestamp renewed (SQS ``DelaySeconds`` 10, 20,
   30; it has a new native id, so its attempts count from 1 again);
4. else the error queue: the headers without ``NServiceBus.Retries`` / ``NServiceBus.FLRetries``
   (the timestamp stays) plus the fault metadata, to the configured error queue *name*, same
   message id and body.

Both outgoing messages reuse the incoming message id, so the dispatcher copies the received
native attributes onto them. They pass the routing stage, whose
``AttachSenderRelatedInfoOnMessageBehavior`` adds ``NServiceBus.Version``,
``NServiceBus.TimeSent`` and, for a delayed retry, ``NServiceBus.DeliverAt`` where missing
(:func:`~local_aws.released_transport.core.pipeline_headers.apply_routing_headers`).

The fault metadata's exception headers are those of a .NET exception; the model writes the
Python exception's: ``ExceptionType`` is ``module.QualifiedName``, ``InnerExceptionType`` the
type of ``__cause__`` (``raise … from …``), ``Source`` the module the exception was raised in,
``StackTrace`` the type, message and traceback. ``HelpLink`` and ``Exception.Data`` have no
Python counterpart and are never written; there is no ``FaultHeaderCustomization``.

Facts: NServiceBus 10.2.5 ``src/NServiceBus.Core/Recoverability/DefaultRecoverabilityPolicy.cs``,
``DelayedRetry.cs``, ``MoveToError.cs``, ``RecoverabilityComponent.cs`` (defaults, static fault
metadata), ``Recoverability/Faults/FaultMetadataExtractor.cs``,
``Recoverability/DelayedRetriesHeaderExtensions.cs``,
``OpenTelemetry/Tracing/PopulateRecoverabilityTraceMetadataBehavior.cs``.
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Final

from local_aws.released_transport.core.host import HostInformation
from local_aws.released_transport.core.incoming import ErrorContext
from local_aws.released_transport.core.outgoing import DispatchProperties, OutgoingMessage
from local_aws.released_transport.dotnet.text import utf16_truncate
from local_aws.released_transport.dotnet.time_formats import from_wire_format, to_wire_format
from local_aws.released_transport.headers import (
    DELAYED_RETRIES,
    DELAYED_RETRIES_TIMESTAMP,
    EXCEPTION_MESSAGE,
    EXCEPTION_SOURCE,
    EXCEPTION_STACK_TRACE,
    EXCEPTION_TYPE,
    FAILED_QUEUE,
    HOST_DISPLAY_NAME,
    HOST_ID,
    IMMEDIATE_RETRIES,
    INNER_EXCEPTION_TYPE,
    PROCESSING_ENDPOINT,
    PROCESSING_MACHINE,
    START_NEW_TRACE,
    TIME_OF_FAILURE,
    TRACE_PARENT,
    TRUE_STRING,
    HeaderDict,
)

DEFAULT_IMMEDIATE_RETRIES: Final = 5
DEFAULT_DELAYED_RETRIES: Final = 3
DEFAULT_DELAYED_RETRY_TIME_INCREASE: Final = timedelta(seconds=10)
MAXIMUM_EXCEPTION_MESSAGE_LENGTH: Final = 16384
DELAYED_RETRIES_MAXIMUM_AGE: Final = timedelta(days=1)


class MessageDeserializationError(Exception):
    """A handler raises this to fail as a message that could not be deserialized does:
    unrecoverable by default, straight to the error queue."""


@dataclass(frozen=True)
class RecoverabilitySettings:
    """The policy's settings with NServiceBus's defaults (the error queue is the endpoint's
    setting, default ``error``)."""

    immediate_retries: int = DEFAULT_IMMEDIATE_RETRIES
    delayed_retries: int = DEFAULT_DELAYED_RETRIES
    delayed_retry_time_increase: timedelta = DEFAULT_DELAYED_RETRY_TIME_INCREASE
    unrecoverable_exceptions: tuple[type[BaseException], ...] = field(
        default=(MessageDeserializationError,)
    )


@dataclass(frozen=True)
class ImmediateRetry:
    """Make the message visible again (``ErrorHandleResult.RetryRequired``)."""


@dataclass(frozen=True)
class DelayedRetry:
    """Send the message to the receive address again after ``delay``."""

    delay: timedelta


@dataclass(frozen=True)
class MoveToError:
    """Send the message with fault metadata to ``error_queue``."""

    error_queue: str


RecoverabilityAction = ImmediateRetry | DelayedRetry | MoveToError


def default_recoverability_policy(
    settings: RecoverabilitySettings, error_queue: str, error_context: ErrorContext, now: datetime
) -> RecoverabilityAction:
    """``DefaultRecoverabilityPolicy.Invoke``; ``error_queue`` is the configured address."""
    if isinstance(error_context.exception, settings.unrecoverable_exceptions):
        return MoveToError(error_queue)
    if error_context.immediate_processing_failures <= settings.immediate_retries:
        return ImmediateRetry()
    performed = error_context.delayed_deliveries_performed
    if (
        settings.delayed_retries > 0
        and performed < settings.delayed_retries
        and not _has_reached_max_time(error_context.headers, now)
    ):
        return DelayedRetry(settings.delayed_retry_time_increase * (performed + 1))
    return MoveToError(error_queue)


def _has_reached_max_time(headers: HeaderDict, now: datetime) -> bool:
    """``HasReachedMaxTime``: a readable timestamp more than a day old."""
    timestamp = headers.get(DELAYED_RETRIES_TIMESTAMP)
    if not timestamp:
        return False
    try:
        return now > from_wire_format(timestamp) + DELAYED_RETRIES_MAXIMUM_AGE
    except ValueError:
        return False


def delayed_retry_message(
    error_context: ErrorContext, delay: timedelta, now: datetime
) -> tuple[OutgoingMessage, DispatchProperties]:
    """``DelayedRetry.GetRoutingContexts``: the message and its delay."""
    headers = dict(error_context.headers)
    if TRACE_PARENT in error_context.headers:
        headers[START_NEW_TRACE] = TRUE_STRING
    headers[DELAYED_RETRIES] = str(error_context.delayed_deliveries_performed + 1)
    headers[DELAYED_RETRIES_TIMESTAMP] = to_wire_format(now)
    message = OutgoingMessage(error_context.message_id, headers, error_context.body)
    return message, DispatchProperties(delay_deliver_with=delay)


def move_to_error_message(
    error_context: ErrorContext, host: HostInformation, now: datetime
) -> OutgoingMessage:
    """``MoveToError.GetRoutingContexts``: the message for the error queue."""
    headers = dict(error_context.headers)
    headers.pop(DELAYED_RETRIES, None)
    headers.pop(IMMEDIATE_RETRIES, None)
    headers.update(fault_metadata(error_context, host, now))
    return OutgoingMessage(error_context.message_id, headers, error_context.body)


def fault_metadata(error_context: ErrorContext, host: HostInformation, now: datetime) -> HeaderDict:
    """``FaultMetadataExtractor.Extract`` with the static metadata, in the same order."""
    exception = error_context.exception
    metadata: HeaderDict = {
        PROCESSING_MACHINE: host.machine_name,
        PROCESSING_ENDPOINT: host.endpoint_name,
        HOST_ID: host.host_id,
        HOST_DISPLAY_NAME: host.display_name,
        FAILED_QUEUE: error_context.receive_address,
        EXCEPTION_TYPE: exception_type_name(type(exception)),
    }
    if exception.__cause__ is not None:
        metadata[INNER_EXCEPTION_TYPE] = exception_type_name(type(exception.__cause__))
    metadata[EXCEPTION_MESSAGE] = utf16_truncate(str(exception), MAXIMUM_EXCEPTION_MESSAGE_LENGTH)
    source = _source(exception)
    if source is not None:
        metadata[EXCEPTION_SOURCE] = source
    metadata[EXCEPTION_STACK_TRACE] = _to_string(exception)
    metadata[TIME_OF_FAILURE] = to_wire_format(now)
    if TRACE_PARENT in error_context.headers:
        metadata[START_NEW_TRACE] = TRUE_STRING
    return metadata


def exception_type_name(exception_type: type[BaseException]) -> str:
    """The Python counterpart of ``Type.FullName``."""
    return f"{exception_type.__module__}.{exception_type.__qualname__}"


def _source(exception: BaseException) -> str | None:
    """The module the exception was raised in (``Exception.Source`` names the assembly)."""
    trace = exception.__traceback__
    if trace is None:
        return None
    while trace.tb_next is not None:
        trace = trace.tb_next
    module = trace.tb_frame.f_globals.get("__name__")
    return module if isinstance(module, str) else None


def _to_string(exception: BaseException) -> str:
    """The counterpart of ``Exception.ToString()``: type, message, then the trace."""
    message = str(exception)
    text = exception_type_name(type(exception)) + (f": {message}" if message else "")
    frames = "".join(traceback.format_tb(exception.__traceback__))
    return f"{text}\n{frames}".rstrip("\n")
