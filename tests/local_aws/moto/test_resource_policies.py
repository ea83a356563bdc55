"""A stack's queue, topic and bucket policies are stored on their resources in the local AWS and
read back as deployed; updating or deleting the stack changes or removes them; none is
enforced, so the TLS-only Deny CDK puts on a bucket does not refuse the local AWS's plain
HTTP."""

from __future__ import annotations

import json
from typing import Any

import botocore.exceptions
import pytest

from local_aws.accounts import AccountCredentials
from tests.local_aws.accounts import client
from tests.local_aws.moto.cloudformation import delete, deploy, update

pytestmark = pytest.mark.moto

REGION = "us-east-1"


def tls_only(action: str, resource: Any) -> dict[str, Any]:
    """The statement CDK adds for ``enforceSSL`` (queues, buckets) and topics' SSL-only publish."""
    return {
        "Action": action,
        "Condition": {"Bool": {"aws:SecureTransport": "false"}},
        "Effect": "Deny",
        "Principal": {"AWS": "*"},
        "Resource": resource,
    }


def document(*statements: dict[str, Any]) -> dict[str, Any]:
    return {"Version": "2012-10-17", "Statement": list(statements)}


def bucket_name(account: AccountCredentials) -> str:
    return f"orders-{account.account_id}"


def stack_with_policies(account: AccountCredentials) -> dict[str, Any]:
    """A queue, a topic and a bucket, each with its policy, as CDK synthesizes them."""
    bucket_arn = {"Fn::GetAtt": ["Bucket", "Arn"]}
    return {
        "Resources": {
            "Queue": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": "Orders"}},
            "QueuePolicy": {
                "Type": "AWS::SQS::QueuePolicy",
                "Properties": {
                    "Queues": [{"Ref": "Queue"}],
                    "PolicyDocument": document(
                        tls_only("sqs:*", {"Fn::GetAtt": ["Queue", "Arn"]}),
                        {
                            "Action": "sqs:SendMessage",
                            "Effect": "Allow",
                            "Principal": {"Service": "sns.amazonaws.com"},
                            "Resource": {"Fn::GetAtt": ["Queue", "Arn"]},
                        },
                    ),
                },
            },
            "Topic": {"Type": "AWS::SNS::Topic", "Properties": {"TopicName": "Orders"}},
            "TopicPolicy": {
                "Type": "AWS::SNS::TopicPolicy",
                "Properties": {
                    "Topics": [{"Ref": "Topic"}],
                    "PolicyDocument": document(tls_only("sns:Publish", {"Ref": "Topic"})),
                },
            },
            "Bucket": {
                "Type": "AWS::S3::Bucket",
                "Properties": {"BucketName": bucket_name(account)},
            },
            "BucketPolicy": {
                "Type": "AWS::S3::BucketPolicy",
                "Properties": {
                    "Bucket": {"Ref": "Bucket"},
                    "PolicyDocument": document(
                        tls_only(
                            "s3:*",
                            [bucket_arn, {"Fn::Join": ["", [bucket_arn, "/*"]]}],
                        )
                    ),
                },
            },
        },
        "Outputs": {
            "QueuePolicyRef": {"Value": {"Ref": "QueuePolicy"}},
            "QueuePolicyId": {"Value": {"Fn::GetAtt": ["QueuePolicy", "Id"]}},
            "TopicPolicyRef": {"Value": {"Ref": "TopicPolicy"}},
            "TopicPolicyId": {"Value": {"Fn::GetAtt": ["TopicPolicy", "Id"]}},
            "BucketPolicyRef": {"Value": {"Ref": "BucketPolicy"}},
        },
    }


def queue_policy(account: AccountCredentials, endpoint_url: str, url: str) -> Any:
    attributes = (
        client(account, "sqs", endpoint_url)
        .get_queue_attributes(QueueUrl=url, AttributeNames=["Policy"])
        .get("Attributes", {})
    )
    return json.loads(attributes["Policy"]) if "Policy" in attributes else None


def topic_policy(account: AccountCredentials, endpoint_url: str, arn: str) -> Any:
    sns = client(account, "sns", endpoint_url)
    return json.loads(sns.get_topic_attributes(TopicArn=arn)["Attributes"]["Policy"])


def bucket_policy(account: AccountCredentials, endpoint_url: str, bucket: str) -> Any:
    s3 = client(account, "s3", endpoint_url)
    return json.loads(s3.get_bucket_policy(Bucket=bucket)["Policy"])


def test_each_policy_reads_back_from_its_queue_topic_and_bucket_as_deployed(
    new_account: AccountCredentials, moto_endpoint: str
) -> None:
    out = deploy(new_account, moto_endpoint, "Policies", stack_with_policies(new_account))

    account = new_account.account_id
    queue_arn = f"arn:aws:sqs:{REGION}:{account}:Orders"
    topic_arn = f"arn:aws:sns:{REGION}:{account}:Orders"
    bucket = bucket_name(new_account)
    url = client(new_account, "sqs", moto_endpoint).get_queue_url(QueueName="Orders")["QueueUrl"]
    assert queue_policy(new_account, moto_endpoint, url) == document(
        tls_only("sqs:*", queue_arn),
        {
            "Action": "sqs:SendMessage",
            "Effect": "Allow",
            "Principal": {"Service": "sns.amazonaws.com"},
            "Resource": queue_arn,
        },
    )
    assert topic_policy(new_account, moto_endpoint, topic_arn) == document(
        tls_only("sns:Publish", topic_arn)
    )
    assert bucket_policy(new_account, moto_endpoint, bucket) == document(
        tls_only("s3:*", [f"arn:aws:s3:::{bucket}", f"arn:aws:s3:::{bucket}/*"])
    )
    assert out["QueuePolicyRef"] == out["QueuePolicyId"]
    assert out["TopicPolicyRef"] == out["TopicPolicyId"]
    assert out["BucketPolicyRef"] == bucket


def test_a_buckets_tls_only_deny_refuses_no_object_request_over_plain_http(
    new_account: AccountCredentials, moto_endpoint: str
) -> None:
    deploy(new_account, moto_endpoint, "Policies", stack_with_policies(new_account))

    s3 = client(new_account, "s3", moto_endpoint)
    bucket = bucket_name(new_account)
    s3.put_object(Bucket=bucket, Key="reports/day.json", Body=b"{}")
    assert s3.get_object(Bucket=bucket, Key="reports/day.json")["Body"].read() == b"{}"
    s3.delete_object(Bucket=bucket, Key="reports/day.json")


def policies_of(url: str, topic_arn: str, bucket: str, sid: str) -> dict[str, Any]:
    """A stack holding only the policies of a queue, a topic and a bucket made elsewhere."""
    statement = {"Sid": sid, "Effect": "Allow", "Principal": {"AWS": "*"}}
    return {
        "Resources": {
            "QueuePolicy": {
                "Type": "AWS::SQS::QueuePolicy",
                "Properties": {
                    "Queues": [url],
                    "PolicyDocument": document({**statement, "Action": "sqs:SendMessage"}),
                },
            },
            "TopicPolicy": {
                "Type": "AWS::SNS::TopicPolicy",
                "Properties": {
                    "Topics": [topic_arn],
                    "PolicyDocument": document({**statement, "Action": "sns:Publish"}),
                },
            },
            "BucketPolicy": {
                "Type": "AWS::S3::BucketPolicy",
                "Properties": {
                    "Bucket": bucket,
                    "PolicyDocument": document({**statement, "Action": "s3:GetObject"}),
                },
            },
        }
    }


def test_an_update_stores_the_new_documents_and_deletion_takes_them_off(
    new_account: AccountCredentials, moto_endpoint: str
) -> None:
    url = client(new_account, "sqs", moto_endpoint).create_queue(QueueName="Orders")["QueueUrl"]
    topic_arn = client(new_account, "sns", moto_endpoint).create_topic(Name="Orders")["TopicArn"]
    bucket = bucket_name(new_account)
    client(new_account, "s3", moto_endpoint).create_bucket(Bucket=bucket)
    default_topic_policy = topic_policy(new_account, moto_endpoint, topic_arn)

    def sids() -> tuple[str, str, str]:
        return (
            queue_policy(new_account, moto_endpoint, url)["Statement"][0]["Sid"],
            topic_policy(new_account, moto_endpoint, topic_arn)["Statement"][0]["Sid"],
            bucket_policy(new_account, moto_endpoint, bucket)["Statement"][0]["Sid"],
        )

    deploy(new_account, moto_endpoint, "Policies", policies_of(url, topic_arn, bucket, "First"))
    assert sids() == ("First", "First", "First")
    update(new_account, moto_endpoint, "Policies", policies_of(url, topic_arn, bucket, "Second"))
    assert sids() == ("Second", "Second", "Second")

    delete(new_account, moto_endpoint, "Policies")
    assert queue_policy(new_account, moto_endpoint, url) is None
    assert topic_policy(new_account, moto_endpoint, topic_arn) == default_topic_policy
    with pytest.raises(botocore.exceptions.ClientError, match="NoSuchBucketPolicy"):
        bucket_policy(new_account, moto_endpoint, bucket)
