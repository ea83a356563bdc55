# ruff: noqa: N802, N999 -- module and test names are the upstream test's, for traceability
"""ServiceControl 6.19.2 ``src/ServiceControl.Audit.UnitTests/Receoverability/
DetectSuccessfulRetriesEnricherTests.cs`` (``src/ServiceControl.Audit/Recoverability/
DetectSuccessfulRetriesEnricher.cs``)."""

from __future__ import annotations

from datetime import UTC, datetime

from local_aws.released_transport.service_control.audit import detect_successful_retry

NOW = datetime(2024, 5, 6, 7, 8, 9, tzinfo=UTC)


def test_It_does_not_sent_acknowledgement_if_audit_comes_from_new_endpoint_version() -> None:
    headers = {
        "ServiceControl.Retry.UniqueMessageId": "MyId",
        "ServiceControl.Retry.AcknowledgementQueue": "ErrorQueue",
        "ServiceControl.Retry.AcknowledgementSent": "true",
    }

    assert detect_successful_retry(headers, NOW) == (True, None)


def test_It_does_not_acknowledge_if_retry_comes_from_old_ServiceControl() -> None:
    assert detect_successful_retry({"ServiceControl.Retry.UniqueMessageId": "MyId"}, NOW) == (
        True,
        None,
    )


def test_It_sends_acknowledgement_if_audit_comes_from_old_endpoint_version() -> None:
    headers = {
        "ServiceControl.Retry.UniqueMessageId": "MyId",
        "ServiceControl.Retry.AcknowledgementQueue": "ErrorQueue",
    }

    retried, acknowledgement = detect_successful_retry(headers, NOW)

    assert retried
    assert acknowledgement is not None
    assert acknowledgement.destination == "ErrorQueue"
    assert acknowledgement.message.headers == {
        "ServiceControl.Retry.Successful": "2024-05-06 07:08:09:000000 Z",
        "ServiceControl.Retry.UniqueMessageId": "MyId",
    }


def test_a_message_that_was_never_retried_is_not_retried() -> None:
    assert detect_successful_retry({}, NOW) == (False, None)
