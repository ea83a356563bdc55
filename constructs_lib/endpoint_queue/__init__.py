"""``EndpointQueue``: an endpoint's input queue, its DLQ, its key and its cross-account policy.

Secure by default, in the manner of AWS Solutions Constructs: a customer-managed KMS key with
rotation (the AWS-managed ``alias/aws/sqs`` key cannot be used by other accounts or by SNS),
TLS-only queue policies, a dead-letter queue that only this queue may redrive into, and a queue
policy that grants the declared senders exactly what sending needs and nothing else.

Split as aws-cdk-lib splits ``aws-sqs``: :mod:`.queue_base` (what the other constructs take),
:mod:`.queue` (the construct), :mod:`.imported` (the queues that exist already) and
:mod:`.validate_keywords` (the checks of its keywords).
"""

from constructs_lib.endpoint_queue.queue import EndpointQueue
from constructs_lib.endpoint_queue.queue_base import EndpointQueueEncryption, IEndpointQueue

__all__ = ["EndpointQueue", "EndpointQueueEncryption", "IEndpointQueue"]
