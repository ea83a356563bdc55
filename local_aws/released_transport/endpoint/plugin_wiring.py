"""The platform's plugins one endpoint runs, wired from one table.

Each plugin is off unless its settings are given
(:class:`~local_aws.released_transport.endpoint.settings.EndpointSettings`), and saga audit also
unless the endpoint has sagas (``SagaAuditFeature`` ``DependsOn<Sagas>()``, and core's ``Sagas``
feature needs a registered saga: an endpoint without one never starts the plugin and sends no
start-up check; NServiceBus.SagaAudit 6.0.1 ``src/NServiceBus.SagaAudit/SagaAuditFeature.cs``,
NServiceBus 10.2.5 ``src/NServiceBus.Core/Sagas/Sagas.cs``): heartbeats
(:mod:`~local_aws.released_transport.plugins.heartbeats`), custom checks
(:mod:`~local_aws.released_transport.plugins.custom_checks`), metrics
(:mod:`~local_aws.released_transport.plugins.metrics`) and saga audit
(:mod:`~local_aws.released_transport.plugins.saga_audit`); core's auditing is no plugin and joins
the receive pipeline instead. Every plugin is built from the same parts of its endpoint (the
transport's dispatcher, the host, the receive address, the clock) and has one startup task, which
the endpoint's start runs at once — saga audit's queue check, which can stop the start, then the
heartbeat registration, the first run of every custom check and the first endpoint metadata
report. The order of the startup tasks upstream follows the order the features were enabled in;
the model fixes the table's. The plugins' timers are the endpoint's steps.

A plugin is one row of :data:`PLUGINS`: adding one is adding a row (and its setting).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, Generic, TypeVar, cast

from local_aws.released_transport.core.host import HostInformation
from local_aws.released_transport.dotnet.time_formats import Clock
from local_aws.released_transport.endpoint.settings import EndpointSettings
from local_aws.released_transport.plugins.custom_checks import (
    CustomCheckSettings,
    CustomChecksRunner,
)
from local_aws.released_transport.plugins.heartbeats import HeartbeatSender, HeartbeatSettings
from local_aws.released_transport.plugins.metrics import MetricsReporter, MetricsSettings
from local_aws.released_transport.plugins.saga_audit import SagaAuditBackend, SagaAuditSettings
from local_aws.released_transport.transport.sending.dispatcher import MessageDispatcher

SettingsT = TypeVar("SettingsT")
PluginT = TypeVar("PluginT")


@dataclass(frozen=True)
class PluginParts:
    """What every plugin of an endpoint is built from."""

    dispatcher: MessageDispatcher
    """The transport's dispatcher: the plugins hand their messages to it directly."""
    host: HostInformation
    receive_address: str
    clock: Clock


@dataclass(frozen=True)
class PluginWiring(Generic[SettingsT, PluginT]):
    """How the endpoint wires one plugin: the setting that enables it (and names it, in errors),
    how it is built, and its startup task."""

    setting: str
    settings_of: Callable[[EndpointSettings], SettingsT | None]
    build: Callable[[SettingsT, PluginParts], PluginT]
    startup_task: Callable[[PluginT], object]
    startup_can_stop_the_start: bool = False
    """Whether a failed startup task fails the endpoint's start (then it runs before the endpoint
    counts as started)."""


def _from_parts(
    plugin: Callable[[MessageDispatcher, HostInformation, str, SettingsT, Clock], PluginT],
) -> Callable[[SettingsT, PluginParts], PluginT]:
    """How a plugin that takes every part (dispatcher, host, receive address, its settings,
    clock) is built."""
    return lambda settings, parts: plugin(
        parts.dispatcher, parts.host, parts.receive_address, settings, parts.clock
    )


def _saga_audit_settings(settings: EndpointSettings) -> SagaAuditSettings | None:
    """``AuditSagaStateChanges`` enables the feature, which runs only where core's ``Sagas``
    feature does: on an endpoint that registers a saga."""
    return settings.saga_audit if settings.sagas else None


SAGA_AUDIT: Final[PluginWiring[SagaAuditSettings, SagaAuditBackend]] = PluginWiring(
    "saga_audit",
    _saga_audit_settings,
    lambda settings, parts: SagaAuditBackend(parts.dispatcher, parts.receive_address, settings),
    SagaAuditBackend.start,
    startup_can_stop_the_start=True,
)
HEARTBEATS: Final[PluginWiring[HeartbeatSettings, HeartbeatSender]] = PluginWiring(
    "heartbeats",
    lambda settings: settings.heartbeats,
    _from_parts(HeartbeatSender),
    HeartbeatSender.start,
)
CUSTOM_CHECKS: Final[PluginWiring[CustomCheckSettings, CustomChecksRunner]] = PluginWiring(
    "custom_checks",
    lambda settings: settings.custom_checks,
    _from_parts(CustomChecksRunner),
    CustomChecksRunner.start,
)
METRICS: Final[PluginWiring[MetricsSettings, MetricsReporter]] = PluginWiring(
    "metrics",
    lambda settings: settings.metrics,
    _from_parts(MetricsReporter),
    MetricsReporter.report_endpoint_metadata,
)
PLUGINS: Final[tuple[PluginWiring[Any, Any], ...]] = (
    SAGA_AUDIT,
    HEARTBEATS,
    CUSTOM_CHECKS,
    METRICS,
)
"""Every plugin, in the order their startup tasks run."""


class EndpointPlugins:
    """The plugins one endpoint's settings enable, each built once from the endpoint's parts."""

    def __init__(self, settings: EndpointSettings, parts: PluginParts) -> None:
        self._plugins: dict[str, object] = {}
        for wiring in PLUGINS:
            plugin_settings = wiring.settings_of(settings)
            if plugin_settings is not None:
                self._plugins[wiring.setting] = wiring.build(plugin_settings, parts)

    def get(self, wiring: PluginWiring[Any, PluginT]) -> PluginT | None:
        """The plugin ``wiring`` builds, when the settings enable it."""
        return cast("PluginT | None", self._plugins.get(wiring.setting))

    def run_startup_tasks(self, *, can_stop_the_start: bool) -> None:
        """The startup tasks of the enabled plugins, in the table's order: those that can stop
        the endpoint's start, or all the others."""
        for wiring in PLUGINS:
            plugin = self._plugins.get(wiring.setting)
            if plugin is not None and wiring.startup_can_stop_the_start is can_stop_the_start:
                wiring.startup_task(plugin)
