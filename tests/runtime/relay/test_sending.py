"""SendMessageBatch through one SQS client per region, created on first use."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError

from cross_account_runtime.common.aws_clients import MAX_RETRIES
from cross_account_runtime.relay.sending import SendFailure, SqsClients, create_sqs_client


def test_clients_are_created_lazily_once_per_region() -> None:
    created: list[str] = []

    class Client:
        def __init__(self, region: str) -> None:
            self.region = region

        def send_message_batch(self, **request: Any) -> dict[str, Any]:
            (entry,) = request["Entries"]
            return {
                "Successful": [
                    {"Id": entry["Id"], "MessageId": f"{self.region}:{request['QueueUrl']}"}
                ]
            }

    def create(region: str) -> Client:
        created.append(region)
        return Client(region)

    clients = SqsClients(create)
    assert created == []
    entries = [{"Id": "0", "MessageBody": "m"}]
    assert clients.send_batch("us-east-1", "q1", entries).sent == {"0": "us-east-1:q1"}
    assert clients.send_batch("eu-west-1", "q2", entries).sent == {"0": "eu-west-1:q2"}
    assert clients.send_batch("us-east-1", "q3", entries).sent == {"0": "us-east-1:q3"}
    assert created == ["us-east-1", "eu-west-1"]


@pytest.mark.parametrize(
    ("code", "kind"),
    [
        ("AWS.SimpleQueueService.NonExistentQueue", "destination_missing"),
        ("QueueDoesNotExist", "destination_missing"),
        ("KMS.DisabledException", "key_refused"),
        ("KMS.AccessDeniedException", "key_refused"),
        ("KmsInvalidState", "key_refused"),
        ("KmsThrottled", "key_refused"),
        ("RequestThrottled", "send_failed"),
        ("InternalError", "send_failed"),
        (None, "send_failed"),
    ],
)
def test_a_failure_is_sorted_by_sqss_code(code: str | None, kind: str) -> None:
    assert SendFailure(code, "m").kind == kind


def test_a_failed_call_takes_its_code_from_botocore() -> None:
    error = ClientError(
        {"Error": {"Code": "AWS.SimpleQueueService.NonExistentQueue", "Message": "gone"}},
        "SendMessageBatch",
    )
    failure = SendFailure.of(error)
    assert failure.code == "AWS.SimpleQueueService.NonExistentQueue"
    assert failure.kind == "destination_missing"
    assert str(failure).startswith("ClientError: An error occurred (AWS.SimpleQueueService.")
    timeout = SendFailure.of(TimeoutError("read timeout"))
    assert (timeout.code, timeout.kind, str(timeout)) == (
        None,
        "send_failed",
        "TimeoutError: read timeout",
    )


def test_entries_sqs_refused_keep_their_code_and_fault() -> None:
    class Client:
        def send_message_batch(self, **_: Any) -> dict[str, Any]:
            return {
                "Successful": [{"Id": "0", "MessageId": "m-0"}],
                "Failed": [
                    {
                        "Id": "1",
                        "Code": "KMS.DisabledException",
                        "Message": "off",
                        "SenderFault": True,
                    }
                ],
            }

    result = SqsClients(lambda _region: Client()).send_batch("us-east-1", "q", [{}, {}])
    assert result.sent == {"0": "m-0"}
    failure = result.failed["1"]
    assert (failure.code, failure.kind, str(failure)) == (
        "KMS.DisabledException",
        "key_refused",
        "KMS.DisabledException: off (sender fault)",
    )


def test_the_clients_retry_in_standard_mode_whose_quota_the_docs_count_on() -> None:
    """docs/relay.md and aws_clients say what a throttled call costs from these numbers."""
    from botocore.retries import quota, standard  # noqa: PLC0415 (botocore's internals)

    client = create_sqs_client("us-east-1")
    assert client.meta.config.retries == {"mode": "standard", "total_max_attempts": MAX_RETRIES + 1}
    assert quota.RetryQuota.INITIAL_CAPACITY == 500
    checker = standard.RetryQuotaChecker
    assert (checker._RETRY_COST, checker._THROTTLING_RETRY_COST) == (14, 5)
    assert checker._NO_RETRY_INCREMENT == 1
