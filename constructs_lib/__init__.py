"""Importable CDK constructs for NServiceBus-style messaging across AWS accounts.

Everything a stack needs is exported here; :mod:`constructs_lib.defaults` holds every default
with its reason, :mod:`constructs_lib.queue_naming` the NServiceBus queue-name rules (and the
account bridge's shadow and ingress names), :mod:`constructs_lib.relay_roles` the bridge's
fixed relay role names.
"""

from typing import TYPE_CHECKING

from constructs_lib.account_bridge import (
    AccountBridge,
    BridgeAccount,
    BridgeIngress,
    BridgeShadow,
)
from constructs_lib.cross_account_queue_subscription import CrossAccountQueueSubscription
from constructs_lib.cross_account_relay import (
    CrossAccountRelay,
    MessageForm,
    ReceiverAddressing,
    RelayDirection,
    RelayMetric,
    RelayRoute,
)
from constructs_lib.delivery_log_bucket import DeliveryLogBucket
from constructs_lib.delivery_log_stream import DeliveryLogStream, LogFormat
from constructs_lib.delivery_logged_topic import (
    DeliveryLoggedTopic,
    DeliveryProtocol,
    IDeliveryLoggedTopic,
)
from constructs_lib.delivery_report_job import DeliveryReportJob
from constructs_lib.endpoint_queue import EndpointQueue, EndpointQueueEncryption, IEndpointQueue
from constructs_lib.filter_policy import FilterPolicyScope
from constructs_lib.message_body_bucket import MessageBodyBucket
from constructs_lib.messaging_alarms import MessagingAlarms
from constructs_lib.messaging_dashboard import MessagingDashboard
from constructs_lib.messaging_key import MessagingKey
from constructs_lib.queue_naming import (
    QueueNameError,
    delay_queue_name,
    endpoint_queue_name,
    ingress_queue_name,
    shadow_queue_name,
)
from constructs_lib.relay_role_guard import RelayRoleGuard
from constructs_lib.relay_roles import relay_role_arn, relay_role_name
from constructs_lib.relay_timing import RelayTiming
from constructs_lib.sns_https_endpoint import SnsHttpsEndpoint
from cross_account_runtime.delivery_policy.policy import (
    BackoffFunction,
    DeliveryPolicyError,
    HttpDeliveryPolicy,
)

if TYPE_CHECKING:
    from constructs_lib.messaging_checks import MessagingChecks


def __getattr__(name: str) -> object:
    """``MessagingChecks`` on first use: it needs cdk-nag (the ``gates`` extra), which the
    constructs do not."""
    if name == "MessagingChecks":
        from constructs_lib.messaging_checks import MessagingChecks  # noqa: PLC0415 (cdk-nag)

        return MessagingChecks
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "AccountBridge",
    "BackoffFunction",
    "BridgeAccount",
    "BridgeIngress",
    "BridgeShadow",
    "CrossAccountQueueSubscription",
    "CrossAccountRelay",
    "DeliveryLogBucket",
    "DeliveryLogStream",
    "DeliveryLoggedTopic",
    "DeliveryPolicyError",
    "DeliveryProtocol",
    "DeliveryReportJob",
    "EndpointQueue",
    "EndpointQueueEncryption",
    "FilterPolicyScope",
    "HttpDeliveryPolicy",
    "IDeliveryLoggedTopic",
    "IEndpointQueue",
    "LogFormat",
    "MessageBodyBucket",
    "MessageForm",
    "MessagingAlarms",
    "MessagingChecks",
    "MessagingDashboard",
    "MessagingKey",
    "QueueNameError",
    "ReceiverAddressing",
    "RelayDirection",
    "RelayMetric",
    "RelayRoleGuard",
    "RelayRoute",
    "RelayTiming",
    "SnsHttpsEndpoint",
    "delay_queue_name",
    "endpoint_queue_name",
    "ingress_queue_name",
    "relay_role_arn",
    "relay_role_name",
    "shadow_queue_name",
]
