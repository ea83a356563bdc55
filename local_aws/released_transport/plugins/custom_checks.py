"""NServiceBus.CustomChecks 6.0.1: ``ReportCustomChecksTo(serviceControlQueue, timeToLive)``.

When the endpoint starts with at least one check, each check runs at once and then, if it has an
interval (``repeatAfter``), again after each interval; a check without one runs once. Each run
sends one ``ReportCustomCheckResult`` straight to the transport's dispatcher
(:mod:`~local_aws.released_transport.plugins.service_platform`), to the queue as configured,
resolved by name in the endpoint's own account. A check that throws reports itself failed with the
reason ``'<type>' implementation for custom check '<id>' in '<category>' failed to run.``, where the
type is the registry's wrapper, ``NServiceBus.CustomChecks.CustomCheckWrapper`1[<check type>]``. A
failed dispatch is logged and the check runs again on time.

Time to be received: for a periodic check ``timeToLive``, else four times its interval; for a
one-time check always ``TimeSpan.MaxValue`` (the configured ``timeToLive`` is not used).

Body: the source-generated ``ReportCustomCheckResult`` contract with default options —
``{"HostId":…,"CustomCheckId":…,"Category":…,"HasFailed":…,"FailureReason":…,"ReportedAt":…,
"EndpointName":…,"Host":…}`` (``FailureReason`` ``null`` for a pass, ``Host`` the display name,
``ReportedAt`` when the check ran). Headers: ``NServiceBus.EnclosedMessageTypes``
``ServiceControl.Plugin.CustomChecks.Messages.ReportCustomCheckResult``,
``NServiceBus.ContentType`` ``application/json``, ``NServiceBus.MessageIntent`` ``Send``,
``NServiceBus.ReplyToAddress`` — in **one dictionary the backend reuses for every message**. The
wrapped form of the SQS dispatcher writes into the message's dictionary (a new
``NServiceBus.MessageId`` header when there is none, and the time to be received), so from the
second report on, every report of the endpoint carries the first one's ``NServiceBus.MessageId``
header, which the receiver takes as its message id; the model shares the dictionary as the plugin
does.

The released plugin runs the checks on timers; the model runs them when asked
(:class:`CustomChecksRunner`: :meth:`~CustomChecksRunner.start`,
:meth:`~CustomChecksRunner.run_periodic_checks`). Registering the same check type twice is not
modelled (give each check once).

Facts: NServiceBus.CustomChecks 6.0.1 ``src/NServiceBus.CustomChecks/CustomChecksConfigurationExtensions.cs``,
``CustomChecksFeature.cs``, ``CustomChecksStartup.cs``, ``TimerBasedPeriodicCheck.cs``,
``CustomCheck.cs``, ``CheckResult.cs``, ``CustomCheckWrapper.cs``, ``ServiceControlBackend.cs``,
``Messages/ReportCustomCheckResult.cs``, ``Messages/MessagesJsonContext.cs``; vectors in
``src/NServiceBus.CustomChecks.Tests/ServiceControlBackendTests.cs`` and its approval file,
``src/NServiceBus.CustomChecks.AcceptanceTests/When_not_setting_ttl.cs``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Final

from local_aws.released_transport.core.host import HostInformation
from local_aws.released_transport.dotnet.system_text_json import write_json
from local_aws.released_transport.dotnet.text import utf8_bytes
from local_aws.released_transport.dotnet.time_formats import (
    TIMESPAN_MAX,
    Clock,
    TimeSpan,
    to_json_datetime,
)
from local_aws.released_transport.headers import HeaderDict
from local_aws.released_transport.plugins.service_platform import (
    SendAttempt,
    dispatch_plugin_message,
    new_plugin_message,
    plugin_headers,
)
from local_aws.released_transport.transport.sending.dispatcher import MessageDispatcher

REPORT_CUSTOM_CHECK_RESULT_TYPE: Final = (
    "ServiceControl.Plugin.CustomChecks.Messages.ReportCustomCheckResult"
)
TIME_TO_LIVE_INTERVALS: Final = 4
WRAPPER_TYPE: Final = "NServiceBus.CustomChecks.CustomCheckWrapper`1"


class CustomCheckSettingsError(ValueError):
    """``ReportCustomChecksTo`` or a check refused its arguments."""


@dataclass(frozen=True)
class CheckResult:
    """``CheckResult``: ``CheckResult.Pass`` or ``CheckResult.Failed(reason)``."""

    has_failed: bool = False
    failure_reason: str | None = None

    @classmethod
    def failed(cls, reason: str) -> CheckResult:
        """``CheckResult.Failed(reason)``."""
        return cls(True, reason)


PASS: Final = CheckResult()
"""``CheckResult.Pass``."""


@dataclass(frozen=True)
class CustomCheck:
    """A ``CustomCheck`` subclass: its id, category, ``repeatAfter`` and ``PerformCheck``.
    ``type_name`` is the class's ``FullName`` (by default the Python function's module and
    qualified name), which only a failing check's reason shows."""

    check_id: str
    category: str
    perform: Callable[[], CheckResult]
    interval: timedelta | None = None
    type_name: str = ""

    def __post_init__(self) -> None:
        if not self.type_name:
            name = f"{self.perform.__module__}.{getattr(self.perform, '__qualname__', 'check')}"
            object.__setattr__(self, "type_name", name)


@dataclass(frozen=True)
class CustomCheckSettings:
    """``ReportCustomChecksTo(serviceControlQueue, timeToLive)`` and the endpoint's checks (the
    plugin refuses only a null queue; the model refuses an empty one too, which could never be
    sent to)."""

    service_control_queue: str
    time_to_live: timedelta | None = None
    checks: tuple[CustomCheck, ...] = field(default=())

    def __post_init__(self) -> None:
        if not self.service_control_queue:
            raise CustomCheckSettingsError(
                "CustomCheckSettings.service_control_queue must not be empty; give"
                " ServiceControl's queue, e.g. 'Particular.ServiceControl'"
            )


def report_custom_check_result_body(
    *,
    host_id: str,
    custom_check_id: str,
    category: str,
    result: CheckResult,
    reported_at: datetime,
    endpoint_name: str,
    host: str,
) -> bytes:
    """The serialized ``ReportCustomCheckResult`` (``host_id`` in the ``D`` form)."""
    return utf8_bytes(
        write_json(
            {
                "HostId": host_id,
                "CustomCheckId": custom_check_id,
                "Category": category,
                "HasFailed": result.has_failed,
                "FailureReason": result.failure_reason,
                "ReportedAt": to_json_datetime(reported_at),
                "EndpointName": endpoint_name,
                "Host": host,
            }
        )
    )


def check_time_to_live(check: CustomCheck, time_to_live: timedelta | None) -> TimeSpan:
    """``CustomChecksStartup``'s time to be received of one check's reports."""
    if check.interval is None:
        return TIMESPAN_MAX
    if time_to_live is not None:
        return TimeSpan.of(time_to_live)
    return TimeSpan.of(check.interval * TIME_TO_LIVE_INTERVALS)


def failed_to_run_reason(check: CustomCheck) -> str:
    """``InvokeAndWrapFailure``'s reason for a check that threw."""
    return (
        f"'{WRAPPER_TYPE}[{check.type_name}]' implementation for custom check"
        f" '{check.check_id}' in '{check.category}' failed to run."
    )


class CustomChecksRunner:
    """The plugin's startup task of one endpoint, stepped by hand."""

    def __init__(
        self,
        dispatcher: MessageDispatcher,
        host: HostInformation,
        reply_to_address: str | None,
        settings: CustomCheckSettings,
        clock: Clock,
    ) -> None:
        self._dispatcher = dispatcher
        self._host = host
        self.settings = settings
        self._clock = clock
        self._headers: HeaderDict = plugin_headers(
            REPORT_CUSTOM_CHECK_RESULT_TYPE, reply_to_address
        )
        """The backend's one dictionary, shared by every report."""
        self.attempts: list[SendAttempt] = []
        """Every report handed to the dispatcher, in order, with its failure if it failed."""

    def start(self) -> list[SendAttempt]:
        """``OnStart``: nothing without checks; else every check runs once."""
        return [self._run(check) for check in self.settings.checks]

    def run_periodic_checks(self) -> list[SendAttempt]:
        """One tick of every periodic check's timer (one-time checks ran at start only)."""
        return [self._run(check) for check in self.settings.checks if check.interval is not None]

    def _run(self, check: CustomCheck) -> SendAttempt:
        try:
            result = check.perform()
        except Exception:
            result = CheckResult.failed(failed_to_run_reason(check))
        body = report_custom_check_result_body(
            host_id=self._host.host_guid,
            custom_check_id=check.check_id,
            category=check.category,
            result=result,
            reported_at=self._clock(),
            endpoint_name=self._host.endpoint_name,
            host=self._host.display_name,
        )
        attempt = dispatch_plugin_message(
            self._dispatcher,
            new_plugin_message(self._headers, body),
            self.settings.service_control_queue,
            check_time_to_live(check, self.settings.time_to_live),
        )
        self.attempts.append(attempt)
        return attempt
