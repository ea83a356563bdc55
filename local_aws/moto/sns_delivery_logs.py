"""SNS delivery-status logging taught to moto: a topic's feedback attributes, and the records
of its SQS deliveries.

A topic logs a protocol's deliveries through the roles its feedback attributes name
(:mod:`local_aws.moto.delivery_status` writes the records and keeps the ledger). moto lacks:

- the records (``Subscription.publish`` in ``moto/sns/models.py`` delivers and keeps no
  outcome);
- the attributes from a template: its CloudFormation passes ``AWS::SNS::Topic``'s properties
  to ``SNSBackend.create_topic`` as attributes (``Topic.create_from_cloudformation_json``), so
  ``DeliveryStatusLogging`` lands on the topic as an unread ``delivery_status_logging`` list and
  no feedback attribute is set;
- their listing: its ``GetTopicAttributes`` (``SNSResponse.get_topic_attributes`` in
  ``moto/sns/responses.py``) lists a fixed set of attributes, so feedback attributes set through
  ``CreateTopic`` or ``SetTopicAttributes`` (stored on the topic,
  ``SNSBackend.set_topic_attribute``) never show.

:func:`register` teaches the three for SQS deliveries, which moto makes itself: a message the
queue received is a ``SUCCESS`` (status code 200, the ``providerResponse`` naming the queue's
own message id), a delivery SQS refused (the queue does not exist in the account its ARN names,
or refuses the message) is a ``FAILURE`` with SQS's error code, logged after its one attempt,
since SNS does not retry such client-side errors; the publish then still fails as moto makes it
fail. HTTP/S deliveries are made and logged by :mod:`local_aws.moto.sns_http_deliveries`. The
local AWS invokes no Lambda function, and moto delivers nothing to Firehose or
platform-application subscriptions, so those protocols log nothing here, although SNS would.

``python -m local_aws.moto.main`` calls :func:`register` before starting moto's server. The
wrapper of ``Subscription.publish`` only observes: it calls the method it finds and writes a
record for what happened (a message SQS accepted, or SQS's refusal), so it composes with any
other teaching that wraps the same method, before or after it, such as one that withholds a
delivery (nothing sent, nothing logged) or sends it to another account's queue.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
from collections.abc import Callable, Iterator
from typing import Any, cast

from moto.core.exceptions import ServiceException
from moto.core.utils import camelcase_to_underscores
from moto.moto_api._internal import mock_random
from moto.sns.models import Subscription, Topic
from moto.sns.responses import SNSResponse
from moto.sqs.models import SQSBackend

from local_aws.moto.delivery_status import (
    FAILURE,
    FEEDBACK_ATTRIBUTES,
    PROTOCOL_PREFIXES,
    SUCCESS,
    Outcome,
    attribute,
    count_delivery,
    log_delivery,
    published_ms,
)
from local_aws.moto.patching import replacing

SQS_SUCCESS_STATUS = 200
SQS_CLIENT_ERROR_STATUS = 400

_PATCHED = "_local_aws_sns_delivery_logs"

_sent_messages: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar(
    "local_aws_sns_delivery_sent", default=None
)
"""While a delivery runs: the ids of the SQS messages it sent (``SQSBackend.send_message``)."""


def _sqs_failure(error: ServiceException) -> Outcome:
    """SQS's refusal as SNS logs it (``sqsRequestId`` ``Unrecoverable``: not retried)."""
    body = {
        "ErrorCode": str(error.code),
        "ErrorMessage": str(error.message),
        "sqsRequestId": "Unrecoverable",
    }
    return Outcome(FAILURE, SQS_CLIENT_ERROR_STATUS, json.dumps(body, separators=(",", ":")))


def _sqs_success(sqs_message_id: str) -> Outcome:
    body = {"sqsRequestId": str(mock_random.uuid4()), "sqsMessageId": sqs_message_id}
    return Outcome(SUCCESS, SQS_SUCCESS_STATUS, json.dumps(body, separators=(",", ":")))


@contextlib.contextmanager
def _recording_sends() -> Iterator[list[str]]:
    sent: list[str] = []
    token = _sent_messages.set(sent)
    try:
        yield sent
    finally:
        _sent_messages.reset(token)


# What register patches ---------------------------------------------------------------------


def _apply_delivery_status_logging(topic: Topic, entries: Any) -> None:
    """``DeliveryStatusLogging`` entries as the topic's feedback attributes."""
    for entry in entries or []:
        prefix = PROTOCOL_PREFIXES.get(str(entry.get("Protocol", "")).lower())
        if prefix is None:
            continue
        for name in (
            "SuccessFeedbackRoleArn",
            "SuccessFeedbackSampleRate",
            "FailureFeedbackRoleArn",
        ):
            if name in entry:
                setattr(topic, camelcase_to_underscores(prefix + name), str(entry[name]))


def _patch_publish() -> None:
    original = Subscription.publish

    @replacing(Subscription, "publish", _PATCHED)
    def publish(
        self: Subscription, message: str, message_id: str, *args: Any, **kwargs: Any
    ) -> None:
        if self.protocol != "sqs":
            original(self, message, message_id, *args, **kwargs)
            return
        published = published_ms(message_id)
        with _recording_sends() as sent:
            try:
                original(self, message, message_id, *args, **kwargs)
            except ServiceException as error:
                failure = _sqs_failure(error)
                count_delivery(self, failure)
                log_delivery(self, message, message_id, failure, published)
                raise
        if sent:
            success = _sqs_success(sent[-1])
            count_delivery(self, success)
            log_delivery(self, message, message_id, success, published)


def _patch_send_message() -> None:
    original = SQSBackend.send_message

    @replacing(SQSBackend, "send_message", _PATCHED)
    def send_message(self: SQSBackend, *args: Any, **kwargs: Any) -> Any:
        sent = original(self, *args, **kwargs)
        recording = _sent_messages.get()
        if recording is not None:
            recording.append(sent.id)
        return sent


def _patch_topic_from_template() -> None:
    original = Topic.create_from_cloudformation_json
    # The class method's function, to call with the class CloudFormation calls it on.
    create: Callable[..., Topic] = cast(Any, original).__func__

    @replacing(Topic, "create_from_cloudformation_json", _PATCHED)
    def create_from_cloudformation_json(
        cls: type[Topic], resource_name: str, cloudformation_json: Any, *args: Any, **kwargs: Any
    ) -> Topic:
        topic: Topic = create(cls, resource_name, cloudformation_json, *args, **kwargs)
        properties = cloudformation_json.get("Properties", {})
        _apply_delivery_status_logging(topic, properties.get("DeliveryStatusLogging"))
        return topic


def _patch_get_topic_attributes() -> None:
    original = SNSResponse.get_topic_attributes

    @replacing(SNSResponse, "get_topic_attributes", _PATCHED)
    def get_topic_attributes(self: SNSResponse) -> Any:
        result = original(self)
        topic = self.backend.get_topic(self._get_param("TopicArn"))
        attributes: dict[str, Any] = cast(dict[str, Any], result.result)["Attributes"]
        for name in FEEDBACK_ATTRIBUTES:
            value = attribute(topic, name)
            if value is not None:
                attributes[name] = str(value)
        return result


def register() -> None:
    """Make moto's SNS log its SQS deliveries as SNS does, count them in the ledger, apply a template's
    ``DeliveryStatusLogging`` to the topic, and list the feedback attributes. Idempotent.

    ``Subscription.publish`` (through which ``Publish`` and ``PublishBatch`` deliver) is
    wrapped to record the outcome; ``SQSBackend.send_message`` (``moto/sqs/models.py``) to tell
    the delivery the id of the message the queue received; ``Topic.create_from_cloudformation_json``
    and ``SNSResponse.get_topic_attributes`` as said above. Each wrapper calls what it found.
    """
    _patch_send_message()
    _patch_publish()
    _patch_topic_from_template()
    _patch_get_topic_attributes()
