"""Deterministic GUIDs as ServiceControl derives them.

ServiceControl names a failed message by ``DeterministicGuid.MakeId(messageId,
processingEndpoint)``: the MD5 hash of the UTF-8 text of both strings concatenated, read as a
.NET ``Guid`` (whose first three fields are little-endian). That id travels as
``ServiceControl.Retry.UniqueMessageId`` on a retry and comes back in the endpoint's
acknowledgement, so the model must compute the same one.

Facts: ServiceControl 6.19.2 ``src/ServiceControl/Infrastructure/DeterministicGuid.cs`` and
``src/ServiceControl/Infrastructure/TransportMessageExtensions.cs`` (``UniqueId``).
"""

from __future__ import annotations

import hashlib
import uuid


def make_id(*parts: str) -> uuid.UUID:
    """``DeterministicGuid.MakeId(data1, data2, …)``."""
    digest = hashlib.md5("".join(parts).encode("utf-8"), usedforsecurity=False).digest()
    return uuid.UUID(bytes_le=digest)
