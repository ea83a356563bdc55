"""Bodies the transport put in S3, copied into the receiving account's bucket.

NServiceBus's SQS transport moves a body over SQS's limit to S3 under ``{KeyPrefix}/{MessageId}``
in the *sender's* configured bucket and sends only the key (``S3BodyKey``: the wrapped body's
member, or the attribute in the unwrapped and typed native forms); the receiver reads that key
from *its own* configured bucket. Across accounts those are two buckets, so the outbound relay
copies the object, under the same key, into the receiving account's bucket before it forwards
the message: the message never arrives before its body.

The copy is a server-side ``CopyObject`` (the body does not pass through the function), with
``ExpectedBucketOwner`` and ``ExpectedSourceBucketOwner`` so that a bucket name taken over by
another account can neither feed nor receive a body. A missing source object will not appear
on a retry (the transport uploads before it sends), so that message is dead-lettered at once
with the reason; any other failure (throttling, a grant not yet deployed) is retried by SQS
and, if it persists, ends in the queue's dead-letter queue by its redrive policy.
"""

from __future__ import annotations

from cross_account_runtime.common.aws_clients import create_client
from cross_account_runtime.nservicebus.wire_format import MESSAGE_TYPE_ATTRIBUTE, S3_BODY_KEY

# A local flag rather than ``typing.TYPE_CHECKING``: importing ``typing`` costs more than this
# whole module; mypy and ruff treat the name the same way.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any, Final

    from cross_account_runtime.nservicebus.wire_format import HeadersUpdate

MISSING_OBJECT_CODES: Final = frozenset({"NoSuchKey", "404"})


class BodyMissingError(Exception):
    """The body's object is not in the sender's bucket: no retry will bring it back."""


def body_key(record: Mapping[str, Any], update: HeadersUpdate | None) -> str | None:
    """The S3 key of the message's body, where the transport reads one: the wrapped body's
    or the Headers attribute form's ``S3BodyKey``, or a typed native message's attribute. A
    plain native message's body is its own, whatever attributes it has."""
    if update is not None:
        return update.s3_body_key or None
    attributes = record.get("messageAttributes")
    if not isinstance(attributes, dict) or MESSAGE_TYPE_ATTRIBUTE not in attributes:
        return None
    value = attributes.get(S3_BODY_KEY)
    key = value.get("stringValue") if isinstance(value, dict) else None
    return key if isinstance(key, str) and key else None


class BodyCopier:
    """``CopyObject`` from the relay's own body bucket into a receiving account's, with one S3
    client per region kept for the container's life (``create`` makes one; tests pass theirs).
    """

    def __init__(
        self,
        source_bucket: str,
        source_account: str,
        create: Callable[[str], Any] | None = None,
    ) -> None:
        self.source_bucket = source_bucket
        self.source_account = source_account
        self._create = create if create is not None else _create_s3_client
        self._clients: dict[str, Any] = {}

    def copy(self, key: str, bucket: str, account: str, region: str) -> None:
        """Copy ``key`` into ``bucket`` of ``account`` (in ``region``); raises
        :class:`BodyMissingError` if the source object does not exist."""
        client = self._clients.get(region)
        if client is None:
            client = self._clients[region] = self._create(region)
        try:
            client.copy_object(
                Bucket=bucket,
                Key=key,
                CopySource={"Bucket": self.source_bucket, "Key": key},
                ExpectedBucketOwner=account,
                ExpectedSourceBucketOwner=self.source_account,
            )
        except Exception as error:
            code = getattr(error, "response", {}).get("Error", {}).get("Code")
            if code in MISSING_OBJECT_CODES:
                raise BodyMissingError(
                    f"the body s3://{self.source_bucket}/{key} does not exist (expired after the "
                    "bucket's lifecycle days, or deleted); the message cannot be delivered "
                    "without it"
                ) from error
            raise


def _create_s3_client(region: str) -> Any:
    return create_client("s3", region)
