"""Notifications against DynamoDB (moto in server mode): each message is processed once per
success, a failed handler's claim is released so SNS's retry is processed, and nothing is lost."""

from __future__ import annotations

import json

import boto3
import pytest

from cross_account_runtime.sns_endpoint.dedupe import (
    ClaimState,
    DedupeUnavailableError,
    DynamoDbDedupe,
)
from cross_account_runtime.sns_endpoint.receiver import MAX_CLOCK_SKEW_SECONDS
from tests.runtime.sns_endpoint.conftest import (
    TOPIC_ARN,
    Harness,
    Signer,
    dynamodb_item,
    function_url_event,
    now,
    response_body,
)

pytestmark = pytest.mark.moto


@pytest.mark.parametrize("version", ["1", "2"])
@pytest.mark.parametrize("subject", ["Order placed", None])
def test_a_notification_is_handed_to_the_handler_and_recorded_done(
    harness: Harness, signer: Signer, dedupe_table: str, version: str, subject: str | None
) -> None:
    message = signer.notification(subject=subject, version=version)
    receiver = harness.receiver(dedupe=DynamoDbDedupe(dedupe_table))
    response = receiver(function_url_event(message))
    assert response["statusCode"] == 200
    assert response_body(response)["outcome"] == "processed"
    [received] = harness.recorder.received
    assert received.message_id == message["MessageId"]
    assert received.topic_arn == TOPIC_ARN
    assert received.message == message["Message"]
    assert received.subject == subject
    assert received.timestamp == message["Timestamp"]
    assert received.message_attributes == message["MessageAttributes"]
    item = dynamodb_item(dedupe_table, message["MessageId"])
    assert item is not None
    assert item["State"] == {"S": "DONE"}
    assert item["TopicArn"] == {"S": TOPIC_ARN}


def test_the_same_message_delivered_twice_is_processed_once(
    harness: Harness, signer: Signer, dedupe_table: str
) -> None:
    message = signer.notification()
    receiver = harness.receiver(dedupe=DynamoDbDedupe(dedupe_table))
    first = receiver(function_url_event(message))
    second = receiver(function_url_event(message))
    assert (first["statusCode"], second["statusCode"]) == (200, 200)
    assert response_body(second)["outcome"] == "duplicate"
    assert len(harness.recorder.received) == 1


def test_a_second_container_sees_the_first_ones_record(
    harness: Harness, signer: Signer, dedupe_table: str
) -> None:
    message = signer.notification()
    harness.receiver(dedupe=DynamoDbDedupe(dedupe_table))(function_url_event(message))
    other_container = harness.receiver(dedupe=DynamoDbDedupe(dedupe_table))
    assert response_body(other_container(function_url_event(message)))["outcome"] == "duplicate"
    assert len(harness.recorder.received) == 1


def test_a_handler_failure_releases_the_claim_so_the_retry_is_processed(
    harness: Harness, signer: Signer, dedupe_table: str, capsys: pytest.CaptureFixture[str]
) -> None:
    message = signer.notification()
    receiver = harness.receiver(dedupe=DynamoDbDedupe(dedupe_table))
    harness.recorder.failures.append(RuntimeError("downstream unavailable"))
    failed = receiver(function_url_event(message))
    assert failed["statusCode"] == 500
    assert response_body(failed)["outcome"] == "retry"
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    error, summary = [line for line in lines if "_aws" not in line]  # the metrics line apart
    assert (error["level"], error["message"]) == ("ERROR", "handler failed")
    assert error["exception_name"] == "RuntimeError"
    assert "downstream unavailable" in error["exception"]
    assert error["message_id"] == message["MessageId"]
    assert (summary["level"], summary["status"], summary["outcome"]) == ("ERROR", 500, "retry")
    assert dynamodb_item(dedupe_table, message["MessageId"]) is None
    retried = receiver(function_url_event(message))
    assert retried["statusCode"] == 200
    assert response_body(retried)["outcome"] == "processed"
    assert len(harness.recorder.received) == 2
    item = dynamodb_item(dedupe_table, message["MessageId"])
    assert item is not None
    assert item["State"] == {"S": "DONE"}


def test_a_delivery_while_another_holds_the_claim_is_retried_later(
    harness: Harness, signer: Signer, dedupe_table: str
) -> None:
    message = signer.notification()
    dedupe = DynamoDbDedupe(dedupe_table)
    held = dedupe.claim(
        message["MessageId"], TOPIC_ARN, now=now(), lease_seconds=30, keep_until=now() + 3600
    )
    assert held.state is ClaimState.CLAIMED
    response = harness.receiver(dedupe=dedupe)(function_url_event(message))
    assert response["statusCode"] == 503
    assert "being processed" in response_body(response)["reason"]
    assert harness.recorder.received == []


def test_a_claim_left_by_a_crashed_delivery_is_taken_over_once_its_lease_ends(
    harness: Harness, signer: Signer, dedupe_table: str
) -> None:
    message = signer.notification()
    dedupe = DynamoDbDedupe(dedupe_table)
    dedupe.claim(
        message["MessageId"], TOPIC_ARN, now=now(), lease_seconds=30, keep_until=now() + 3600
    )
    harness.clock[0] += 31
    response = harness.receiver(dedupe=dedupe)(function_url_event(message))
    assert response["statusCode"] == 200
    assert response_body(response)["outcome"] == "processed"
    assert len(harness.recorder.received) == 1


def test_only_the_owner_of_a_claim_can_release_it(dedupe_table: str) -> None:
    dedupe = DynamoDbDedupe(dedupe_table)
    stale = dedupe.claim("m-1", TOPIC_ARN, now=now(), lease_seconds=30, keep_until=now() + 3600)
    current = dedupe.claim(
        "m-1", TOPIC_ARN, now=now() + 31, lease_seconds=30, keep_until=now() + 3600
    )
    assert current.state is ClaimState.CLAIMED
    with pytest.raises(DedupeUnavailableError, match="ConditionalCheckFailed"):
        dedupe.release(stale)
    with pytest.raises(DedupeUnavailableError, match="ConditionalCheckFailed"):
        dedupe.complete(stale)
    assert (
        dedupe.claim(
            "m-1", TOPIC_ARN, now=now() + 32, lease_seconds=30, keep_until=now() + 3600
        ).state
        is ClaimState.IN_PROGRESS
    )
    dedupe.complete(current)
    assert (
        dedupe.claim(
            "m-1", TOPIC_ARN, now=now() + 100, lease_seconds=30, keep_until=now() + 3600
        ).state
        is ClaimState.DONE
    )


def test_the_record_expires_through_ttl_after_the_replay_window(
    harness: Harness, signer: Signer, dedupe_table: str
) -> None:
    """A replay is either older than the window (refused) or finds the record (deduplicated)."""
    message = signer.notification()
    harness.receiver(dedupe=DynamoDbDedupe(dedupe_table), replay_window_seconds=600)(
        function_url_event(message)
    )
    item = dynamodb_item(dedupe_table, message["MessageId"])
    assert item is not None
    assert float(item["ExpiresAt"]["N"]) >= now() + 600 + MAX_CLOCK_SKEW_SECONDS
    ttl = boto3.client("dynamodb").describe_time_to_live(TableName=dedupe_table)
    assert ttl["TimeToLiveDescription"]["AttributeName"] == "ExpiresAt"


def test_the_lease_is_cut_to_what_is_left_of_the_invocation(
    harness: Harness, signer: Signer, dedupe_table: str
) -> None:
    class LambdaContext:
        aws_request_id = "request-1"

        def get_remaining_time_in_millis(self) -> int:
            return 4_000

    message = signer.notification()
    harness.recorder.failures.append(SystemExit("the function timed out mid-handler"))
    receiver = harness.receiver(dedupe=DynamoDbDedupe(dedupe_table))
    with pytest.raises(SystemExit):
        receiver(function_url_event(message), LambdaContext())
    item = dynamodb_item(dedupe_table, message["MessageId"])
    assert item is not None
    assert item["State"] == {"S": "IN_PROGRESS"}
    assert float(item["LeaseExpiresAt"]["N"]) == pytest.approx(now() + 5.0)


def test_without_the_table_the_delivery_is_retried_and_not_handled(
    harness: Harness, signer: Signer, aws_environment: str
) -> None:
    receiver = harness.receiver(dedupe=DynamoDbDedupe("no-such-table"))
    response = receiver(function_url_event(signer.notification()))
    assert response["statusCode"] == 503
    assert "deduplication store unavailable" in response_body(response)["reason"]
    assert harness.recorder.received == []
