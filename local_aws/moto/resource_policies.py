"""Resource policies from CloudFormation, stored on their queues, topics and buckets, never
enforced.

moto's CloudFormation has no model for ``AWS::SQS::QueuePolicy``, ``AWS::SNS::TopicPolicy`` or
``AWS::S3::BucketPolicy`` (``resource_class_from_type`` in ``moto/cloudformation/parsing.py``
logs "No Moto CloudFormation support" and skips them), so a deployed queue, topic or bucket
carries no policy, or moto's default, instead of the stack's. The models below store each
policy where moto's own API keeps it: the queue's ``Policy`` attribute, the topic's ``Policy``
attribute, the bucket's policy (``get_bucket_policy``). Deleting one (stack deletion, or an
update that drops it) removes the policy from the queue and the bucket and gives the topic
back its default policy, as CloudFormation does; an update stores the new document.

The policies are read, never enforced: moto enforces no SQS or SNS policy, and the local AWS
does not route cross-account calls through them either (hence the static access report). moto
does evaluate a bucket's policy on object requests (``FakeBucket.get_permission`` in
``moto/s3/models.py``, called from ``S3Response._key_response`` in ``moto/s3/responses.py``),
understanding only ``StringEquals`` conditions and taking any other one as met. The TLS-only
Deny that CDK puts on every bucket, and ``cdk bootstrap`` on its staging bucket
(``aws:SecureTransport`` false), would then refuse every object request, the CLI's asset uploads
included; the local AWS speaks plain HTTP, where S3 would refuse them as well. :func:`register`
turns that evaluation off. The models register themselves by subclassing when this module is
imported; ``python -m local_aws.moto.main`` imports it and calls :func:`register` before
starting moto's server.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any
from urllib.parse import urlparse

from moto.core.common_models import CloudFormationModel
from moto.iam.access_control import PermissionResult
from moto.s3.exceptions import MissingBucket
from moto.s3.models import FakeBucket, s3_backends
from moto.sns.exceptions import TopicNotFound
from moto.sns.models import sns_backends
from moto.sqs.exceptions import QueueDoesNotExist
from moto.sqs.models import sqs_backends
from moto.utilities.arns import parse_arn
from moto.utilities.utils import get_partition

from local_aws.moto.patching import replacing
from local_aws.moto.resource_model import ReplacedOnUpdate, ResourceModel

_PATCHED = "_local_aws_bucket_policy_not_enforced"


def _document(properties: dict[str, Any]) -> str:
    """The template's ``PolicyDocument`` as JSON text (a template may give it as an object)."""
    document = properties["PolicyDocument"]
    return document if isinstance(document, str) else json.dumps(document)


def _queue(url: str) -> tuple[str, str]:
    """``(account, name)`` of a queue URL (``https://sqs.<region>.amazonaws.com/<account>/<name>``,
    which is what ``Ref`` gives, or the local AWS's own ``http://host:port/<account>/<name>``)."""
    account, name = urlparse(url).path.strip("/").split("/")
    return account, name


class QueuePolicyResource(ReplacedOnUpdate, ResourceModel, CloudFormationModel):
    """``AWS::SQS::QueuePolicy``: the document becomes the ``Policy`` attribute of each queue.
    ``Ref`` and ``Fn::GetAtt Id`` give the generated policy id."""

    TYPE = "AWS::SQS::QueuePolicy"
    ATTRIBUTES = frozenset({"Id"})

    def __init__(self, policy_id: str, region: str, queues: tuple[tuple[str, str], ...]) -> None:
        super().__init__(policy_id, {"Id": policy_id})
        self.region = region
        self.queues = queues
        """``(account, name)`` of each queue, all in ``region``, the stack's."""

    @classmethod
    def create_from_cloudformation_json(
        cls,
        resource_name: str,
        cloudformation_json: dict[str, Any],
        account_id: str,  # noqa: ARG003 (each queue URL names its account)
        region_name: str,
        **_: Any,
    ) -> QueuePolicyResource:
        properties = cloudformation_json.get("Properties", {})
        document = _document(properties)
        queues = tuple(_queue(url) for url in properties["Queues"])
        for account, name in queues:
            sqs_backends[account][region_name].set_queue_attributes(name, {"Policy": document})
        return cls(resource_name, region_name, queues)

    def delete(self, *_: str) -> None:
        """Remove the policy from each queue still there (moto's stack deletion calls this
        first, with the stack's account and region; the template properties it would
        otherwise pass to ``delete_from_cloudformation_json`` are unresolved)."""
        for account, name in self.queues:
            with contextlib.suppress(QueueDoesNotExist):
                sqs_backends[account][self.region].set_queue_attributes(name, {"Policy": ""})


class TopicPolicyResource(ReplacedOnUpdate, ResourceModel, CloudFormationModel):
    """``AWS::SNS::TopicPolicy``: the document becomes the ``Policy`` attribute of each topic.
    ``Ref`` and ``Fn::GetAtt Id`` give the generated policy id."""

    TYPE = "AWS::SNS::TopicPolicy"
    ATTRIBUTES = frozenset({"Id"})

    def __init__(self, policy_id: str, topic_arns: tuple[str, ...]) -> None:
        super().__init__(policy_id, {"Id": policy_id})
        self.topic_arns = topic_arns

    @classmethod
    def create_from_cloudformation_json(
        cls,
        resource_name: str,
        cloudformation_json: dict[str, Any],
        account_id: str,  # noqa: ARG003 (each topic ARN names its account and region)
        region_name: str,  # noqa: ARG003
        **_: Any,
    ) -> TopicPolicyResource:
        properties = cloudformation_json.get("Properties", {})
        document = _document(properties)
        topic_arns = tuple(properties["Topics"])
        for topic_arn in topic_arns:
            arn = parse_arn(topic_arn)
            sns_backends[arn.account][arn.region].get_topic(topic_arn).policy = document
        return cls(resource_name, topic_arns)

    def delete(self, *_: str) -> None:
        """Give each topic still there moto's default policy back, in the topic's account and
        region."""
        for topic_arn in self.topic_arns:
            arn = parse_arn(topic_arn)
            with contextlib.suppress(TopicNotFound):
                topic = sns_backends[arn.account][arn.region].get_topic(topic_arn)
                topic.policy = json.dumps(
                    topic._create_default_topic_policy(arn.region, arn.account, topic.name)
                )


class BucketPolicyResource(ReplacedOnUpdate, ResourceModel, CloudFormationModel):
    """``AWS::S3::BucketPolicy``: the document becomes the bucket's policy. ``Ref`` gives the
    bucket's name; the type has no attributes."""

    TYPE = "AWS::S3::BucketPolicy"
    ATTRIBUTES = frozenset()

    def __init__(self, account_id: str, partition: str, bucket: str) -> None:
        super().__init__(bucket, {})
        self.account_id = account_id
        self.partition = partition
        self.bucket = bucket

    @classmethod
    def create_from_cloudformation_json(
        cls,
        resource_name: str,  # noqa: ARG003 (the type's physical id is its bucket's name)
        cloudformation_json: dict[str, Any],
        account_id: str,
        region_name: str,
        **_: Any,
    ) -> BucketPolicyResource:
        properties = cloudformation_json.get("Properties", {})
        partition = get_partition(region_name)
        bucket = properties["Bucket"]
        s3_backends[account_id][partition].put_bucket_policy(bucket, _document(properties).encode())
        return cls(account_id, partition, bucket)

    def delete(self, *_: str) -> None:
        """Remove the policy, if the bucket is still there."""
        with contextlib.suppress(MissingBucket):
            s3_backends[self.account_id][self.partition].delete_bucket_policy(self.bucket)


def register() -> None:
    """Make moto's S3 decide no object request by the bucket's policy. Idempotent."""

    @replacing(FakeBucket, "get_permission", _PATCHED)
    def get_permission(*_: Any) -> PermissionResult:
        return PermissionResult.NEUTRAL
