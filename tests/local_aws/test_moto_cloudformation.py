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

from local_aws.moto_cloudformation import DeliveryStreamResource, EmrServerlessApplicationResource

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
