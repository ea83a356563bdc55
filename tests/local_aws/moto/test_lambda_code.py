"""The local AWS hands out a deployed function's code, which the Lambda poller unpacks where
``LAMBDA_TASK_ROOT`` points, as Lambda unpacks it into ``/var/task``."""

from __future__ import annotations

import io
import json
import urllib.error
import uuid
import zipfile

import pytest

from local_aws.moto.lambda_code import download_code
from tests.local_aws.accounts import fresh_account

pytestmark = pytest.mark.moto


def test_a_functions_code_is_the_package_it_was_deployed_with(moto_endpoint: str) -> None:
    account = fresh_account(moto_endpoint)
    session = account.session()
    role = session.client("iam", endpoint_url=moto_endpoint).create_role(
        RoleName=f"fn-{uuid.uuid4().hex[:8]}",
        AssumeRolePolicyDocument=json.dumps({"Version": "2012-10-17", "Statement": []}),
    )["Role"]["Arn"]
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as package:
        package.writestr("relay-config.json", '{"direction": "outbound"}')
    function_arn = session.client("lambda", endpoint_url=moto_endpoint).create_function(
        FunctionName="Relay",
        Runtime="python3.12",
        Role=role,
        Handler="cross_account_runtime.relay.lambda_handler.handler",
        Code={"ZipFile": archive.getvalue()},
    )["FunctionArn"]

    code = download_code(moto_endpoint, function_arn)

    with zipfile.ZipFile(io.BytesIO(code)) as package:
        assert package.read("relay-config.json") == b'{"direction": "outbound"}'


def test_an_unknown_function_is_a_404_naming_it(moto_endpoint: str) -> None:
    missing = "arn:aws:lambda:us-east-1:123456789012:function:Missing"
    with pytest.raises(urllib.error.HTTPError) as refused:
        download_code(moto_endpoint, missing)
    assert refused.value.code == 404
    assert missing.encode() in refused.value.read()
