"""The CloudFormation models added to moto answer ``Fn::GetAtt`` as CloudFormation does: the
attributes the real resource types have, and a template error for any other (never a silent
empty value that would surface later as a confusing failure elsewhere in the stack)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, cast

import pytest
from moto import mock_aws
from moto.cloudformation.exceptions import ValidationError
from moto.cloudformation.parsing import clean_json
from moto.core.common_models import CloudFormationModel
from moto.s3.models import s3_backends
from moto.sns.models import sns_backends
from moto.sqs.models import sqs_backends

from local_aws.moto.cloudformation import DeliveryStreamResource, EmrServerlessApplicationResource
from local_aws.moto.resource_policies import (
    BucketPolicyResource,
    QueuePolicyResource,
    TopicPolicyResource,
)
from local_aws.moto.sns_subscriptions import SubscriptionResource

ACCOUNT = "111111111111"
REGION = "us-east-1"
STREAM = {
    "Type": "AWS::KinesisFirehose::DeliveryStream",
    "Properties": {
        "DeliveryStreamName": "delivery-logs",
        "ExtendedS3DestinationConfiguration": {
            "BucketARN": "arn:aws:s3:::logs",
            "RoleARN": f"arn:aws:iam::{ACCOUNT}:role/firehose",
            "Prefix": "delivery-logs/",
        },
    },
}
APPLICATION_PROPERTIES = {
    "Name": "delivery-report",
    "ReleaseLabel": "emr-spark-8.0.0",
    "Type": "SPARK",
}
APPLICATION = {"Type": "AWS::EMRServerless::Application", "Properties": APPLICATION_PROPERTIES}


@pytest.fixture(autouse=True)
def _fresh_backends() -> Iterator[None]:
    """Each test creates its resources in moto's in-process backends, emptied afterwards."""
    with mock_aws():
        yield


def get_att(resource: CloudFormationModel, logical_id: str, attribute: str) -> Any:
    """``Fn::GetAtt`` resolved by moto's template parser (which only looks the resource up by
    its logical id, so a plain mapping stands in for the stack's resource map)."""
    resources = cast(Any, {logical_id: resource})
    return clean_json({"Fn::GetAtt": [logical_id, attribute]}, resources)


def test_a_delivery_stream_answers_its_arn() -> None:
    stream = DeliveryStreamResource.create_from_cloudformation_json(
        "Stream", STREAM, ACCOUNT, REGION
    )
    assert get_att(stream, "Stream", "Arn") == (
        f"arn:aws:firehose:{REGION}:{ACCOUNT}:deliverystream/delivery-logs"
    )


def test_an_application_answers_its_id_and_arn() -> None:
    application = EmrServerlessApplicationResource.create_from_cloudformation_json(
        "App", APPLICATION, ACCOUNT, REGION
    )
    application_id = get_att(application, "App", "ApplicationId")
    assert get_att(application, "App", "Arn") == (
        f"arn:aws:emr-serverless:{REGION}:{ACCOUNT}:/applications/{application_id}"
    )


def test_an_attribute_a_delivery_stream_lacks_is_a_template_error_naming_it() -> None:
    stream = DeliveryStreamResource.create_from_cloudformation_json(
        "Stream", STREAM, ACCOUNT, REGION
    )
    with pytest.raises(ValidationError, match=r"resource Stream does not support .* Nope"):
        get_att(stream, "Stream", "Nope")


def test_an_attribute_an_application_lacks_is_a_template_error_naming_it() -> None:
    application = EmrServerlessApplicationResource.create_from_cloudformation_json(
        "App", APPLICATION, ACCOUNT, REGION
    )
    with pytest.raises(ValidationError, match=r"resource App does not support .* Nope"):
        get_att(application, "App", "Nope")


def test_an_application_type_the_service_lacks_is_refused_naming_the_types_it_has() -> None:
    wrong = {**APPLICATION, "Properties": {**APPLICATION_PROPERTIES, "Type": "spark"}}
    with pytest.raises(ValueError, match=r"App: .* Type 'spark' .* use SPARK or HIVE"):
        EmrServerlessApplicationResource.create_from_cloudformation_json(
            "App", wrong, ACCOUNT, REGION
        )


def added_resources() -> dict[str, tuple[CloudFormationModel, dict[str, str]]]:
    """One resource of each type added for publish/subscribe, made through moto's backends, and
    the attributes it answers."""
    topic_arn = sns_backends[ACCOUNT][REGION].create_topic("OrderBilled").arn
    queue = sqs_backends[ACCOUNT][REGION].create_queue("Sales")
    s3_backends[ACCOUNT]["aws"].create_bucket("logs", REGION)
    document = {"Version": "2012-10-17", "Statement": []}

    def create(model: Any, properties: dict[str, Any]) -> Any:
        return model.create_from_cloudformation_json(
            f"Stack-{model.__name__}", {"Properties": properties}, ACCOUNT, REGION
        )

    subscription = create(
        SubscriptionResource,
        {"TopicArn": topic_arn, "Protocol": "sqs", "Endpoint": queue.queue_arn},
    )
    queues = [queue.physical_resource_id]
    return {
        "subscription": (subscription, {"Arn": subscription.physical_resource_id}),
        "queue-policy": (
            create(QueuePolicyResource, {"Queues": queues, "PolicyDocument": document}),
            {"Id": "Stack-QueuePolicyResource"},
        ),
        "topic-policy": (
            create(TopicPolicyResource, {"Topics": [topic_arn], "PolicyDocument": document}),
            {"Id": "Stack-TopicPolicyResource"},
        ),
        "bucket-policy": (
            create(BucketPolicyResource, {"Bucket": "logs", "PolicyDocument": document}),
            {},
        ),
    }


@pytest.mark.parametrize("kind", ["subscription", "queue-policy", "topic-policy", "bucket-policy"])
def test_the_added_types_answer_their_attributes_and_refuse_any_other(kind: str) -> None:
    resource, attributes = added_resources()[kind]
    for attribute, value in attributes.items():
        assert get_att(resource, "Resource", attribute) == value
    with pytest.raises(ValidationError, match=r"resource Resource does not support .* Nope"):
        get_att(resource, "Resource", "Nope")
