"""``Guid.Parse``: how ServiceControl reads the host ids in the headers it gets.

ServiceControl's audit ingestion parses ``$.diagnostics.originating.hostid`` and
``$.diagnostics.hostid`` with ``Guid.Parse`` (``src/ServiceControl.Audit/Monitoring/
EndpointDetailsParser.cs``), and the saga headers' ids likewise (``src/ServiceControl.SagaAudit/
InvokedSagasParser.cs``); a value it refuses fails the import of the message. Core writes host
ids in the ``N`` form (32 hex digits); ``Guid.Parse`` also takes ``D`` (hyphens), ``B``
(braces) and ``P`` (parentheses), with white space around. The ``X`` form (hex groups in braces)
is not modelled: nothing on the platform writes it.

Facts: Microsoft's documentation of ``Guid.Parse``; core 10.2.5
``src/NServiceBus.Core/Hosting/AuditHostInformationBehavior.cs`` (``HostId.ToString("N")``).
"""

from __future__ import annotations

import re
import uuid
from typing import Final

EMPTY_GUID: Final = uuid.UUID(int=0)
"""``Guid.Empty``."""

_FORMS: Final = (
    re.compile("(?P<hex>[0-9a-fA-F]{32})"),
    re.compile(
        "(?P<hex>[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})"
    ),
    re.compile(
        r"\{(?P<hex>[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})\}"
    ),
    re.compile(
        r"\((?P<hex>[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})\)"
    ),
)
GUID_FORMAT_ERROR: Final = "Unrecognized Guid format."


class GuidFormatError(ValueError):
    """``Guid.Parse`` refused the text (``FormatException``)."""


def parse_guid(text: str) -> uuid.UUID:
    """``Guid.Parse``: the ``N``, ``D``, ``B`` or ``P`` form, white space around allowed."""
    stripped = text.strip()
    for form in _FORMS:
        match = form.fullmatch(stripped)
        if match:
            return uuid.UUID(match.group("hex").replace("-", ""))
    raise GuidFormatError(GUID_FORMAT_ERROR)
