# ruff: noqa: N802 -- test names are the upstream tests', for traceability
"""What core's recoverability actions send (NServiceBus 10.2.5 ``src/NServiceBus.Core/
Recoverability/DelayedRetry.cs``, ``MoveToError.cs``, ``Faults/FaultMetadataExtractor.cs``;
tests after ``src/NServiceBus.Core.Tests/Recoverability/FaultMetadataExtractorTests.cs``,
``DelayedRetryRecoverabilityActionTests.cs`` and ``MoveToErrorsExecutorTests.cs``)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from local_aws.released_transport.core.host import HostInformation
from local_aws.released_transport.core.incoming import ErrorContext
from local_aws.released_transport.core.outgoing import TransportTransaction
from local_aws.released_transport.core.recoverability import (
    delayed_retry_message,
    fault_metadata,
    move_to_error_message,
)
from local_aws.released_transport.dotnet.time_formats import to_wire_format

NOW = datetime(2024, 1, 2, 3, 4, 5, 123456, tzinfo=UTC)
HOST = HostInformation("Sales", "MACHINE", "0" * 32, "Display")


def _an_exception() -> BaseException:
    try:
        try:
            raise OSError("inner")
        except OSError as inner:
            raise ValueError("outer") from inner
    except ValueError as outer:
        return outer


def _context(
    headers: dict[str, str | None] | None = None, exception: BaseException | None = None
) -> ErrorContext:
    return ErrorContext(
        exception or _an_exception(),
        dict(headers or {"NServiceBus.MessageId": "id"}),
        "native",
        b"body",
        TransportTransaction({}, "id"),
        6,
        "DEV-Sales",
    )


def test_VerifyExceptionHeadersAreSet() -> None:
    exception = _an_exception()

    metadata = fault_metadata(_context(exception=exception), HOST, NOW)

    assert metadata["NServiceBus.ExceptionInfo.ExceptionType"] == "builtins.ValueError"
    assert metadata["NServiceBus.ExceptionInfo.InnerExceptionType"] == "builtins.OSError"
    assert metadata["NServiceBus.ExceptionInfo.Message"] == "outer"
    assert metadata["NServiceBus.ExceptionInfo.Source"] == __name__
    stack_trace = str(metadata["NServiceBus.ExceptionInfo.StackTrace"])
    assert stack_trace.startswith("builtins.ValueError: outer\n")
    assert "_an_exception" in stack_trace
    assert metadata["NServiceBus.TimeOfFailure"] == "2024-01-02 03:04:05:123456 Z"
    assert metadata["NServiceBus.FailedQ"] == "DEV-Sales"
    assert "NServiceBus.ExceptionInfo.HelpLink" not in metadata


def test_ExceptionMessageIsTruncated() -> None:
    metadata = fault_metadata(_context(exception=Exception("x" * 2**15)), HOST, NOW)

    assert len(str(metadata["NServiceBus.ExceptionInfo.Message"])) == 2**14


def test_ShouldApplyStaticMetadata() -> None:
    metadata = fault_metadata(_context(), HOST, NOW)

    assert list(metadata)[:5] == [
        "NServiceBus.ProcessingMachine",
        "NServiceBus.ProcessingEndpoint",
        "$.diagnostics.hostid",
        "$.diagnostics.hostdisplayname",
        "NServiceBus.FailedQ",
    ]
    assert metadata["NServiceBus.ProcessingEndpoint"] == "Sales"
    assert metadata["NServiceBus.ProcessingMachine"] == "MACHINE"


def test_a_traced_message_starts_a_new_trace_after_recoverability() -> None:
    context = _context({"NServiceBus.MessageId": "id", "traceparent": "00-1-2-01"})

    assert fault_metadata(context, HOST, NOW)["NServiceBus.OpenTelemetry.StartNewTrace"] == "True"
    message, _ = delayed_retry_message(context, timedelta(seconds=10), NOW)
    assert message.headers["NServiceBus.OpenTelemetry.StartNewTrace"] == "True"


def test_When_delay_message_retry() -> None:
    message, properties = delayed_retry_message(_context(), timedelta(seconds=10), NOW)

    assert message.message_id == "id"
    assert message.body == b"body"
    assert properties.delay_deliver_with == timedelta(seconds=10)


def test_Should_update_retry_headers_when_present() -> None:
    original = to_wire_format(NOW - timedelta(minutes=1))
    context = _context(
        {
            "NServiceBus.MessageId": "id",
            "NServiceBus.Retries": "2",
            "NServiceBus.Retries.Timestamp": original,
        }
    )

    message, _ = delayed_retry_message(context, timedelta(seconds=30), NOW)

    assert message.headers["NServiceBus.Retries"] == "3"
    assert message.headers["NServiceBus.Retries.Timestamp"] == to_wire_format(NOW)
    assert context.headers["NServiceBus.Retries"] == "2"
    assert context.headers["NServiceBus.Retries.Timestamp"] == original


def test_Should_add_retry_headers_when_not_present() -> None:
    context = _context()

    message, _ = delayed_retry_message(context, timedelta(seconds=10), NOW)

    assert message.headers["NServiceBus.Retries"] == "1"
    assert "NServiceBus.Retries" not in context.headers
    assert "NServiceBus.Retries.Timestamp" in message.headers


def test_MoveToErrorQueue_should_preserve_incoming_message_headers() -> None:
    context = _context({"NServiceBus.MessageId": "id", "custom": "value"})

    message = move_to_error_message(context, HOST, NOW)

    assert message.headers["custom"] == "value"
    assert message.message_id == "id"
    assert message.body == b"body"


def test_MoveToErrorQueue_should_remove_known_retry_headers() -> None:
    timestamp = to_wire_format(NOW)
    context = _context(
        {
            "NServiceBus.MessageId": "id",
            "NServiceBus.Retries": "3",
            "NServiceBus.FLRetries": "1",
            "NServiceBus.Retries.Timestamp": timestamp,
        }
    )

    message = move_to_error_message(context, HOST, NOW)

    assert "NServiceBus.Retries" not in message.headers
    assert "NServiceBus.FLRetries" not in message.headers
    assert message.headers["NServiceBus.Retries.Timestamp"] == timestamp


def test_MoveToErrorQueue_should_add_metadata_to_headers() -> None:
    context = _context()

    message = move_to_error_message(context, HOST, NOW)

    assert message.headers["NServiceBus.FailedQ"] == "DEV-Sales"
    assert "NServiceBus.FailedQ" not in context.headers
