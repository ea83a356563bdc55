"""The plugins' messages as ServiceControl 6.19.2 reads them: its own copies of the contracts,
bound by System.Text.Json.

ServiceControl declares classes with the plugins' ``FullName``s (so core's registry resolves
``NServiceBus.EnclosedMessageTypes`` by name) and deserializes the bodies with
``SystemJsonSerializer``: the body must be UTF-8 JSON; properties are matched by exact name,
unknown ones (``$type`` of older plugins) skipped, missing ones left at their default
(``DateTime.MinValue``, ``Guid.Empty``, ``false``, ``null``); a value of the wrong JSON kind — a
``null`` ``DateTime`` or ``Guid`` included — fails the whole message. The heartbeat contracts go
through ``HeartbeatTypesArrayToInstanceConverter`` first, which also takes the object wrapped in
a one-element array (what the old ``ServiceControl.Plugin.Nsb5.Heartbeat`` sent). A failure here
is core's ``MessageDeserializationException``: the message goes to the instance's error queue
without retries (:class:`ContractError`).

Facts: ServiceControl 6.19.2
``src/ServiceControl/Monitoring/HeartbeatMonitoring/InternalMessages/EndpointHeartbeat.cs``,
``InternalMessages/RegisterEndpointStartup.cs``, ``HeartbeatTypesArrayToInstanceConverter.cs``,
``src/ServiceControl/CustomChecks/InternalMessages/ReportCustomCheckResult.cs``,
``src/ServiceControl.SagaAudit/Messages/SagaUpdatedMessage.cs`` (with ``SagaChangeInitiator``,
``SagaChangeOutput``), ``src/ServiceControl.Monitoring/Messaging/EndpointMetadataReport.cs``,
``src/ServiceControl/Infrastructure/NServiceBusFactory.cs`` (the serializer's options); vectors
in ``src/ServiceControl.UnitTests/Monitoring/HeartbeatTypesArrayToInstanceConverterTests.cs``;
NServiceBus 10.2.5 ``src/NServiceBus.Core/Pipeline/Incoming/DeserializeMessageConnector.cs``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Final, TypeVar

from local_aws.released_transport.core.recoverability import MessageDeserializationError
from local_aws.released_transport.dotnet.guid import EMPTY_GUID
from local_aws.released_transport.dotnet.system_text_json import (
    DotnetJsonError,
    JsonObject,
    parse_ordered,
    read_boolean,
    read_guid,
    read_int32,
    read_properties,
    read_string,
    read_string_dictionary,
)
from local_aws.released_transport.dotnet.time_formats import (
    DOTNET_EPOCH,
    TICKS_PER_MICROSECOND,
    TimeSpanFormatError,
    from_json_datetime,
    parse_timespan,
)

_EMPTY: Final = str(EMPTY_GUID)
_T = TypeVar("_T")


class ContractError(MessageDeserializationError):
    """A body the contract cannot be read from (core's ``MessageDeserializationException``)."""


@dataclass(frozen=True)
class EndpointHeartbeat:
    """``ServiceControl.Plugin.Heartbeat.Messages.EndpointHeartbeat``."""

    executed_at: datetime
    endpoint_name: str | None
    host_id: str
    host: str | None


@dataclass(frozen=True)
class RegisterEndpointStartup:
    """``ServiceControl.Plugin.Heartbeat.Messages.RegisterEndpointStartup``."""

    host_id: str
    endpoint: str | None
    started_at: datetime
    host_properties: dict[str, str | None] | None
    host_display_name: str | None
    host: str | None


@dataclass(frozen=True)
class ReportCustomCheckResult:
    """``ServiceControl.Plugin.CustomChecks.Messages.ReportCustomCheckResult``."""

    host_id: str
    custom_check_id: str | None
    category: str | None
    has_failed: bool
    failure_reason: str | None
    reported_at: datetime
    endpoint_name: str | None
    host: str | None


@dataclass(frozen=True)
class SagaChangeInitiator:
    """``SagaChangeInitiator``."""

    initiating_message_id: str | None
    message_type: str | None
    is_saga_timeout_message: bool
    time_sent: datetime | None
    originating_machine: str | None
    originating_endpoint: str | None
    intent: str | None


@dataclass(frozen=True)
class SagaChangeOutput:
    """``SagaChangeOutput``."""

    message_type: str | None
    time_sent: datetime
    delivery_at: datetime | None
    delivery_delay: timedelta | None
    destination: str | None
    resulting_message_id: str | None
    intent: str | None


@dataclass(frozen=True)
class SagaUpdatedMessage:
    """``ServiceControl.EndpointPlugin.Messages.SagaState.SagaUpdatedMessage``."""

    saga_state: str | None
    saga_id: str
    initiator: SagaChangeInitiator | None
    resulting_messages: tuple[SagaChangeOutput, ...]
    endpoint: str | None
    is_new: bool
    is_completed: bool
    start_time: datetime
    finish_time: datetime
    saga_type: str | None


@dataclass(frozen=True)
class EndpointMetadataReport:
    """``NServiceBus.Metrics.EndpointMetadataReport``."""

    plugin_version: int
    local_address: str | None


def _document(body: bytes) -> Any:
    try:
        return parse_ordered(body.decode("utf-8"))
    except (UnicodeDecodeError, DotnetJsonError) as unreadable:
        raise ContractError(
            f"An error occurred while attempting to extract logical messages: {unreadable}"
        ) from unreadable


def _members(value: Any, type_name: str) -> dict[str, Any]:
    members = read_properties(value, type_name)
    if members is None:
        raise ContractError(f"The message body is null: no {type_name}")
    return members


def _field(members: dict[str, Any], name: str, reader: Callable[[Any], _T], default: _T) -> _T:
    """One property through its type's reader, the default when the body leaves it out."""
    if name not in members:
        return default
    try:
        return reader(members[name])
    except (DotnetJsonError, ValueError) as wrong:
        raise ContractError(f"The JSON value of '{name}' could not be read: {wrong}") from wrong


def _datetime(value: Any) -> datetime:
    if not isinstance(value, str):
        raise DotnetJsonError("The JSON value could not be converted to System.DateTime.")
    return from_json_datetime(value)


def _optional_datetime(value: Any) -> datetime | None:
    return None if value is None else _datetime(value)


def _timespan(value: Any) -> timedelta | None:
    """``TimeSpan?``: ``null`` or the ``[-][d.]hh:mm:ss[.fffffff]`` text."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise DotnetJsonError("The JSON value could not be converted to System.TimeSpan.")
    try:
        ticks = parse_timespan(value)
    except TimeSpanFormatError as wrong:
        raise DotnetJsonError(str(wrong)) from wrong
    return timedelta(microseconds=ticks // TICKS_PER_MICROSECOND)


def _heartbeat_document(body: bytes, type_name: str) -> dict[str, Any]:
    """``HeartbeatTypesArrayToInstanceConverter``: the object, or the object alone in an
    array."""
    document = _document(body)
    if isinstance(document, list) and not isinstance(document, JsonObject):
        if len(document) != 1 or not isinstance(document[0], JsonObject):
            raise ContractError(f"The JSON value could not be converted to {type_name}.")
        document = document[0]
    return _members(document, type_name)


def read_endpoint_heartbeat(body: bytes) -> EndpointHeartbeat:
    """An ``EndpointHeartbeat`` body."""
    members = _heartbeat_document(body, "EndpointHeartbeat")
    return EndpointHeartbeat(
        _field(members, "ExecutedAt", _datetime, DOTNET_EPOCH),
        _field(members, "EndpointName", read_string, None),
        _field(members, "HostId", read_guid, _EMPTY),
        _field(members, "Host", read_string, None),
    )


def read_register_endpoint_startup(body: bytes) -> RegisterEndpointStartup:
    """A ``RegisterEndpointStartup`` body."""
    members = _heartbeat_document(body, "RegisterEndpointStartup")
    return RegisterEndpointStartup(
        _field(members, "HostId", read_guid, _EMPTY),
        _field(members, "Endpoint", read_string, None),
        _field(members, "StartedAt", _datetime, DOTNET_EPOCH),
        _field(members, "HostProperties", read_string_dictionary, None),
        _field(members, "HostDisplayName", read_string, None),
        _field(members, "Host", read_string, None),
    )


def read_report_custom_check_result(body: bytes) -> ReportCustomCheckResult:
    """A ``ReportCustomCheckResult`` body."""
    members = _members(_document(body), "ReportCustomCheckResult")
    return ReportCustomCheckResult(
        _field(members, "HostId", read_guid, _EMPTY),
        _field(members, "CustomCheckId", read_string, None),
        _field(members, "Category", read_string, None),
        _field(members, "HasFailed", read_boolean, False),
        _field(members, "FailureReason", read_string, None),
        _field(members, "ReportedAt", _datetime, DOTNET_EPOCH),
        _field(members, "EndpointName", read_string, None),
        _field(members, "Host", read_string, None),
    )


def _initiator(value: Any) -> SagaChangeInitiator | None:
    members = read_properties(value, "SagaChangeInitiator")
    if members is None:
        return None
    return SagaChangeInitiator(
        _field(members, "InitiatingMessageId", read_string, None),
        _field(members, "MessageType", read_string, None),
        _field(members, "IsSagaTimeoutMessage", read_boolean, False),
        _field(members, "TimeSent", _optional_datetime, None),
        _field(members, "OriginatingMachine", read_string, None),
        _field(members, "OriginatingEndpoint", read_string, None),
        _field(members, "Intent", read_string, None),
    )


def _output(value: Any) -> SagaChangeOutput:
    members = _members(value, "SagaChangeOutput")
    return SagaChangeOutput(
        _field(members, "MessageType", read_string, None),
        _field(members, "TimeSent", _datetime, DOTNET_EPOCH),
        _field(members, "DeliveryAt", _optional_datetime, None),
        _field(members, "DeliveryDelay", _timespan, None),
        _field(members, "Destination", read_string, None),
        _field(members, "ResultingMessageId", read_string, None),
        _field(members, "Intent", read_string, None),
    )


def _outputs(value: Any) -> tuple[SagaChangeOutput, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or isinstance(value, JsonObject):
        raise DotnetJsonError("The JSON value could not be converted to List<SagaChangeOutput>.")
    return tuple(_output(item) for item in value)


def read_saga_updated_message(body: bytes) -> SagaUpdatedMessage:
    """A ``SagaUpdatedMessage`` body (ServiceControl's source-generated contract)."""
    members = _members(_document(body), "SagaUpdatedMessage")
    return SagaUpdatedMessage(
        _field(members, "SagaState", read_string, None),
        _field(members, "SagaId", read_guid, _EMPTY),
        _field(members, "Initiator", _initiator, None),
        _field(members, "ResultingMessages", _outputs, ()),
        _field(members, "Endpoint", read_string, None),
        _field(members, "IsNew", read_boolean, False),
        _field(members, "IsCompleted", read_boolean, False),
        _field(members, "StartTime", _datetime, DOTNET_EPOCH),
        _field(members, "FinishTime", _datetime, DOTNET_EPOCH),
        _field(members, "SagaType", read_string, None),
    )


def read_endpoint_metadata_report(body: bytes) -> EndpointMetadataReport:
    """An ``EndpointMetadataReport`` body."""
    members = _members(_document(body), "EndpointMetadataReport")
    return EndpointMetadataReport(
        _field(members, "PluginVersion", read_int32, 0),
        _field(members, "LocalAddress", read_string, None),
    )
