# ruff: noqa: N802, N999 -- module and test names are the upstream tests', for traceability
"""NServiceBus.CustomChecks 6.0.1 ``src/NServiceBus.CustomChecks.Tests/ServiceControlBackendTests.cs``
(the approval file, byte for byte), ``AcceptanceTests/When_not_setting_ttl.cs``, and what
``CustomChecksStartup``, ``TimerBasedPeriodicCheck`` and ``ServiceControlBackend`` hand the SQS
dispatcher, on the test doubles."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from local_aws.released_transport.core.host import HostInformation
from local_aws.released_transport.endpoint.released_endpoint import (
    ReleasedEndpoint,
)
from local_aws.released_transport.endpoint.settings import EndpointSettings
from local_aws.released_transport.plugins.custom_checks import (
    PASS,
    CheckResult,
    CustomCheck,
    CustomCheckSettings,
    CustomChecksRunner,
    report_custom_check_result_body,
)
from local_aws.released_transport.transport.queues.naming import get_sqs_queue_name
from local_aws.released_transport.transport.queues.queue_cache import QueueCache
from local_aws.released_transport.transport.sending.dispatcher import MessageDispatcher
from tests.local_aws.released_transport.fake_sqs import FakeSqs
from tests.local_aws.released_transport.fake_wire import envelope, sent_to

APPROVALS = Path(__file__).parent / "approvals"
NOW = datetime(2024, 5, 6, 7, 8, 9, tzinfo=UTC)
HOST = HostInformation("Sales", "MACHINE", "1865830e71b0dc6ce14662cdd0034e6e", "Display")


def _broken() -> CheckResult:
    raise OSError("disk gone")


def test_It_can_serialize_RegisterCustomCheckResult() -> None:
    body = report_custom_check_result_body(
        host_id="00000000-0000-0000-0000-000000000000",
        custom_check_id="MyCheckId",
        category="MyCategory",
        result=CheckResult.failed("Failure reason."),
        reported_at=datetime(2016, 2, 1, 13, 59, tzinfo=UTC),
        endpoint_name="My.Endpoint",
        host="Host",
    )

    assert (
        body
        == (
            APPROVALS / "ServiceControlBackendTests.It_can_serialize_RegisterCustomCheckResult"
            ".approved.txt"
        ).read_bytes()
    )


def _runner(sqs: FakeSqs, settings: CustomCheckSettings) -> CustomChecksRunner:
    dispatcher = MessageDispatcher(sqs, QueueCache(sqs, get_sqs_queue_name, None))
    return CustomChecksRunner(dispatcher, HOST, "Sales", settings, lambda: NOW)


def _ttbr(entry: dict[str, Any]) -> object:
    return envelope(entry)["Headers"]["NServiceBus.AmazonSQS.TimeToBeReceived"]


def test_Should_use_four_times_the_interval_value_for_ttl() -> None:
    """``When_not_setting_ttl``: a check repeating every second lives 4 s; a one-time check
    lives for ever (``TimeSpan.MaxValue``) even when a ttl is configured."""
    sqs = FakeSqs()
    periodic = CustomCheck("Disk", "Storage", lambda: PASS, interval=timedelta(seconds=1))
    once = CustomCheck("Licence", "Setup", lambda: PASS)

    _runner(sqs, CustomCheckSettings("SC", checks=(periodic, once))).start()
    _runner(sqs, CustomCheckSettings("SC", timedelta(minutes=3), (periodic, once))).start()

    assert [_ttbr(entry) for entry in sent_to(sqs, "SC")] == [
        "00:00:04",
        "10675199.02:48:05.4775807",
        "00:03:00",
        "10675199.02:48:05.4775807",
    ]


def test_one_time_checks_run_at_start_only_and_periodic_ones_on_every_tick() -> None:
    sqs = FakeSqs()
    runs: list[str] = []

    def check(name: str) -> CheckResult:
        runs.append(name)
        return PASS

    runner = _runner(
        sqs,
        CustomCheckSettings(
            "SC",
            checks=(
                CustomCheck("A", "C", lambda: check("A"), interval=timedelta(seconds=5)),
                CustomCheck("B", "C", lambda: check("B")),
            ),
        ),
    )

    runner.start()
    runner.run_periodic_checks()

    assert runs == ["A", "B", "A"]


def test_a_check_that_throws_reports_itself_failed_naming_the_wrapper_type() -> None:
    sqs = FakeSqs()
    runner = _runner(
        sqs,
        CustomCheckSettings(
            "SC", checks=(CustomCheck("Disk", "Storage", _broken, type_name="Ops.DiskCheck"),)
        ),
    )

    (attempt,) = runner.start()

    report = json.loads(attempt.message.body)
    assert report["HasFailed"] is True
    assert report["FailureReason"] == (
        "'NServiceBus.CustomChecks.CustomCheckWrapper`1[Ops.DiskCheck]' implementation for"
        " custom check 'Disk' in 'Storage' failed to run."
    )


def test_every_report_reuses_one_header_dictionary_which_the_wrapped_form_writes_into() -> None:
    """The backend builds its headers once; the SQS dispatcher's wrapped form adds a
    ``NServiceBus.MessageId`` header to them on the first send, so every later report carries
    the first one's id in its envelope (the receiver's message id) while each keeps its own
    ``NServiceBus.MessageId`` attribute."""
    sqs = FakeSqs()
    runner = _runner(
        sqs,
        CustomCheckSettings(
            "SC", checks=(CustomCheck("A", "C", lambda: PASS, interval=timedelta(seconds=5)),)
        ),
    )

    (first,) = runner.start()
    (second,) = runner.run_periodic_checks()

    entries = sent_to(sqs, "SC")
    header_ids = [envelope(entry)["Headers"]["NServiceBus.MessageId"] for entry in entries]
    attribute_ids = [
        e["MessageAttributes"]["NServiceBus.MessageId"]["StringValue"] for e in entries
    ]
    assert first.message.headers is second.message.headers
    assert header_ids[0] == header_ids[1]
    assert attribute_ids == [first.message.message_id, second.message.message_id]
    assert attribute_ids[0] != attribute_ids[1]


def test_an_endpoint_runs_every_check_at_start() -> None:
    sqs = FakeSqs()
    settings = EndpointSettings(
        disable_unrestricted_delayed_delivery=True,
        custom_checks=CustomCheckSettings(
            "Particular.ServiceControl",
            checks=(CustomCheck("Disk", "Storage", lambda: CheckResult.failed("full")),),
        ),
        clock=lambda: NOW,
    )

    ReleasedEndpoint("Sales", sqs, settings).start()

    (entry,) = sent_to(sqs, "Particular-ServiceControl")
    assert envelope(entry)["Headers"]["NServiceBus.EnclosedMessageTypes"] == (
        "ServiceControl.Plugin.CustomChecks.Messages.ReportCustomCheckResult"
    )
    assert envelope(entry)["Headers"]["NServiceBus.ReplyToAddress"] == "Sales"
