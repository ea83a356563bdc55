"""The headers that hold a queue address, as NServiceBus, its SQS transport and ServiceControl
write and read them: the only headers the account bridge stamps and translates.

On SQS a transport address is the physical queue name (prefixed and sanitized), which a reader
resolves with ``GetQueueUrl`` in its own account. A header that names an endpoint, a machine or
a host only looks like one: rewriting ``NServiceBus.OriginatingEndpoint`` would make
ServiceControl list an endpoint by ARN, and rewriting ``NServiceBus.SubscriberEndpoint`` would
make a publisher store a second subscriber. ``docs/codec.md`` says where each header comes
from.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final

REPLY_TO_ADDRESS: Final = "NServiceBus.ReplyToAddress"
FAILED_Q: Final = "NServiceBus.FailedQ"
SUBSCRIBER_ADDRESS: Final = "NServiceBus.SubscriberAddress"
ORIGINATING_ADDRESS: Final = "NServiceBus.OriginatingAddress"
TARGET_ENDPOINT_ADDRESS: Final = "ServiceControl.TargetEndpointAddress"
RETRY_TO: Final = "ServiceControl.RetryTo"
RETRY_ACKNOWLEDGEMENT_QUEUE: Final = "ServiceControl.Retry.AcknowledgementQueue"
ROUTE_EXPIRED_TIMEOUT_TO: Final = "NServiceBus.Timeout.RouteExpiredTimeoutTo"

ADDRESS_HEADERS: Final = frozenset(
    {
        REPLY_TO_ADDRESS,
        FAILED_Q,
        SUBSCRIBER_ADDRESS,
        ORIGINATING_ADDRESS,
        TARGET_ENDPOINT_ADDRESS,
        RETRY_TO,
        RETRY_ACKNOWLEDGEMENT_QUEUE,
        ROUTE_EXPIRED_TIMEOUT_TO,
    }
)
"""Every header whose value is a transport address of the SQS world."""

ENDPOINT_NAME_HEADERS: Final = frozenset(
    {
        "NServiceBus.OriginatingEndpoint",
        "NServiceBus.ProcessingEndpoint",
        "NServiceBus.SubscriberEndpoint",
    }
)
"""Headers that carry an endpoint's name, never an address: never stamped or translated, even
where the name equals the endpoint's queue name."""
