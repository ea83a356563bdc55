# ruff: noqa: N802, N999 -- module and test names are the upstream tests', for traceability
"""NServiceBus.Heartbeat 6.0.1 ``src/NServiceBus.Heartbeat.Tests/ServiceControlBackendTests.cs``
(the two approval files, byte for byte), ``AcceptanceTests/When_not_setting_ttl.cs`` and
``When_setting_explicit_ttl.cs``, and what ``HeartbeatSender`` and ``ServiceControlBackend``
hand the SQS dispatcher, on the test doubles."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from local_aws.released_transport.core.host import HostInformation
from local_aws.released_transport.endpoint.released_endpoint import (
    PluginNotConfiguredError,
    ReleasedEndpoint,
)
from local_aws.released_transport.endpoint.settings import EndpointSettings
from local_aws.released_transport.plugins.heartbeats import (
    HeartbeatSender,
    HeartbeatSettings,
    HeartbeatSettingsError,
    endpoint_heartbeat_body,
    register_endpoint_startup_body,
)
from local_aws.released_transport.transport.queues.naming import get_sqs_queue_name
from local_aws.released_transport.transport.queues.queue_cache import QueueCache
from local_aws.released_transport.transport.sending.dispatcher import MessageDispatcher
from tests.local_aws.released_transport.fake_sqs import FakeSqs, client_error
from tests.local_aws.released_transport.fake_wire import envelope, sent_to

APPROVALS = Path(__file__).parent / "approvals"
EMPTY_GUID = "00000000-0000-0000-0000-000000000000"
NOW = datetime(2024, 5, 6, 7, 8, 9, 123456, tzinfo=UTC)
HOST = HostInformation(
    "Sales", "MACHINE", "1865830e71b0dc6ce14662cdd0034e6e", "Display", {"Machine": "MACHINE"}
)


def _approved(test_name: str) -> bytes:
    return (APPROVALS / f"ServiceControlBackendTests.{test_name}.approved.txt").read_bytes()


def test_It_can_serialize_EndpointHeartbeat() -> None:
    body = endpoint_heartbeat_body(
        datetime(2016, 2, 1, 13, 59, tzinfo=UTC), "My.Endpoint", EMPTY_GUID, "Host"
    )

    assert body == _approved("It_can_serialize_EndpointHeartbeat")


def test_It_can_serialize_RegisterEndpointStartup() -> None:
    body = register_endpoint_startup_body(
        host_id=EMPTY_GUID,
        endpoint="My.Endpoint",
        started_at=datetime(2016, 2, 1, 13, 59, tzinfo=UTC),
        host_properties={"key1": "value1", "key2": "value2"},
        host_display_name="Display name :-)",
        host="Host",
    )

    assert body == _approved("It_can_serialize_RegisterEndpointStartup")


def _sender(
    sqs: FakeSqs, settings: HeartbeatSettings, clock: list[datetime] | None = None
) -> HeartbeatSender:
    moments = clock or [NOW]
    dispatcher = MessageDispatcher(sqs, QueueCache(sqs, get_sqs_queue_name, "DEV-"))
    return HeartbeatSender(dispatcher, HOST, "DEV-Sales", settings, lambda: moments[-1])


def test_Should_use_four_times_the_interval_value_for_ttl() -> None:
    """``When_not_setting_ttl``: 40 s with the default 10 s frequency; the wrapped form carries
    it as the transport's time-to-be-received header."""
    sqs = FakeSqs()

    _sender(sqs, HeartbeatSettings("Particular.ServiceControl")).send_heartbeat()

    (entry,) = sent_to(sqs, "DEV-Particular-ServiceControl")
    assert envelope(entry)["Headers"]["NServiceBus.AmazonSQS.TimeToBeReceived"] == "00:00:40"


@pytest.mark.parametrize(
    ("settings", "ttbr"),
    [
        (HeartbeatSettings("SC", frequency=timedelta(seconds=30)), "00:02:00"),
        (HeartbeatSettings("SC", time_to_live=timedelta(minutes=5)), "00:05:00"),
        (HeartbeatSettings("SC", time_to_live=timedelta(0)), "00:00:00"),
    ],
)
def test_an_explicit_ttl_wins_over_four_frequencies(settings: HeartbeatSettings, ttbr: str) -> None:
    sqs = FakeSqs()

    _sender(sqs, settings).send_heartbeat()

    (entry,) = sent_to(sqs, "DEV-SC")
    assert envelope(entry)["Headers"]["NServiceBus.AmazonSQS.TimeToBeReceived"] == ttbr


def test_a_heartbeat_is_sent_straight_to_the_dispatcher_with_the_plugins_headers_only() -> None:
    sqs = FakeSqs()

    attempt = _sender(sqs, HeartbeatSettings("Particular.ServiceControl")).send_heartbeat()

    (entry,) = sent_to(sqs, "DEV-Particular-ServiceControl")
    wrapped = envelope(entry)
    assert wrapped["Headers"] == {
        "NServiceBus.EnclosedMessageTypes": (
            "ServiceControl.Plugin.Heartbeat.Messages.EndpointHeartbeat"
        ),
        "NServiceBus.ContentType": "application/json",
        "NServiceBus.MessageIntent": "Send",
        "NServiceBus.ReplyToAddress": "DEV-Sales",
        "NServiceBus.MessageId": wrapped["Headers"]["NServiceBus.MessageId"],
        "NServiceBus.AmazonSQS.TimeToBeReceived": "00:00:40",
    }
    assert wrapped["Headers"]["NServiceBus.MessageId"] != attempt.message.message_id
    assert entry["MessageAttributes"]["NServiceBus.MessageId"]["StringValue"] == (
        attempt.message.message_id
    )
    assert attempt.message.body == (
        b'{"ExecutedAt":"2024-05-06T07:08:09.123456Z","EndpointName":"Sales",'
        b'"HostId":"1865830e-71b0-dc6c-e146-62cdd0034e6e","Host":"Display"}'
    )


def test_a_failed_registration_is_retried_once_a_minute_later_with_its_start_time() -> None:
    sqs = FakeSqs()
    sqs.failures["send_message_batch"] = client_error("InternalError", "try again", 500)
    clock = [NOW]
    sender = _sender(sqs, HeartbeatSettings("SC"), clock)

    first = sender.start()
    clock.append(NOW + timedelta(minutes=1))
    del sqs.failures["send_message_batch"]
    retried = sender.retry_registration()

    assert first.failure is not None
    assert sender.registration_retry_due is None
    assert retried.sent
    assert b'"StartedAt":"2024-05-06T07:08:09.123456Z"' in retried.message.body
    assert b'"HostProperties":{"Machine":"MACHINE"}' in retried.message.body
    with pytest.raises(RuntimeError, match="no failed registration"):
        sender.retry_registration()


def test_a_queue_that_is_not_found_is_looked_up_once_and_remembered() -> None:
    """The queue cache keeps the failed look-up: a queue created later is not found until the
    endpoint restarts, so every heartbeat fails (and is only logged) — and so does the
    registration's one retry when the queue was missing at start."""
    sqs = FakeSqs()
    sqs.missing_queues.add("DEV-SC")
    sender = _sender(sqs, HeartbeatSettings("SC"))

    attempts = [sender.send_heartbeat() for _ in range(2)]
    sqs.missing_queues.clear()
    attempts.append(sender.send_heartbeat())

    assert all(not attempt.sent for attempt in attempts)
    assert len(sqs.calls("get_queue_url")) == 1


def test_the_endpoint_registers_at_start_and_steps_its_heartbeats() -> None:
    sqs = FakeSqs()
    settings = EndpointSettings(
        disable_unrestricted_delayed_delivery=True,
        machine_name="MACHINE",
        heartbeats=HeartbeatSettings("Particular.ServiceControl"),
        clock=lambda: NOW,
    )
    sales = ReleasedEndpoint("Sales", sqs, settings)

    with pytest.raises(PluginNotConfiguredError, match="has not been started"):
        sales.send_heartbeat()
    sales.start()
    sales.send_heartbeat()

    registration, heartbeat = sent_to(sqs, "Particular-ServiceControl")
    assert envelope(registration)["Headers"]["NServiceBus.EnclosedMessageTypes"] == (
        "ServiceControl.Plugin.Heartbeat.Messages.RegisterEndpointStartup"
    )
    assert envelope(heartbeat)["Headers"]["NServiceBus.EnclosedMessageTypes"] == (
        "ServiceControl.Plugin.Heartbeat.Messages.EndpointHeartbeat"
    )
    with pytest.raises(PluginNotConfiguredError, match=r"EndpointSettings\.metrics"):
        sales.report_metrics()


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"service_control_queue": " "}, "service_control_queue"),
        ({"service_control_queue": "SC", "frequency": timedelta(seconds=-1)}, "frequency"),
    ],
)
def test_the_settings_refuse_what_the_plugin_refuses(
    arguments: dict[str, object], field: str
) -> None:
    with pytest.raises(HeartbeatSettingsError, match=f"HeartbeatSettings.{field}"):
        HeartbeatSettings(**arguments)  # type: ignore[arg-type]
