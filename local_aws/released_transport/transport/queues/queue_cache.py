"""Queue URLs resolved by name, in the client's own account: ``QueueCache``.

The released transport never builds a queue URL and never names an account: a name goes through
the queue name generator and then ``GetQueueUrl(QueueName=...)`` of the endpoint's own client,
so it is looked up in that client's account and region. Results are cached per name as given
(before the generator). The cache holds the *task*, so a failed lookup stays failed for the
life of the endpoint: a queue created after the first failed send to it is not found until the
endpoint restarts. Queue ARNs are cached per URL the same way.

Facts: NServiceBus.AmazonSQS 9.1.1 ``src/NServiceBus.Transport.SQS/QueueCache.cs``; vectors in
``src/NServiceBus.Transport.SQS.Tests/QueueCacheTests.cs`` (``GetQueueUrl_caches``,
``GetQueueArn_caches``, ``SetQueueUrl_caches``).
"""

from __future__ import annotations

from typing import Any, Final

from local_aws.released_transport.transport.queues.naming import QueueNameGenerator
from local_aws.released_transport.transport.queues.sqs_errors import (
    as_queue_does_not_exist,
    is_queue_does_not_exist,
)

_QUEUE_ARN: Final = "QueueArn"


class QueueCache:
    """Physical names, URLs and ARNs of queues, each looked up once."""

    def __init__(self, sqs: Any, generator: QueueNameGenerator, prefix: str | None) -> None:
        self._sqs = sqs
        self._generator = generator
        self._prefix = prefix
        self._physical_names: dict[str, str] = {}
        self._urls: dict[str, str | BaseException] = {}
        self._arns: dict[str, str | BaseException] = {}

    def physical_queue_name(self, queue_name: str) -> str:
        """``GetPhysicalQueueName``: the generator's result, cached (a refusal is not)."""
        if queue_name not in self._physical_names:
            self._physical_names[queue_name] = self._generator(queue_name, self._prefix)
        return self._physical_names[queue_name]

    def set_queue_url(self, queue_name: str, queue_url: str) -> None:
        """``SetQueueUrl``: what the queue creator learned; the first value stays."""
        self._urls.setdefault(queue_name, queue_url)

    def queue_url(self, queue_name: str) -> str:
        """``GetQueueUrl``: ``GetQueueUrl(QueueName=physical name)`` in the client's account.

        A missing queue raises :class:`~local_aws.released_transport.transport.queues.sqs_errors.
        QueueDoesNotExistError` with the service's message; so does every later call for the
        same name.
        """
        if queue_name not in self._urls:
            try:
                physical = self.physical_queue_name(queue_name)
                response = self._sqs.get_queue_url(QueueName=physical)
                self._urls[queue_name] = str(response["QueueUrl"])
            except Exception as failure:
                self._urls[queue_name] = (
                    as_queue_does_not_exist(failure)
                    if is_queue_does_not_exist(failure)
                    else failure
                )
        cached = self._urls[queue_name]
        if isinstance(cached, BaseException):
            raise cached
        return cached

    def queue_arn(self, queue_url: str) -> str:
        """``GetQueueArn``: the ``QueueArn`` attribute of the queue at ``queue_url``."""
        if queue_url not in self._arns:
            try:
                response = self._sqs.get_queue_attributes(
                    QueueUrl=queue_url, AttributeNames=[_QUEUE_ARN]
                )
                self._arns[queue_url] = str(response["Attributes"][_QUEUE_ARN])
            except Exception as failure:
                self._arns[queue_url] = failure
        cached = self._arns[queue_url]
        if isinstance(cached, BaseException):
            raise cached
        return cached
