"""SNS deliveries to Lambda in the local AWS are recorded as SNS records them, the function
unrun: accepted (202, a request id, no ``attempts`` on a first try) when the function exists,
refused as missing (404, not retried) when it does not, nothing for a message the filter
policy keeps out. Plain moto runs the function in Docker and fails the publish without it, so
each test here fails without the teaching."""

from __future__ import annotations

import io
import json
import zipfile

import pytest

from cross_account_runtime.delivery_report.causes import classify
from cross_account_runtime.delivery_report.schema import RECORD_SCHEMA
from local_aws.accounts import AccountCredentials
from local_aws.moto.delivery_status import sns_deliveries
from tests.local_aws.moto.test_sns_delivery_logs import (
    Account,
    record_fields,
    schema_fields,
    trust,
)

pytestmark = pytest.mark.moto


@pytest.fixture
def account(moto_endpoint: str, new_account: AccountCredentials) -> Account:
    return Account(new_account, moto_endpoint)


def lambda_topic(account: Account, name: str) -> str:
    role = account.role(f"{name}-feedback", trust())
    return account.logged_topic(name, role, protocol="Lambda")


def function(account: Account, name: str) -> str:
    code = io.BytesIO()
    with zipfile.ZipFile(code, "w") as archive:
        archive.writestr("index.py", "def handler(event, context):\n    return None\n")
    role = account.role(f"{name}-execution", trust("lambda.amazonaws.com"))
    arn: str = account.client("lambda").create_function(
        FunctionName=name,
        Runtime="python3.12",
        Role=role,
        Handler="index.handler",
        Code={"ZipFile": code.getvalue()},
    )["FunctionArn"]
    return arn


def subscribe(account: Account, topic: str, function_arn: str, **attributes: str) -> None:
    account.client("sns").subscribe(
        TopicArn=topic, Protocol="lambda", Endpoint=function_arn, Attributes=attributes
    )


def test_a_function_in_the_local_aws_accepts_the_delivery(account: Account) -> None:
    topic = lambda_topic(account, "Audited")
    subscribe(account, topic, function(account, "Audit"))

    account.client("sns").publish(TopicArn=topic, Message="billed")

    (record,) = account.records(f"sns/us-east-1/{account.id}/Audited")
    delivery = record["delivery"]
    assert record["status"] == "SUCCESS"
    assert delivery["statusCode"] == 202
    assert "attempts" not in delivery
    assert set(json.loads(delivery["providerResponse"])) == {"lambdaRequestId"}
    assert set(record_fields(record)) <= set(schema_fields(RECORD_SCHEMA))
    (row,) = [r for r in sns_deliveries(account.endpoint_url) if r["topic"] == topic]
    assert (row["deliveries"], row["successes"], row["protocol"]) == (1, 1, "lambda")


def test_a_missing_function_fails_once_and_the_publish_still_succeeds(account: Account) -> None:
    topic = lambda_topic(account, "Orphaned")
    missing = f"arn:aws:lambda:us-east-1:{account.id}:function:Gone"
    subscribe(account, topic, missing)

    account.client("sns").publish(TopicArn=topic, Message="billed")

    (record,) = account.records(f"sns/us-east-1/{account.id}/Orphaned/Failure")
    delivery = record["delivery"]
    assert (record["status"], delivery["statusCode"], delivery["attempts"]) == ("FAILURE", 404, 1)
    response = delivery["providerResponse"]
    assert json.loads(response)["ErrorCode"] == "ResourceNotFoundException"
    assert classify("FAILURE", "lambda", 404, response) == "endpoint_missing"


def test_a_message_the_filter_policy_keeps_out_is_not_delivered(account: Account) -> None:
    topic = lambda_topic(account, "Filtered")
    subscribe(
        account,
        topic,
        function(account, "OnlyInvoices"),
        FilterPolicy=json.dumps({"kind": ["invoice"]}),
    )

    account.client("sns").publish(
        TopicArn=topic,
        Message="a receipt",
        MessageAttributes={"kind": {"DataType": "String", "StringValue": "receipt"}},
    )

    assert account.records(f"sns/us-east-1/{account.id}/Filtered") == []
    assert [r for r in sns_deliveries(account.endpoint_url) if r["topic"] == topic] == []
