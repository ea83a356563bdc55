# ruff: noqa: N802, N999 -- module and test names are the upstream tests', for traceability
"""NServiceBus 10.2.5 ``src/NServiceBus.Core.Tests/Hosting/PathUtilities_Tests.cs``, then the
default host id core derives from the sanitized path and the machine name
(``HostingComponent.Settings.ApplyHostIdDefaultIfNeeded``)."""

from __future__ import annotations

import pytest

from local_aws.released_transport.core.host import HostInformation, sanitized_path
from local_aws.released_transport.dotnet.deterministic_guid import make_id


def test_Parse_from_path_without_spaces_but_with_quotes() -> None:
    assert sanitized_path('"pathto\\my.exe" somevar') == "pathto\\my.exe"


def test_Parse_from_path_without_spaces_but_without_quotes() -> None:
    assert sanitized_path("pathto\\my.exe somevar") == "pathto\\my.exe"


def test_Paths_without_spaces_are_equal() -> None:
    assert sanitized_path('"pathto\\my.exe" somevar') == sanitized_path("pathto\\my.exe somevar")


def test_Parse_from_path_with_spaces_having_a_parameter_with_spaces() -> None:
    path = sanitized_path('"pathto\\mysuper duper.exe" "somevar with spaces"')
    assert path == "pathto\\mysuper duper.exe"


def test_Parse_from_path_with_spaces_having_a_parameter_without_spaces() -> None:
    assert sanitized_path('"pathto\\mysuper duper.exe" somevar') == "pathto\\mysuper duper.exe"


def test_Both_paths_with_spaces_are_equal() -> None:
    assert sanitized_path('"pathto\\mysuper duper.exe" "somevar with spaces"') == sanitized_path(
        '"pathto\\mysuper duper.exe" somevar'
    )


def test_an_unclosed_quote_is_refused_as_upstream_refuses_it() -> None:
    with pytest.raises(ValueError, match="The provided path is in an invalid format"):
        sanitized_path('"pathto\\my.exe somevar')


def test_endpoints_started_from_their_own_directories_get_host_ids_of_their_own() -> None:
    """Separate processes on one machine: the program path differs, so does the host id; the
    same program started again keeps its id, whatever its arguments."""
    sales = HostInformation.of("Sales", "vm", "/opt/endpoints/Sales/Sales --verbose")
    billing = HostInformation.of("Billing", "vm", "/opt/endpoints/Billing/Billing")
    again = HostInformation.of("Sales", "vm", "/opt/endpoints/Sales/Sales")
    assert sales.host_id != billing.host_id
    assert sales.host_id == again.host_id == make_id("/opt/endpoints/Sales/Sales", "vm").hex
    assert sales.properties["PathToExecutable"] == "/opt/endpoints/Sales/Sales"
    assert (sales.display_name, sales.machine_name) == ("vm", "vm")


def test_without_a_command_line_endpoints_of_one_process_share_its_host_id() -> None:
    """All endpoints hosted in one process (the model's default: this Python program) are one
    host, as upstream's would be."""
    assert HostInformation.of("Sales", "vm").host_id == HostInformation.of("Billing", "vm").host_id
