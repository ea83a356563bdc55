"""Importable CDK constructs for messaging across AWS accounts."""

from constructs_lib.delivery_log_bucket import DeliveryLogBucket
from constructs_lib.delivery_log_stream import DeliveryLogStream, LogFormat
from constructs_lib.delivery_logged_topic import (
    CrossAccountQueueSubscription,
    DeliveryLoggedTopic,
    DeliveryProtocol,
)
from constructs_lib.delivery_report_job import DeliveryReportJob
from constructs_lib.endpoint_queue import EndpointQueue, EndpointQueueEncryption
from constructs_lib.messaging_alarms import MessagingAlarms
from constructs_lib.queue_naming import QueueNameError, endpoint_queue_name
from constructs_lib.sns_https_endpoint import SnsHttpsEndpoint
from cross_account_runtime.delivery_policy.policy import (
    BackoffFunction,
    DeliveryPolicyError,
    HttpDeliveryPolicy,
)

__all__ = [
    "BackoffFunction",
    "CrossAccountQueueSubscription",
    "DeliveryLogBucket",
    "DeliveryLogStream",
    "DeliveryLoggedTopic",
    "DeliveryPolicyError",
    "DeliveryProtocol",
    "DeliveryReportJob",
    "EndpointQueue",
    "EndpointQueueEncryption",
    "HttpDeliveryPolicy",
    "LogFormat",
    "MessagingAlarms",
    "QueueNameError",
    "SnsHttpsEndpoint",
    "endpoint_queue_name",
]
