"""A bucket deployed to the local AWS keeps the lifecycle rules, ownership controls and public
access block of its template (as the delivery-log buckets and the ``cdk bootstrap`` staging
bucket set them), next to its KMS encryption."""

from __future__ import annotations

from typing import Any

import botocore.exceptions
import pytest

from local_aws.accounts import AccountCredentials
from tests.local_aws.accounts import client
from tests.local_aws.moto.cloudformation import deploy

pytestmark = pytest.mark.moto

RULES: list[dict[str, Any]] = [
    {
        "Id": "expire-delivery-logs",
        "Status": "Enabled",
        "Prefix": "delivery-logs/",
        "ExpirationInDays": 400,
        "Transitions": [{"StorageClass": "STANDARD_IA", "TransitionInDays": 30}],
    },
    {
        "Id": "abort-incomplete-uploads",
        "Status": "Enabled",
        "AbortIncompleteMultipartUpload": {"DaysAfterInitiation": 7},
    },
    {
        "Id": "cleanup-old-versions",
        "Status": "Enabled",
        "NoncurrentVersionExpiration": {"NoncurrentDays": 30},
    },
]


def bucket_template(name: str, rules: list[dict[str, Any]]) -> dict[str, Any]:
    """A bucket as CDK synthesizes the delivery-log bucket: a KMS key of its own, lifecycle
    rules, ``BucketOwnerEnforced``, every public access blocked."""
    return {
        "Resources": {
            "Key": {
                "Type": "AWS::KMS::Key",
                "Properties": {
                    "KeyPolicy": {
                        "Version": "2012-10-17",
                        "Statement": [
                            {
                                "Effect": "Allow",
                                "Principal": {
                                    "AWS": {"Fn::Sub": "arn:aws:iam::${AWS::AccountId}:root"}
                                },
                                "Action": "kms:*",
                                "Resource": "*",
                            }
                        ],
                    }
                },
            },
            "Bucket": {
                "Type": "AWS::S3::Bucket",
                "Properties": {
                    "BucketName": name,
                    "BucketEncryption": {
                        "ServerSideEncryptionConfiguration": [
                            {
                                "BucketKeyEnabled": True,
                                "ServerSideEncryptionByDefault": {
                                    "KMSMasterKeyID": {"Fn::GetAtt": ["Key", "Arn"]},
                                    "SSEAlgorithm": "aws:kms",
                                },
                            }
                        ]
                    },
                    "LifecycleConfiguration": {"Rules": rules},
                    "OwnershipControls": {"Rules": [{"ObjectOwnership": "BucketOwnerEnforced"}]},
                    "PublicAccessBlockConfiguration": {
                        "BlockPublicAcls": True,
                        "BlockPublicPolicy": True,
                        "IgnorePublicAcls": True,
                        "RestrictPublicBuckets": True,
                    },
                },
            },
        },
        "Outputs": {"KeyArn": {"Value": {"Fn::GetAtt": ["Key", "Arn"]}}},
    }


def test_a_buckets_lifecycle_ownership_and_public_access_block_read_back_as_deployed(
    new_account: AccountCredentials, moto_endpoint: str
) -> None:
    name = f"delivery-logs-{new_account.account_id}"
    out = deploy(new_account, moto_endpoint, "Logs", bucket_template(name, RULES))

    s3 = client(new_account, "s3", moto_endpoint)
    assert s3.get_bucket_lifecycle_configuration(Bucket=name)["Rules"] == [
        {
            "ID": "expire-delivery-logs",
            "Status": "Enabled",
            "Filter": {"Prefix": "delivery-logs/"},
            "Expiration": {"Days": 400},
            "Transitions": [{"Days": 30, "StorageClass": "STANDARD_IA"}],
        },
        {
            "ID": "abort-incomplete-uploads",
            "Status": "Enabled",
            "Filter": {"Prefix": ""},
            "AbortIncompleteMultipartUpload": {"DaysAfterInitiation": 7},
        },
        {
            "ID": "cleanup-old-versions",
            "Status": "Enabled",
            "Filter": {"Prefix": ""},
            "NoncurrentVersionExpiration": {"NoncurrentDays": 30},
        },
    ]
    (encryption,) = s3.get_bucket_encryption(Bucket=name)["ServerSideEncryptionConfiguration"][
        "Rules"
    ]
    assert encryption["ApplyServerSideEncryptionByDefault"] == {
        "SSEAlgorithm": "aws:kms",
        "KMSMasterKeyID": out["KeyArn"],
    }
    assert s3.get_bucket_ownership_controls(Bucket=name)["OwnershipControls"]["Rules"] == [
        {"ObjectOwnership": "BucketOwnerEnforced"}
    ]
    assert s3.get_public_access_block(Bucket=name)["PublicAccessBlockConfiguration"] == {
        "BlockPublicAcls": True,
        "IgnorePublicAcls": True,
        "BlockPublicPolicy": True,
        "RestrictPublicBuckets": True,
    }


def test_a_lifecycle_rule_property_the_local_aws_does_not_model_fails_the_stack_naming_it(
    new_account: AccountCredentials, moto_endpoint: str
) -> None:
    rule = {
        "Id": "tagged",
        "Status": "Enabled",
        "ExpirationInDays": 1,
        "TagFilters": [{"Key": "kind", "Value": "temporary"}],
    }
    name = f"tagged-{new_account.account_id}"
    with pytest.raises(
        botocore.exceptions.ClientError,
        match=r"LifecycleConfiguration.Rules\[0\]: the local AWS does not model \['TagFilters'\]",
    ):
        deploy(new_account, moto_endpoint, "Tagged", bucket_template(name, [rule]))
