"""NServiceBus.Heartbeat 6.0.1: ``SendHeartbeatTo(serviceControlQueue, frequency, timeToLive)``.

At start the plugin sends one ``RegisterEndpointStartup`` (``StartedAt`` = the start time); if
that dispatch fails it tries once more a minute later, then gives up (both failures are only
logged). Every ``frequency`` (default 10 s) it sends one ``EndpointHeartbeat`` (``ExecutedAt`` =
when it is sent); a failure is logged and the next one is sent on time. Both go straight to the
transport's dispatcher (:mod:`~local_aws.released_transport.plugins.service_platform`) with a time
to be received of ``timeToLive`` (default four times the frequency, 40 s), to the queue as
configured, resolved by name in the endpoint's own account.

Bodies: ``JsonSerializer.SerializeToUtf8Bytes`` with default options, properties in declaration
order — ``{"ExecutedAt":…,"EndpointName":…,"HostId":…,"Host":…}`` and
``{"HostId":…,"Endpoint":…,"StartedAt":…,"HostProperties":{…},"HostDisplayName":…,"Host":…}``
(``Host`` and ``HostDisplayName`` are both the host's display name, ``HostId`` the ``D`` form).
Headers: ``NServiceBus.EnclosedMessageTypes`` ``ServiceControl.Plugin.Heartbeat.Messages.
EndpointHeartbeat`` / ``….RegisterEndpointStartup``, ``NServiceBus.ContentType``
``application/json``, ``NServiceBus.MessageIntent`` ``Send``, ``NServiceBus.ReplyToAddress`` (the
endpoint's receive address), a fresh dictionary for each message.

The released plugin runs both on timers; the model sends when asked (:class:`HeartbeatSender`:
:meth:`~HeartbeatSender.start`, :meth:`~HeartbeatSender.retry_registration`,
:meth:`~HeartbeatSender.send_heartbeat`) with the endpoint's clock.

Facts: NServiceBus.Heartbeat 6.0.1 ``src/NServiceBus.Heartbeat/HeartbeatConfigurationExtensions.cs``,
``HeartbeatsFeature.cs`` (defaults), ``HeartbeatSender.cs``, ``ServiceControlBackend.cs``,
``Messages/EndpointHeartbeat.cs``, ``Messages/RegisterEndpointStartup.cs``; vectors in
``src/NServiceBus.Heartbeat.Tests/ServiceControlBackendTests.cs`` and its approval files;
``src/NServiceBus.Heartbeat.AcceptanceTests/When_not_setting_ttl.cs`` (40 s).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Final

from local_aws.released_transport.core.host import HostInformation
from local_aws.released_transport.dotnet.system_text_json import write_json
from local_aws.released_transport.dotnet.text import is_null_or_whitespace, utf8_bytes
from local_aws.released_transport.dotnet.time_formats import Clock, TimeSpan, to_json_datetime
from local_aws.released_transport.plugins.service_platform import (
    SendAttempt,
    dispatch_plugin_message,
    new_plugin_message,
    plugin_headers,
)
from local_aws.released_transport.transport.sending.dispatcher import MessageDispatcher

DEFAULT_HEARTBEAT_FREQUENCY: Final = timedelta(seconds=10)
TIME_TO_LIVE_FREQUENCIES: Final = 4
"""Without ``timeToLive`` a heartbeat lives four times the frequency."""
REGISTRATION_RETRY_INTERVAL: Final = timedelta(minutes=1)
ENDPOINT_HEARTBEAT_TYPE: Final = "ServiceControl.Plugin.Heartbeat.Messages.EndpointHeartbeat"
REGISTER_ENDPOINT_STARTUP_TYPE: Final = (
    "ServiceControl.Plugin.Heartbeat.Messages.RegisterEndpointStartup"
)


class HeartbeatSettingsError(ValueError):
    """``SendHeartbeatTo`` refused its arguments, as the plugin's argument checks do."""


@dataclass(frozen=True)
class HeartbeatSettings:
    """``SendHeartbeatTo(serviceControlQueue, frequency, timeToLive)``."""

    service_control_queue: str
    frequency: timedelta = DEFAULT_HEARTBEAT_FREQUENCY
    time_to_live: timedelta | None = None

    def __post_init__(self) -> None:
        if is_null_or_whitespace(self.service_control_queue):
            raise HeartbeatSettingsError(
                "HeartbeatSettings.service_control_queue must not be empty or white space; give"
                " ServiceControl's queue, e.g. 'Particular.ServiceControl'"
            )
        for name, value in (("frequency", self.frequency), ("time_to_live", self.time_to_live)):
            if value is not None and value < timedelta(0):
                raise HeartbeatSettingsError(
                    f"HeartbeatSettings.{name} must not be negative; give a positive time span"
                )

    @property
    def effective_time_to_live(self) -> timedelta:
        """``timeToLive``, else four times the frequency."""
        if self.time_to_live is not None:
            return self.time_to_live
        return self.frequency * TIME_TO_LIVE_FREQUENCIES


def endpoint_heartbeat_body(
    executed_at: datetime, endpoint_name: str, host_id: str, host: str
) -> bytes:
    """The serialized ``EndpointHeartbeat`` (``host_id`` in the ``D`` form)."""
    return utf8_bytes(
        write_json(
            {
                "ExecutedAt": to_json_datetime(executed_at),
                "EndpointName": endpoint_name,
                "HostId": host_id,
                "Host": host,
            }
        )
    )


def register_endpoint_startup_body(
    *,
    host_id: str,
    endpoint: str,
    started_at: datetime,
    host_properties: Mapping[str, str] | None,
    host_display_name: str,
    host: str,
) -> bytes:
    """The serialized ``RegisterEndpointStartup``."""
    return utf8_bytes(
        write_json(
            {
                "HostId": host_id,
                "Endpoint": endpoint,
                "StartedAt": to_json_datetime(started_at),
                "HostProperties": None if host_properties is None else dict(host_properties),
                "HostDisplayName": host_display_name,
                "Host": host,
            }
        )
    )


class HeartbeatSender:
    """The plugin's startup task of one endpoint, stepped by hand."""

    def __init__(
        self,
        dispatcher: MessageDispatcher,
        host: HostInformation,
        reply_to_address: str | None,
        settings: HeartbeatSettings,
        clock: Clock,
    ) -> None:
        self._dispatcher = dispatcher
        self._host = host
        self._reply_to_address = reply_to_address
        self.settings = settings
        self._clock = clock
        self._started_at: datetime | None = None
        self.registration_retry_due: datetime | None = None
        """When the one retry of a failed registration is due (``None``: none pending)."""
        self.attempts: list[SendAttempt] = []
        """Every message handed to the dispatcher, in order, with its failure if it failed."""

    def start(self) -> SendAttempt:
        """``OnStart``: the registration, at the start time."""
        started_at = self._clock()
        self._started_at = started_at
        attempt = self._send_registration(started_at)
        if not attempt.sent:
            self.registration_retry_due = started_at + REGISTRATION_RETRY_INTERVAL
        return attempt

    def retry_registration(self) -> SendAttempt:
        """The single retry of a failed registration (same ``StartedAt``), a minute after it."""
        if self.registration_retry_due is None or self._started_at is None:
            raise RuntimeError("no failed registration is waiting for its retry")
        self.registration_retry_due = None
        return self._send_registration(self._started_at)

    def send_heartbeat(self) -> SendAttempt:
        """One tick of the heartbeat timer."""
        body = endpoint_heartbeat_body(
            self._clock(), self._host.endpoint_name, self._host.host_guid, self._host.display_name
        )
        return self._send(body, ENDPOINT_HEARTBEAT_TYPE)

    def _send_registration(self, started_at: datetime) -> SendAttempt:
        body = register_endpoint_startup_body(
            host_id=self._host.host_guid,
            endpoint=self._host.endpoint_name,
            started_at=started_at,
            host_properties=self._host.properties,
            host_display_name=self._host.display_name,
            host=self._host.display_name,
        )
        return self._send(body, REGISTER_ENDPOINT_STARTUP_TYPE)

    def _send(self, body: bytes, message_type: str) -> SendAttempt:
        message = new_plugin_message(plugin_headers(message_type, self._reply_to_address), body)
        attempt = dispatch_plugin_message(
            self._dispatcher,
            message,
            self.settings.service_control_queue,
            TimeSpan.of(self.settings.effective_time_to_live),
        )
        self.attempts.append(attempt)
        return attempt
