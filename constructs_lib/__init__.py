"""Importable CDK constructs for messaging across AWS accounts."""

from constructs_lib.endpoint_queue import EndpointQueue, EndpointQueueEncryption
from constructs_lib.queue_naming import QueueNameError, endpoint_queue_name

__all__ = ["EndpointQueue", "EndpointQueueEncryption", "QueueNameError", "endpoint_queue_name"]
