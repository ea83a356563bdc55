"""What every ServiceControl instance's transport is configured with, whichever instance it is.

The primary, audit and monitoring instances each run the released transport with settings read
the same way: ``TransportSettings`` (``MaxConcurrency``) and the SQS connection string
(``QueueNamePrefix``, ``DoNotWrapOutgoingMessages``, ``S3BucketForLargeMessages`` and
``S3KeyPrefix``); each instance then adds its own queues. The model's receive long-poll and
clock are settings too, so tests step every instance alike.

Facts: ServiceControl 6.19.2 ``src/ServiceControl.Transports/TransportSettings.cs``,
``src/ServiceControl.Transports.SQS/SQSTransportCustomization.cs``.
"""

from __future__ import annotations

from dataclasses import dataclass

from local_aws.released_transport.dotnet_time import Clock, system_clock
from local_aws.released_transport.input_pump import DEFAULT_WAIT_TIME_SECONDS
from local_aws.released_transport.s3_settings import S3Settings


@dataclass(frozen=True, kw_only=True)
class InstanceTransportSettings:
    """An instance's transport settings (the instances' own settings extend it)."""

    queue_name_prefix: str | None = None
    wrap_outgoing_messages: bool = True
    max_concurrency: int | None = None
    wait_time_seconds: int = DEFAULT_WAIT_TIME_SECONDS
    s3: S3Settings | None = None
    """``S3BucketForLargeMessages`` and ``S3KeyPrefix``: bodies over SQS's limit are read from
    and written to that bucket, as any endpoint's with ``transport.S3``."""
    clock: Clock = system_clock
