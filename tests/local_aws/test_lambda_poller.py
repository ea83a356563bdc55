"""Lambda's SQS event source mapping, played for functions deployed to moto in server mode.

Each test deploys its own functions, queues and mappings through moto's Lambda and SQS APIs
in accounts of its own, so the poller sees only them.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import uuid
import zipfile
from dataclasses import dataclass
from typing import Any

import boto3
import pytest

from cross_account_runtime.nservicebus.arn_header import ARN_HEADER, decode
from local_aws.accounts import AccountCredentials
from local_aws.lambda_poller import (
    MAX_WARNING_LINES,
    RUNTIME_PACKAGE,
    HandlerRefusedError,
    Invocation,
    LambdaPoller,
    PumpLimitError,
    PumpResult,
    SqsMapping,
    lambda_record,
    pump,
)
from tests.local_aws.accounts import fresh_account

pytestmark = pytest.mark.moto

RELAY_HANDLER = "cross_account_runtime.relay.lambda_handler.handler"
CONFIGURATION_FILE = "relay-config.json"


@dataclass(frozen=True)
class Queue:
    arn: str
    url: str


def create_queue(account: AccountCredentials, endpoint: str, name: str) -> Queue:
    sqs = account.session().client("sqs", endpoint_url=endpoint)
    url = sqs.create_queue(QueueName=name)["QueueUrl"]
    return Queue(f"arn:aws:sqs:{account.region}:{account.account_id}:{name}", url)


def deploy_function(
    account: AccountCredentials,
    endpoint: str,
    source: Queue,
    configuration: dict[str, Any],
    handler: str = RELAY_HANDLER,
) -> str:
    """A function with ``handler`` and the relay's ``configuration`` as a file of its code
    (named by its environment, as the relay construct ships it), mapped to ``source`` as the
    construct maps it (batches of 10, partial batch responses); returns its name."""
    session = account.session()
    role = session.client("iam", endpoint_url=endpoint).create_role(
        RoleName=f"fn-{uuid.uuid4().hex[:8]}",
        AssumeRolePolicyDocument=json.dumps(
            {
                "Version": "2012-10-17",
                "Statement": [
                    {
                        "Effect": "Allow",
                        "Principal": {"Service": "lambda.amazonaws.com"},
                        "Action": "sts:AssumeRole",
                    }
                ],
            }
        ),
    )["Role"]["Arn"]
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as package:
        package.writestr("index.py", "def handler(event, context):\n    return None\n")
        package.writestr(CONFIGURATION_FILE, json.dumps(configuration))
    name = f"fn-{uuid.uuid4().hex[:8]}"
    lambda_client = session.client("lambda", endpoint_url=endpoint)
    lambda_client.create_function(
        FunctionName=name,
        Runtime="python3.12",
        Role=role,
        Handler=handler,
        Code={"ZipFile": archive.getvalue()},
        Environment={"Variables": {"RELAY_CONFIGURATION": CONFIGURATION_FILE}},
    )
    lambda_client.create_event_source_mapping(
        EventSourceArn=source.arn,
        FunctionName=name,
        BatchSize=10,
        FunctionResponseTypes=["ReportBatchItemFailures"],
    )
    return name


def queue_counts(account: AccountCredentials, endpoint: str, queue: Queue) -> tuple[int, int]:
    """(visible, in flight) messages of ``queue``."""
    attributes = (
        account.session()
        .client("sqs", endpoint_url=endpoint)
        .get_queue_attributes(
            QueueUrl=queue.url,
            AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
        )["Attributes"]
    )
    return (
        int(attributes["ApproximateNumberOfMessages"]),
        int(attributes["ApproximateNumberOfMessagesNotVisible"]),
    )


def send(account: AccountCredentials, endpoint: str, queue: Queue, body: str, **extra: Any) -> str:
    sqs = account.session().client("sqs", endpoint_url=endpoint)
    message_id: str = sqs.send_message(QueueUrl=queue.url, MessageBody=body, **extra)["MessageId"]
    return message_id


def wrapped(reply_to: str) -> str:
    headers = {
        "NServiceBus.MessageId": str(uuid.uuid4()),
        "NServiceBus.ReplyToAddress": reply_to,
        "NServiceBus.EnclosedMessageTypes": "Billing.Messages.BillOrder",
    }
    return json.dumps({"Headers": headers, "Body": base64.b64encode(b"{}").decode()})


def route(destination: str, dead_letter: Queue) -> dict[str, str]:
    return {"destination": destination, "deadLetterQueue": dead_letter.arn}


SALES_SHADOW = "Sales"
"""The name by which a released Billing reaches Sales: the bridge's shadow of Sales in B."""


@dataclass(frozen=True)
class Bridge:
    """Sales-like account A, Billing-like account B: A's shadow queue -> outbound relay ->
    B's ingress queue -> inbound relay (for a released Billing, which resolves names in B) ->
    B's endpoint queue."""

    a: AccountCredentials
    b: AccountCredentials
    local: Queue
    shadow: Queue
    ingress: Queue
    endpoint_queue: Queue


def deploy_bridge(endpoint: str, *, forward_to: str = "Billing-ingress") -> Bridge:
    """The bridge; the outbound relay forwards to B's queue named ``forward_to``."""
    a, b = fresh_account(endpoint), fresh_account(endpoint)
    local = create_queue(a, endpoint, "Sales")
    shadow = create_queue(a, endpoint, "Billing")
    shadow_dlq = create_queue(a, endpoint, "Billing-dlq")
    ingress = create_queue(b, endpoint, "Billing-ingress")
    ingress_dlq = create_queue(b, endpoint, "Billing-ingress-dlq")
    endpoint_queue = create_queue(b, endpoint, "Billing")
    deploy_function(
        a,
        endpoint,
        shadow,
        {
            "direction": "outbound",
            "routes": {
                shadow.arn: route(f"arn:aws:sqs:{b.region}:{b.account_id}:{forward_to}", shadow_dlq)
            },
            "localEndpoints": ["Sales"],
        },
    )
    deploy_function(
        b,
        endpoint,
        ingress,
        {
            "direction": "inbound",
            "routes": {
                ingress.arn: {
                    **route(endpoint_queue.arn, ingress_dlq),
                    "receiver": "name",
                    "addressBook": "1",
                    "form": "wrapped",
                }
            },
            # Sales is reached by name from B: the shadow named after it.
            "addressBooks": {"1": {local.arn.rpartition(":")[0]: [SALES_SHADOW]}},
        },
    )
    return Bridge(a, b, local, shadow, ingress, endpoint_queue)


@dataclass(frozen=True)
class Pumped:
    """A message sent into the bridge and pumped, with the process state around the pump."""

    bridge: Bridge
    result: PumpResult
    environment_before: dict[str, str]
    environment_after: dict[str, str]
    default_session_before: Any
    default_session_after: Any


@pytest.fixture(scope="module")
def pumped(moto_endpoint: str) -> Pumped:
    bridge = deploy_bridge(moto_endpoint)
    send(bridge.a, moto_endpoint, bridge.shadow, wrapped("Sales"))
    environment, default_session = dict(os.environ), boto3.DEFAULT_SESSION
    result = pump([bridge.a, bridge.b], moto_endpoint)
    return Pumped(
        bridge, result, environment, dict(os.environ), default_session, boto3.DEFAULT_SESSION
    )


def test_a_message_crosses_both_relays_stamped_and_translated_for_a_released_receiver(
    pumped: Pumped, moto_endpoint: str
) -> None:
    bridge = pumped.bridge
    delivered = (
        bridge.b.session()
        .client("sqs", endpoint_url=moto_endpoint)
        .receive_message(QueueUrl=bridge.endpoint_queue.url)["Messages"]
    )
    headers = json.loads(delivered[0]["Body"])["Headers"]
    assert decode(headers[ARN_HEADER]) == {"NServiceBus.ReplyToAddress": bridge.local.arn}
    assert headers["NServiceBus.ReplyToAddress"] == SALES_SHADOW
    assert [i.mapping.queue_arn for i in pumped.result.invocations] == [
        bridge.shadow.arn,
        bridge.ingress.arn,
    ]


def test_each_handled_message_is_deleted_from_its_source_queue(
    pumped: Pumped, moto_endpoint: str
) -> None:
    bridge = pumped.bridge
    assert pumped.result.kept == ()
    assert queue_counts(bridge.a, moto_endpoint, bridge.shadow) == (0, 0)
    assert queue_counts(bridge.b, moto_endpoint, bridge.ingress) == (0, 0)


def test_the_functions_log_lines_are_kept_with_their_invocation(pumped: Pumped) -> None:
    lines = [json.loads(line) for line in pumped.result.invocations[0].log_lines]
    records = [line for line in lines if "_aws" not in line]
    assert [(line["message"], line["forwarded"]) for line in records] == [("batch relayed", 1)]


def test_the_metrics_the_functions_wrote_are_summed_per_function(pumped: Pumped) -> None:
    """The relays' embedded-metric-format lines, read as CloudWatch reads them."""
    metrics = pumped.result.metrics()
    outbound = [
        values for key, values in metrics.items() if ("Direction", "outbound") in key.dimensions
    ]
    assert [values["Forwarded"] for values in outbound] == [1]
    assert sum(values["Records"] for values in metrics.values()) == 2


def test_a_function_environment_applies_only_during_its_call(pumped: Pumped) -> None:
    assert pumped.environment_after == pumped.environment_before
    assert pumped.default_session_after is pumped.default_session_before


def test_a_message_the_handler_reports_failed_stays_in_flight_for_redelivery(
    moto_endpoint: str,
) -> None:
    bridge = deploy_bridge(moto_endpoint, forward_to="Billing-ingress-missing")
    message_id = send(bridge.a, moto_endpoint, bridge.shadow, wrapped("Sales"))

    result = pump([bridge.a, bridge.b], moto_endpoint)

    assert result.kept == ((bridge.shadow.arn, message_id),)
    assert queue_counts(bridge.a, moto_endpoint, bridge.shadow) == (0, 1)


def test_the_warnings_a_relay_logs_are_named_by_its_function(moto_endpoint: str) -> None:
    bridge = deploy_bridge(moto_endpoint, forward_to="Billing-ingress-missing")
    message_id = send(bridge.a, moto_endpoint, bridge.shadow, wrapped("Sales"))

    result = pump([bridge.a, bridge.b], moto_endpoint)

    (line,) = result.warning_lines()
    function, _, logged = line.partition(": ")
    assert function == result.invocations[0].mapping.function_name
    record = json.loads(logged)
    assert (record["level"], record["outcome"], record["message_id"]) == (
        "WARNING",
        "destination_missing",
        message_id,
    )


def test_warning_lines_are_bounded_with_a_count_of_the_rest() -> None:
    mapping = SqsMapping(
        uuid="m",
        queue_arn="arn:aws:sqs:us-east-1:111111111111:Work",
        function_arn="arn:aws:lambda:us-east-1:111111111111:function:Relay",
        function_name="Relay",
        handler=RELAY_HANDLER,
        environment={},
        batch_size=10,
        reports_batch_item_failures=True,
        memory_mb=128,
        credentials=AccountCredentials("111111111111", "us-east-1", "key", "secret"),
    )
    logged = [json.dumps({"level": "ERROR", "message": f"refused {n}"}) for n in range(12)]
    result = PumpResult(
        1,
        (
            Invocation(
                mapping,
                ("a",),
                log_lines=(json.dumps({"level": "INFO", "message": "batch relayed"}), *logged),
            ),
            Invocation(mapping, ("b",), log_lines=("Traceback (most recent call last):",)),
        ),
    )

    assert result.warning_lines() == (
        *(f"Relay: {line}" for line in logged[:MAX_WARNING_LINES]),
        "... and 3 more line(s)",
    )


def test_a_message_sqs_refuses_to_delete_is_kept_for_redelivery(
    moto_endpoint: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    bridge = deploy_bridge(moto_endpoint)
    for _ in range(2):
        send(bridge.a, moto_endpoint, bridge.shadow, wrapped("Sales"))
    poller = LambdaPoller([bridge.a], moto_endpoint)
    (mapping,) = poller.mappings()
    sqs = poller.client(bridge.a, "sqs")
    delete_message_batch = sqs.delete_message_batch

    def refuse_the_first(**request: Any) -> dict[str, Any]:
        refused, *deleted = request["Entries"]
        answer: dict[str, Any] = delete_message_batch(**{**request, "Entries": deleted})
        answer["Failed"] = [{"Id": refused["Id"], "Code": "InternalError", "SenderFault": False}]
        return answer

    monkeypatch.setattr(sqs, "delete_message_batch", refuse_the_first)
    invocation = poller.poll(mapping)

    assert invocation.deleted == 1
    assert PumpResult(1, (invocation,)).kept == ((bridge.shadow.arn, invocation.received[0]),)
    assert queue_counts(bridge.a, moto_endpoint, bridge.shadow) == (0, 1)


def test_a_record_has_lambdas_shape(moto_endpoint: str, new_account: AccountCredentials) -> None:
    queue = create_queue(new_account, moto_endpoint, "Shapes")
    send(
        new_account,
        moto_endpoint,
        queue,
        "hello",
        MessageAttributes={
            "Tenant": {"DataType": "String", "StringValue": "acme"},
            "Blob": {"DataType": "Binary", "BinaryValue": b"\x00\x01"},
        },
    )
    message = (
        new_account.session()
        .client("sqs", endpoint_url=moto_endpoint)
        .receive_message(
            QueueUrl=queue.url,
            AttributeNames=["All"],
            MessageAttributeNames=["All"],
        )["Messages"][0]
    )

    record = lambda_record(message, queue.arn)

    assert set(record) == {
        "messageId",
        "receiptHandle",
        "body",
        "attributes",
        "messageAttributes",
        "md5OfBody",
        "md5OfMessageAttributes",
        "eventSource",
        "eventSourceARN",
        "awsRegion",
    }
    assert record["body"] == "hello"
    assert record["md5OfBody"] == hashlib.md5(b"hello").hexdigest()
    assert record["eventSource"] == "aws:sqs"
    assert record["eventSourceARN"] == queue.arn
    assert record["awsRegion"] == "us-east-1"
    assert set(record["attributes"]) == {
        "ApproximateReceiveCount",
        "SentTimestamp",
        "SenderId",
        "ApproximateFirstReceiveTimestamp",
    }
    assert record["messageAttributes"] == {
        "Tenant": {
            "stringValue": "acme",
            "stringListValues": [],
            "binaryListValues": [],
            "dataType": "String",
        },
        "Blob": {
            "binaryValue": base64.b64encode(b"\x00\x01").decode(),
            "stringListValues": [],
            "binaryListValues": [],
            "dataType": "Binary",
        },
    }


def test_a_handler_outside_the_runtime_package_is_refused_before_anything_moves(
    moto_endpoint: str, new_account: AccountCredentials
) -> None:
    queue = create_queue(new_account, moto_endpoint, "Work")
    name = deploy_function(new_account, moto_endpoint, queue, {}, handler="index.handler")
    send(new_account, moto_endpoint, queue, "work")

    with pytest.raises(HandlerRefusedError) as refused:
        pump([new_account], moto_endpoint)

    assert (
        f"function {name}: handler 'index.handler' is outside the {RUNTIME_PACKAGE} package"
        in str(refused.value)
    )
    assert queue_counts(new_account, moto_endpoint, queue) == (1, 0)


def test_pump_names_the_queues_still_holding_messages_when_its_rounds_run_out(
    moto_endpoint: str,
) -> None:
    # Two outbound relays forwarding to each other: a loop no number of rounds drains.
    a, b = fresh_account(moto_endpoint), fresh_account(moto_endpoint)
    ping, ping_dlq = (
        create_queue(a, moto_endpoint, "Ping"),
        create_queue(a, moto_endpoint, "Ping-dlq"),
    )
    pong, pong_dlq = (
        create_queue(b, moto_endpoint, "Pong"),
        create_queue(b, moto_endpoint, "Pong-dlq"),
    )
    for account, source, destination, dead_letter in (
        (a, ping, pong, ping_dlq),
        (b, pong, ping, pong_dlq),
    ):
        deploy_function(
            account,
            moto_endpoint,
            source,
            {
                "direction": "outbound",
                "routes": {source.arn: route(destination.arn, dead_letter)},
                "localEndpoints": ["Local"],
            },
        )
    send(a, moto_endpoint, ping, "ball")

    with pytest.raises(PumpLimitError) as limit:
        LambdaPoller([a, b], moto_endpoint).pump(max_rounds=3)

    assert "queues still held messages after 3 rounds: " in str(limit.value)
    assert f"{ping.arn} (1 message(s))" in str(limit.value)
