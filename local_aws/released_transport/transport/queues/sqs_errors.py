"""The SQS errors the transport tells apart, as botocore reports them.

The transport catches three kinds of ``AmazonSQSException`` by type or code
(``src/NServiceBus.Transport.SQS/ExceptionExtensions.cs``, ``Receiving/InputQueuePump.cs``,
``Sending/MessageDispatcher.cs``): a missing queue (``QueueDoesNotExistException``, which it
rethrows with its own message), an invalid receipt handle, and an expired visibility timeout
(``InvalidParameterValue``, a sender fault, HTTP 400). botocore raises ``ClientError`` with the
code in the response; the JSON protocol and the older query protocol name a missing queue
differently, so both names count.
"""

from __future__ import annotations

from typing import Final

from botocore.exceptions import ClientError

_QUEUE_DOES_NOT_EXIST_CODES: Final = frozenset(
    {"AWS.SimpleQueueService.NonExistentQueue", "QueueDoesNotExist"}
)
_RECEIPT_HANDLE_INVALID_CODES: Final = frozenset({"ReceiptHandleIsInvalid"})
_VISIBILITY_EXPIRED_CODE: Final = "InvalidParameterValue"
_BAD_REQUEST: Final = 400


class QueueDoesNotExistError(Exception):
    """``QueueDoesNotExistException``: the queue a name or URL points at is not there. The
    message is the transport's own where it rewrites it, else the service's."""


def error_code(error: BaseException) -> str | None:
    """The service's error code of a botocore ``ClientError``, else ``None``."""
    if isinstance(error, ClientError):
        code = error.response.get("Error", {}).get("Code")
        return code if isinstance(code, str) else None
    return None


def is_queue_does_not_exist(error: BaseException) -> bool:
    """Whether ``error`` says the queue does not exist."""
    return isinstance(error, QueueDoesNotExistError) or (
        error_code(error) in _QUEUE_DOES_NOT_EXIST_CODES
    )


def as_queue_does_not_exist(error: BaseException) -> QueueDoesNotExistError:
    """``error`` as the model's :class:`QueueDoesNotExistError`, keeping the service message."""
    if isinstance(error, QueueDoesNotExistError):
        return error
    message = (
        error.response.get("Error", {}).get("Message") if isinstance(error, ClientError) else None
    )
    converted = QueueDoesNotExistError(message or str(error))
    converted.__cause__ = error
    return converted


def is_receipt_handle_invalid_or_visibility_expired(error: BaseException) -> bool:
    """``ReceiptHandleIsInvalidException``, or ``IsCausedByMessageVisibilityExpiry``."""
    code = error_code(error)
    if code in _RECEIPT_HANDLE_INVALID_CODES:
        return True
    if code != _VISIBILITY_EXPIRED_CODE or not isinstance(error, ClientError):
        return False
    status = error.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
    return bool(status == _BAD_REQUEST)
