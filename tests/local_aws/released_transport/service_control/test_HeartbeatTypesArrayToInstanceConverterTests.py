# ruff: noqa: N802, N999 -- module and test names are the upstream test's, for traceability
"""ServiceControl 6.19.2 ``src/ServiceControl.UnitTests/Monitoring/
HeartbeatTypesArrayToInstanceConverterTests.cs`` (the heartbeat and registration vectors; the
``RegisterPotentiallyMissingHeartbeats`` ones concern a message no plugin sends), plus how the
contracts bind what the plugins send (``src/ServiceControl/.../InternalMessages/``)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from local_aws.released_transport.core.recoverability import MessageDeserializationError
from local_aws.released_transport.plugins.heartbeats import (
    endpoint_heartbeat_body,
    register_endpoint_startup_body,
)
from local_aws.released_transport.service_control.messages import (
    ContractError,
    EndpointHeartbeat,
    read_endpoint_heartbeat,
    read_register_endpoint_startup,
    read_report_custom_check_result,
)

HEARTBEAT = """
    {
        "$type": "ServiceControl.Plugin.Heartbeat.Messages.EndpointHeartbeat, ServiceControl",
        "ExecutedAt": "2024-06-02T12:03:41.780",
        "EndpointName": "Test",
        "HostId": "1865830e-71b0-dc6c-e146-62cdd0034e6e",
        "Host": "Machine"
    }
"""
STARTUP = """
    {
        "HostId": "3fa85f64-5717-4562-b3fc-2c963f66afa6",
        "Endpoint": "SampleEndpoint",
        "StartedAt": "2022-12-01T12:00:00Z",
        "HostProperties": {
            "Property1": "Value1",
            "Property2": "Value2"
        },
        "HostDisplayName": "SampleHostDisplayName",
        "Host": "SampleHost"
    }
"""


@pytest.mark.parametrize("body", [f"[{HEARTBEAT}]", HEARTBEAT])
def test_Should_deserialize_heartbeat_arrays_and_single_heartbeats(body: str) -> None:
    assert read_endpoint_heartbeat(body.encode()) == EndpointHeartbeat(
        datetime(2024, 6, 2, 12, 3, 41, 780000, tzinfo=UTC),
        "Test",
        "1865830e-71b0-dc6c-e146-62cdd0034e6e",
        "Machine",
    )


@pytest.mark.parametrize("body", [f"[{STARTUP}]", STARTUP])
def test_Should_deserialize_register_endpoint_startup_arrays_and_single_ones(body: str) -> None:
    startup = read_register_endpoint_startup(body.encode())

    assert startup.host_id == "3fa85f64-5717-4562-b3fc-2c963f66afa6"
    assert startup.endpoint == "SampleEndpoint"
    assert startup.started_at == datetime(2022, 12, 1, 12, tzinfo=UTC)
    assert startup.host_display_name == "SampleHostDisplayName"
    assert startup.host == "SampleHost"
    assert startup.host_properties == {"Property1": "Value1", "Property2": "Value2"}


def test_what_the_plugin_sends_is_read_back() -> None:
    moment = datetime(2024, 5, 6, 7, 8, 9, 123456, tzinfo=UTC)
    guid = "1865830e-71b0-dc6c-e146-62cdd0034e6e"

    heartbeat = read_endpoint_heartbeat(endpoint_heartbeat_body(moment, "Sales", guid, "Host"))
    startup = read_register_endpoint_startup(
        register_endpoint_startup_body(
            host_id=guid,
            endpoint="Sales",
            started_at=moment,
            host_properties={"Machine": "m"},
            host_display_name="Host",
            host="Host",
        )
    )

    assert heartbeat == EndpointHeartbeat(moment, "Sales", guid, "Host")
    assert (startup.endpoint, startup.started_at) == ("Sales", moment)


def test_missing_properties_keep_their_defaults() -> None:
    heartbeat = read_endpoint_heartbeat(b"{}")

    assert heartbeat.executed_at == datetime(1, 1, 1, tzinfo=UTC)
    assert heartbeat.host_id == "00000000-0000-0000-0000-000000000000"
    assert heartbeat.endpoint_name is None


@pytest.mark.parametrize(
    "body",
    [
        b"[]",
        b"[{}, {}]",
        b"[1]",
        b'{"ExecutedAt": null}',
        b'{"HostId": "1865830e71b0dc6ce14662cdd0034e6e"}',
        b'{"EndpointName": 3}',
        b"not json",
        b"\xff",
        b"null",
    ],
)
def test_what_the_contract_cannot_bind_is_a_deserialization_failure(body: bytes) -> None:
    with pytest.raises(ContractError):
        read_endpoint_heartbeat(body)


def test_a_deserialization_failure_is_unrecoverable() -> None:
    assert issubclass(ContractError, MessageDeserializationError)
    with pytest.raises(ContractError):
        read_report_custom_check_result(b'{"HasFailed": "yes"}')
