"""Who an endpoint is: its name, machine and host, as core writes them into headers.

``NServiceBus.OriginatingEndpoint`` and ``NServiceBus.ProcessingEndpoint`` carry the endpoint
*name* — never an address — and ``$.diagnostics.*`` the host. Core derives the host id from the
path of the starting program and the machine name (an MD5-based deterministic GUID); the model
derives it the same way from the Python program's path, with ServiceControl's form of the hash
(core may use its legacy variant, so the value itself is not claimed to match a .NET host's).

Facts: NServiceBus 10.2.5 ``src/NServiceBus.Core/Hosting/HostingComponent.Settings.cs``
(``ApplyHostIdDefaultIfNeeded``), ``Hosting/HostInformation.cs``,
``Hosting/AddHostInfoHeadersBehavior.cs``, ``Recoverability/RecoverabilityComponent.cs``.
"""

from __future__ import annotations

import socket
import sys
from dataclasses import dataclass
from pathlib import Path

from local_aws.released_transport.deterministic_guid import make_id


@dataclass(frozen=True)
class HostInformation:
    """The endpoint name and the host facts core writes into headers."""

    endpoint_name: str
    machine_name: str
    host_id: str
    """``HostId.ToString("N")``: 32 lowercase hex digits."""
    display_name: str

    @classmethod
    def of(cls, endpoint_name: str, machine_name: str | None = None) -> HostInformation:
        """Core's defaults: this machine's name, the host id from program path and machine,
        the machine name as display name."""
        machine = machine_name or socket.gethostname()
        program = str(Path(sys.argv[0]).resolve()) if sys.argv and sys.argv[0] else sys.executable
        return cls(endpoint_name, machine, make_id(program, machine).hex, machine)
