"""Bodies in S3: those the transport put there, copied into the receiving account's bucket, and
those the relay puts there itself when a message no longer fits inline.

NServiceBus's SQS transport moves a body over SQS's limit to S3 under ``{KeyPrefix}/{MessageId}``
in the *sender's* configured bucket and sends only the key (``S3BodyKey``: the wrapped body's
member, or the attribute in the unwrapped and typed native forms); the receiver reads that key
from *its own* configured bucket. Across accounts those are two buckets, so the outbound relay
copies the object into the receiving account's bucket before it forwards the message, which
then names the copy's key: the message never arrives before its body.

**Every key the relay writes begins with its account's own prefix**, ``relay/<account id>/``
(:func:`relay_prefix`): the copy of ``{KeyPrefix}/{MessageId}`` goes to
``relay/<sender account>/{KeyPrefix}/{MessageId}`` (:func:`copied_key`). The receiving bucket
lets each sending relay write under its own account's prefix alone, so no sender can overwrite
the receiving account's own bodies or another sender's.

The copy is a server-side ``CopyObject`` (the body does not pass through the function), with
``ExpectedBucketOwner`` and ``ExpectedSourceBucketOwner`` so that a bucket name taken over by
another account can neither feed nor receive a body. A missing source object will not appear
on a retry (the transport uploads before it sends), so that message is dead-lettered at once
with the reason; any other failure (throttling, a grant not yet deployed) is retried by SQS
and, if it persists, ends in the queue's dead-letter queue by its redrive policy.

**Bodies that no longer fit.** The transport keeps a body inline while the message is at most
1 MiB *as it counts* (``SqsPreparedMessage.CalculateSize``: the body's UTF-16 length, the
attributes' names, types and values, plus ``ReserveBytesInMessageSizeCalculation``). The ARN
header the outbound relay stamps (about 100 bytes per address), or the inbound relay's form
conversion (base64 grows a text body by a third) and address translation, can push such a
message past SQS's 1,048,576 bytes. With a body bucket on the route the relay then does what
the transport does with a large body (``MessageDispatcher.PrepareSqsMessageBasedOnBodySize``):
it uploads the payload, the bytes the receiver would have decoded from the inline body, to the
bucket the receiver reads (outbound: the receiving account's; inbound: its own account's),
with ``ExpectedBucketOwner``, under a key derived from the source queue and the SQS message id
(:func:`upload_key`), so a retried upload overwrites the same object; and it sends the message
as the transport writes an S3 body (:func:`cross_account_runtime.relay.forms.write_message`).
A failed upload is retried by SQS as a failed copy is. The bucket's lifecycle rule expires
these objects as it expires the transport's own.
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

    from cross_account_runtime.nservicebus.queue_arn import QueueArn
    from cross_account_runtime.nservicebus.wire_writing import HeadersUpdate

MISSING_OBJECT_CODES: Final = frozenset({"NoSuchKey", "404"})
RELAY_KEY_PREFIX: Final = "relay"
"""What every key a relay writes starts with, before its account's id."""


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


def relay_prefix(account: str) -> str:
    """``relay/<account id>/``: the prefix under which the relays of ``account`` write, and
    alone may write, into a body bucket."""
    return f"{RELAY_KEY_PREFIX}/{account}/"


def upload_key(source: QueueArn, message_id: str) -> str:
    """The key the relay uploads a body under: the same for every receive of one message of
    ``source``, so a retry overwrites its own object, and under the prefix of ``source``'s
    account (the relay's own), distinct from any key the transport writes."""
    return f"{relay_prefix(source.account)}{source.name}/{message_id}"


def copied_key(account: str, key: str) -> str:
    """The key under which the relay of ``account`` copies the body ``key`` into another
    account's bucket: its own prefix before the transport's key, the same on every retry."""
    return f"{relay_prefix(account)}{key}"


class BodyUpload:
    """A payload to put into ``bucket`` of ``account`` in ``region`` under ``key`` before the
    message that names it is sent."""

    __slots__ = ("account", "bucket", "key", "payload", "region")

    def __init__(self, bucket: str, key: str, account: str, region: str, payload: bytes) -> None:
        self.bucket = bucket
        self.key = key
        self.account = account
        self.region = region
        self.payload = payload


class BodyStore:
    """The relay's S3 calls, with one client per region kept for the container's life
    (``create`` makes one; tests pass theirs): ``CopyObject`` from the relay's own body bucket
    (``source_bucket``, outbound) into a receiving account's, and ``PutObject`` of a payload
    that no longer fits inline."""

    def __init__(
        self,
        source_bucket: str | None,
        source_account: str,
        create: Callable[[str], Any] | None = None,
    ) -> None:
        self.source_bucket = source_bucket
        self.source_account = source_account
        self._create = create if create is not None else _create_s3_client
        self._clients: dict[str, Any] = {}

    def put(self, upload: BodyUpload) -> None:
        """Put ``upload``'s payload, in a bucket its account must own."""
        self._client(upload.region).put_object(
            Bucket=upload.bucket,
            Key=upload.key,
            Body=upload.payload,
            ExpectedBucketOwner=upload.account,
        )

    def copy(self, key: str, copied: str, bucket: str, account: str, region: str) -> None:
        """Copy ``key`` into ``bucket`` of ``account`` (in ``region``) as ``copied``; raises
        :class:`BodyMissingError` if the source object does not exist."""
        if self.source_bucket is None:
            raise ValueError("source_bucket: only an outbound relay copies bodies")
        client = self._client(region)
        try:
            client.copy_object(
                Bucket=bucket,
                Key=copied,
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

    def _client(self, region: str) -> Any:
        client = self._clients.get(region)
        if client is None:
            client = self._clients[region] = self._create(region)
        return client


def _create_s3_client(region: str) -> Any:
    return create_client("s3", region)
