"""Who an endpoint is: its name, machine and host, as core writes them into headers.

``NServiceBus.OriginatingEndpoint`` and ``NServiceBus.ProcessingEndpoint`` carry the endpoint
*name* — never an address — and ``$.diagnostics.*`` the host. Core derives the default host id
from the path of the starting program — ``PathUtilities.SanitizedPath(Environment.CommandLine)``:
the command line's first token, unquoted — and the machine name (an MD5-based deterministic
GUID). Endpoints that run as processes of their own, each from its own directory, therefore get
host ids of their own even on one machine, and ServicePulse shows each as an instance of its
own; the same program restarted keeps its id. The model derives the id the same way from the
command line an endpoint is given (:attr:`EndpointSettings.command_line
<local_aws.released_transport.endpoint.settings.EndpointSettings.command_line>`), else from this
Python program's path, with ServiceControl's form of the hash (core may use its legacy variant,
so the value itself is not claimed to match a .NET host's).
The host's properties — ``Machine``, ``ProcessID``, ``UserName``, ``PathToExecutable`` — travel
only in the heartbeat plugin's start-up registration.

Facts: NServiceBus 10.2.5 ``src/NServiceBus.Core/Hosting/HostingComponent.Settings.cs``
(``ApplyHostIdDefaultIfNeeded``, the default properties), ``Hosting/HostInformation.cs``,
``Hosting/AddHostInfoHeadersBehavior.cs``, ``Recoverability/RecoverabilityComponent.cs``,
``Utils/PathUtilities.cs``; vectors in
``src/NServiceBus.Core.Tests/Hosting/PathUtilities_Tests.cs``.
"""

from __future__ import annotations

import getpass
import os
import socket
import sys
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from local_aws.released_transport.dotnet.deterministic_guid import make_id


@dataclass(frozen=True)
class HostInformation:
    """The endpoint name and the host facts core writes into headers."""

    endpoint_name: str
    machine_name: str
    host_id: str
    """``HostId.ToString("N")``: 32 lowercase hex digits."""
    display_name: str
    properties: Mapping[str, str] = field(default_factory=dict, compare=False, hash=False)
    """``HostInformation.Properties``, in core's order."""

    @property
    def host_guid(self) -> str:
        """``HostId.ToString()`` (the ``D`` form), as a message body's ``Guid`` is written."""
        return str(uuid.UUID(hex=self.host_id))

    @classmethod
    def of(
        cls,
        endpoint_name: str,
        machine_name: str | None = None,
        command_line: str | None = None,
    ) -> HostInformation:
        """Core's defaults: this machine's name, the host id from the starting program's path
        (the first token of ``command_line``, the endpoint process's ``Environment.CommandLine``;
        without one, this Python program's path) and the machine, the machine name as display
        name, and the four default properties."""
        machine = machine_name or socket.gethostname()
        program = (
            sanitized_path(command_line)
            if command_line is not None
            else str(Path(sys.argv[0]).resolve())
            if sys.argv and sys.argv[0]
            else sys.executable
        )
        properties = {
            "Machine": machine,
            "ProcessID": str(os.getpid()),
            "UserName": _user_name(),
            "PathToExecutable": program,
        }
        return cls(endpoint_name, machine, make_id(program, machine).hex, machine, properties)


def sanitized_path(command_line: str) -> str:
    """``PathUtilities.SanitizedPath``: the program of a command line — up to the closing quote
    when it starts with one (a path with spaces), else up to the first space."""
    if command_line.startswith('"'):
        closing = command_line.find('"', 1)
        if closing == -1:
            raise ValueError("The provided path is in an invalid format")
        return command_line[1:closing]
    return command_line.split(" ", 1)[0]


def _user_name() -> str:
    """``Environment.UserName``: the login name, empty where the process has none."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return ""
