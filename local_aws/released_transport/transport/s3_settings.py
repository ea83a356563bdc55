"""Where large message bodies go: ``S3Settings`` and the encryption of the objects.

An endpoint with S3 settings puts a body that would make its message too large into *its own*
bucket, under ``{KeyPrefix}/{MessageId}``, and reads a received message's body from *its own*
bucket by the key on the wire (the bucket's name never travels). The bucket name is checked as
the settings are built, with the transport's messages; the key prefix must not be null, empty or
white space.

Encryption changes the requests: a managed key (``S3EncryptionWithManagedKey``) sets the
server-side encryption method and, when given, the KMS key id on the upload only; a customer
key (``S3EncryptionWithCustomerProvidedKey``) sets the SSE-C method, key and key MD5 on both the
upload and the download. The .NET key is the base64 text of the key; boto3 takes the raw key and
computes the MD5 itself unless one is given, so the model passes the decoded key when there is
no MD5 and the text as it is when there is (both put the same headers on the wire).
``DisablePayloadSigning`` only changes how the upload is signed and is not modelled.

Facts: NServiceBus.AmazonSQS 9.1.1 ``src/NServiceBus.Transport.SQS/Configure/S3Settings.cs``,
``S3EncryptionMethod.cs``, ``S3EncryptionWithManagedKey.cs``,
``S3EncryptionWithCustomerProvidedKey.cs``, ``NullEncryption.cs``.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

from local_aws.released_transport.dotnet.text import (
    is_letter_or_digit,
    is_null_or_whitespace,
    utf16_length,
    utf16_units,
)

_MINIMUM_BUCKET_NAME_LENGTH: Final = 3
_MAXIMUM_BUCKET_NAME_LENGTH: Final = 63
_BUCKET_PUNCTUATION: Final = frozenset(map(ord, "-."))


class S3SettingsError(ValueError):
    """.NET's ``ArgumentException`` from the constructor."""


class S3EncryptionMethod(Protocol):
    """``S3EncryptionMethod``: what it adds to the upload and the download requests."""

    def modify_put_request(self, request: dict[str, Any]) -> None:
        """``ModifyPutRequest``."""

    def modify_get_request(self, request: dict[str, Any]) -> None:
        """``ModifyGetRequest``."""


@dataclass(frozen=True)
class S3EncryptionWithManagedKey:
    """SSE-S3 or SSE-KMS: ``method`` is ``AES256``, ``aws:kms`` or ``aws:kms:dsse``."""

    method: str
    key_id: str | None = None

    def modify_put_request(self, request: dict[str, Any]) -> None:
        """The method and, when not empty, the KMS key id."""
        request["ServerSideEncryption"] = self.method
        if self.key_id:
            request["SSEKMSKeyId"] = self.key_id

    def modify_get_request(self, request: dict[str, Any]) -> None:
        """Nothing: the service decrypts what it encrypted."""


@dataclass(frozen=True)
class S3EncryptionWithCustomerProvidedKey:
    """SSE-C: ``key`` is the base64 text of the key, as in .NET."""

    method: str
    key: str
    key_md5: str | None = None

    def modify_put_request(self, request: dict[str, Any]) -> None:
        """The SSE-C headers."""
        self._apply(request)

    def modify_get_request(self, request: dict[str, Any]) -> None:
        """The same SSE-C headers: the service needs the key to decrypt."""
        self._apply(request)

    def _apply(self, request: dict[str, Any]) -> None:
        request["SSECustomerAlgorithm"] = self.method
        if self.key_md5:
            request["SSECustomerKey"] = self.key
            request["SSECustomerKeyMD5"] = self.key_md5
        else:
            request["SSECustomerKey"] = base64.b64decode(self.key)


def _check_bucket_name(bucket_name: str) -> None:
    """The constructor's checks, in its order."""
    if not _MINIMUM_BUCKET_NAME_LENGTH <= utf16_length(bucket_name) <= _MAXIMUM_BUCKET_NAME_LENGTH:
        raise S3SettingsError("S3 Bucket names must be between 3 and 63 characters in length.")
    if any(
        not is_letter_or_digit(unit) and unit not in _BUCKET_PUNCTUATION
        for unit in utf16_units(bucket_name)
    ):
        raise S3SettingsError(
            "S3 Bucket names must only contain letters, numbers, hyphens and periods."
        )
    if bucket_name.endswith("-"):
        raise S3SettingsError("S3 Bucket names must not end with a hyphen.")
    if ".." in bucket_name:
        raise S3SettingsError("S3 Bucket names must not contain two adjacent periods.")
    if ".-" in bucket_name or "-." in bucket_name:
        raise S3SettingsError("S3 Bucket names must not contain hyphens adjacent to periods.")


@dataclass(frozen=True)
class S3Settings:
    """``new S3Settings(bucketForLargeMessages, keyPrefix, s3Client)`` and ``Encryption``: the
    key prefix is checked before the bucket name, as there.

        ``s3`` is the endpoint's S3 client (the model has no default client factory). The checks
        accept what .NET accepts: upper case and letters of any script pass, though S3 refuses them.
    """

    bucket_name: str
    key_prefix: str
    s3: Any = field(compare=False)
    encryption: S3EncryptionMethod | None = None

    def __post_init__(self) -> None:
        if is_null_or_whitespace(self.key_prefix):
            raise S3SettingsError(
                "The value cannot be an empty string or composed entirely of whitespace."
                " (Parameter 'keyPrefix')"
            )
        _check_bucket_name(self.bucket_name)

    def body_key(self, message_id: str) -> str:
        """Where a body is uploaded: ``{KeyPrefix}/{MessageId}``."""
        return f"{self.key_prefix}/{message_id}"

    def upload(self, key: str, body: bytes) -> None:
        """``PutObject`` of the raw body (no content type), with the encryption's additions."""
        request: dict[str, Any] = {"Bucket": self.bucket_name, "Key": key, "Body": body}
        if self.encryption is not None:
            self.encryption.modify_put_request(request)
        self.s3.put_object(**request)

    def download(self, key: str) -> bytes:
        """``GetObject`` from this endpoint's bucket, with the encryption's additions."""
        request: dict[str, Any] = {"Bucket": self.bucket_name, "Key": key}
        if self.encryption is not None:
            self.encryption.modify_get_request(request)
        return bytes(self.s3.get_object(**request)["Body"].read())
