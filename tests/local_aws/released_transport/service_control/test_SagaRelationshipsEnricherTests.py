# ruff: noqa: N802, N999 -- module and test names are the upstream test's, for traceability
"""ServiceControl 6.19.2 ``src/ServiceControl.Audit.UnitTests/SagaAudit/
SagaRelationshipsEnricherTests.cs`` (``src/ServiceControl.SagaAudit/InvokedSagasParser.cs``)."""

from __future__ import annotations

import uuid

import pytest

from local_aws.released_transport.service_control.audit import SagaInfo, invoked_sagas

SAGA = "51b5ad68-8ac4-46ee-a39c-a79900ca4ea8"
TWICE = f"ConsoleApp1.MySaga:{SAGA};ConsoleApp1.MySaga:{SAGA}"


@pytest.mark.parametrize(
    ("changes", "status"),
    [
        (f"{SAGA}:Updated;{SAGA}:New", "New"),
        (f"{SAGA}:New;{SAGA}:Updated", "New"),
        (f"{SAGA}:Completed;{SAGA}:Updated", "Completed"),
        (f"{SAGA}:New;{SAGA}:Completed", "Completed"),
        (f"{SAGA}:Completed;{SAGA}:New", "Completed"),
    ],
    ids=[
        "New_overrides_Updated_state",
        "Updated_does_not_override_new",
        "Updated_does_not_override_completed",
        "Completed_overrides_new",
        "New_does_not_override_completed",
    ],
)
def test_the_state_changes_of_one_saga(changes: str, status: str) -> None:
    metadata = invoked_sagas(
        {"NServiceBus.InvokedSagas": TWICE, "ServiceControl.SagaStateChange": changes}
    )

    assert metadata["InvokedSagas"] == [SagaInfo(uuid.UUID(SAGA), "ConsoleApp1.MySaga", status)]


def test_It_can_parse_malformed_headers_of_three_sagas() -> None:
    invoked = (
        "ConsoleApp1.MySaga2:9bc8ff00-9e10-41f6-8a56-a79a0060a762ConsoleApp1.MySaga2:"
        "9bc8ff00-9e10-41f6-8a56-a79a0060a762;ConsoleApp1.MySaga3:6f46e0e9-5476-4141-a1fd-"
        "a79a0060a782ConsoleApp1.MySaga2:9bc8ff00-9e10-41f6-8a56-a79a0060a762ConsoleApp1."
        "MySaga2:9bc8ff00-9e10-41f6-8a56-a79a0060a762;ConsoleApp1.MySaga3:6f46e0e9-5476-4141-"
        "a1fd-a79a0060a782;ConsoleApp1.MySaga:c0ed4546-ddce-42d7-9ce2-a79a0060a782"
    )
    changes = (
        "c0ed4546-ddce-42d7-9ce2-a79a0060a782:Updated;6f46e0e9-5476-4141-a1fd-a79a0060a782:New;"
        "9bc8ff00-9e10-41f6-8a56-a79a0060a762:Completed"
    )

    metadata = invoked_sagas(
        {"NServiceBus.InvokedSagas": invoked, "ServiceControl.SagaStateChange": changes}
    )

    assert len(metadata["InvokedSagas"]) == 3


def test_the_older_saga_headers_and_the_originating_saga() -> None:
    metadata = invoked_sagas(
        {
            "NServiceBus.SagaId": SAGA,
            "NServiceBus.SagaType": "Ns.MySaga, Asm",
            "NServiceBus.OriginatingSagaId": SAGA,
        }
    )

    assert metadata["InvokedSagas"] == [SagaInfo(uuid.UUID(SAGA), "Ns.MySaga")]
    assert metadata["OriginatesFromSaga"] == SagaInfo(uuid.UUID(SAGA), "Unknown")


@pytest.mark.parametrize(
    "headers",
    [
        {"NServiceBus.InvokedSagas": "Ns.MySaga:not-a-guid"},
        {"NServiceBus.InvokedSagas": "Ns.MySaga"},
        {"NServiceBus.InvokedSagas": f"Ns.MySaga:{SAGA}", "ServiceControl.SagaStateChange": ""},
    ],
)
def test_headers_it_cannot_read_fail_the_import(headers: dict[str, str | None]) -> None:
    with pytest.raises((ValueError, IndexError)):
        invoked_sagas(headers)
