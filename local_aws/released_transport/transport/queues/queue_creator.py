"""What the transport's installers create (``EnableInstallers()``): ``QueueCreator``.

For each sending address (the error queue) a standard queue; for each receive address a standard
queue and, unless unrestricted delayed delivery is disabled, ``{address}-delay.fifo`` with
``FifoQueue=true`` and ``DelaySeconds=900``. Names go through the generator. The retention is set
in a second call (``MaxTimeToLive``, 4 days by default, for the queues; 4 days for the delay
queue) because ``CreateQueue`` on an existing queue with different attributes fails. The URLs
are put into the queue cache, so no ``GetQueueUrl`` follows. No redrive policy and no
visibility timeout are ever set.

With S3 settings, every queue created is followed by the bucket: created when ``ListBuckets`` of
the endpoint's account has no bucket of that name (compared ignoring case), and given — unless a
rule ``NServiceBus.SQS.DeleteMessageBodies`` is there already — a lifecycle configuration of that
one rule: objects under the key prefix expire after ``ceil(MaxTimeToLive in days)`` days. That
*replaces* the bucket's lifecycle configuration, other rules included. A bucket without any
lifecycle configuration reads as one without rules (the SDK answers an empty configuration where
the service answers ``NoSuchLifecycleConfiguration``). Outside ``us-east-1`` the bucket is created
in the client's region, as the .NET SDK does. Both writes are retried on ``409
OperationAborted``, five tries, 2 s times the try number apart.

Facts: NServiceBus.AmazonSQS 9.1.1 ``src/NServiceBus.Transport.SQS/Administration/
QueueCreator.cs``, ``Configure/SqsTransport.cs`` (``Initialize``: sending addresses then
receivers; ``MaxTimeToLive``), ``Extensions/AmazonServiceExtensions.cs`` (``RetryConflictsAsync``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any, Final

from botocore.exceptions import ClientError

from local_aws.released_transport.headers import (
    AWS_MAXIMUM_QUEUE_DELAY_SECONDS,
    DELAYED_DELIVERY_QUEUE_RETENTION_SECONDS,
)
from local_aws.released_transport.transport.queues.naming import delay_queue_name
from local_aws.released_transport.transport.queues.queue_cache import QueueCache
from local_aws.released_transport.transport.queues.sqs_errors import error_code
from local_aws.released_transport.transport.s3_settings import S3Settings

DEFAULT_MAX_TIME_TO_LIVE_SECONDS: Final = DELAYED_DELIVERY_QUEUE_RETENTION_SECONDS
"""``SqsTransport.MaxTimeToLive``'s default, 4 days."""
LIFECYCLE_RULE_ID: Final = "NServiceBus.SQS.DeleteMessageBodies"
_NO_LIFECYCLE_CONFIGURATION: Final = "NoSuchLifecycleConfiguration"
_US_EAST_1: Final = "us-east-1"
_SECONDS_PER_DAY: Final = 86_400
_CONFLICT_STATUS: Final = 409
_OPERATION_ABORTED: Final = "OperationAborted"
_CONFLICT_TRIES: Final = 5
_CONFLICT_SLEEP_SECONDS: Final = 2.0


def retry_conflicts(action: Callable[[], object], sleep: Callable[[float], None]) -> None:
    """``RetryConflictsAsync``: ``action`` again after 2 s times the try number while the service
    answers ``409 OperationAborted``, at most five tries in all."""
    tries = 0
    while True:
        tries += 1
        try:
            action()
            return
        except ClientError as conflict:
            status = conflict.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
            aborted = error_code(conflict) == _OPERATION_ABORTED
            if status != _CONFLICT_STATUS or not aborted or tries >= _CONFLICT_TRIES:
                raise
            sleep(_CONFLICT_SLEEP_SECONDS * tries)


class QueueCreator:
    """Creates the queues of one endpoint through its own client."""

    def __init__(
        self,
        sqs: Any,
        queue_cache: QueueCache,
        *,
        max_time_to_live_seconds: int = DEFAULT_MAX_TIME_TO_LIVE_SECONDS,
        queue_delay_seconds: int = AWS_MAXIMUM_QUEUE_DELAY_SECONDS,
        s3: S3Settings | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._sqs = sqs
        self._queue_cache = queue_cache
        self._max_time_to_live_seconds = max_time_to_live_seconds
        self._queue_delay_seconds = queue_delay_seconds
        self._s3 = s3
        self._sleep = sleep

    def create_queue_if_necessary(self, address: str, *, create_delay_queue: bool) -> None:
        """``CreateQueueIfNecessary``."""
        self._create(address, {}, self._max_time_to_live_seconds)
        if create_delay_queue:
            self._create(
                delay_queue_name(address),
                {"FifoQueue": "true", "DelaySeconds": str(self._queue_delay_seconds)},
                DELAYED_DELIVERY_QUEUE_RETENTION_SECONDS,
            )
        if self._s3 is not None:
            self._create_bucket_if_necessary(self._s3)

    def _create_bucket_if_necessary(self, s3: S3Settings) -> None:
        """The bucket, then its lifecycle rule."""
        buckets = s3.s3.list_buckets().get("Buckets") or []
        wanted = s3.bucket_name.casefold()
        if not any(str(bucket.get("Name", "")).casefold() == wanted for bucket in buckets):
            request: dict[str, Any] = {"Bucket": s3.bucket_name}
            region = s3.s3.meta.region_name
            if region != _US_EAST_1:
                request["CreateBucketConfiguration"] = {"LocationConstraint": region}
            retry_conflicts(lambda: s3.s3.create_bucket(**request), self._sleep)
        if all(rule.get("ID") != LIFECYCLE_RULE_ID for rule in self._lifecycle_rules(s3)):
            days = math.ceil(self._max_time_to_live_seconds / _SECONDS_PER_DAY)
            rule = {
                "ID": LIFECYCLE_RULE_ID,
                "Filter": {"Prefix": s3.key_prefix},
                "Status": "Enabled",
                "Expiration": {"Days": days},
            }
            retry_conflicts(
                lambda: s3.s3.put_bucket_lifecycle_configuration(
                    Bucket=s3.bucket_name, LifecycleConfiguration={"Rules": [rule]}
                ),
                self._sleep,
            )

    @staticmethod
    def _lifecycle_rules(s3: S3Settings) -> list[dict[str, Any]]:
        """``GetLifecycleConfiguration``'s rules; none for a bucket without a configuration."""
        try:
            response = s3.s3.get_bucket_lifecycle_configuration(Bucket=s3.bucket_name)
        except ClientError as missing:
            if error_code(missing) == _NO_LIFECYCLE_CONFIGURATION:
                return []
            raise
        return list(response.get("Rules") or [])

    def _create(self, queue_name: str, attributes: dict[str, str], retention_seconds: int) -> None:
        request: dict[str, Any] = {"QueueName": self._queue_cache.physical_queue_name(queue_name)}
        if attributes:
            request["Attributes"] = attributes
        url = str(self._sqs.create_queue(**request)["QueueUrl"])
        self._queue_cache.set_queue_url(queue_name, url)
        self._sqs.set_queue_attributes(
            QueueUrl=url, Attributes={"MessageRetentionPeriod": str(retention_seconds)}
        )
