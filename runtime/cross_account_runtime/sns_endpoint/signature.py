"""Verify that a message an HTTP(S) endpoint received was signed by Amazon SNS.

An HTTP(S) subscription cannot be protected by IAM: the endpoint is public, so anyone can POST
something that looks like an SNS message. The signature is the only proof of origin, and the
SDK helpers check it against whatever certificate the message itself points to, without first
checking that the certificate URL belongs to SNS. :func:`verify` therefore does both:

1. the certificate URL must be ``https`` on an SNS host of any partition
   (``sns.<region>.amazonaws.com``, ``sns.<region>.amazonaws.com.cn``), without userinfo or a
   port, with a path ending ``.pem``: only then is the certificate fetched;
2. the certificate must be a current X.509 certificate for an RSA key of at least 2048 bits
   whose key usage (if stated) allows digital signatures;
3. the ``Signature`` must verify over the string to sign of the message's ``Type``, with SHA1
   (``SignatureVersion`` 1) or SHA256 (``SignatureVersion`` 2) and PKCS #1 v1.5 padding.

The parsed public key is cached per certificate URL (with a time to live and a size bound) so a
warm Lambda container pays for one RSA verification per message and no parsing or network.

``cryptography`` is imported inside the functions that need it: importing it costs more than the
rest of a cold start, and messages that fail the cheap checks never need it.
"""

from __future__ import annotations

import base64
import re
import threading
import time
from collections import OrderedDict

# A local flag rather than ``typing.TYPE_CHECKING``: importing ``typing`` costs import time on
# every cold start; mypy and ruff treat the name the same way.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import ssl
    from collections.abc import Callable, Mapping
    from typing import Final

    from cryptography.hazmat.primitives.asymmetric.rsa import RSAPublicKey

    CertificateFetcher = Callable[[str], bytes]

NOTIFICATION: Final = "Notification"
SUBSCRIPTION_CONFIRMATION: Final = "SubscriptionConfirmation"
UNSUBSCRIBE_CONFIRMATION: Final = "UnsubscribeConfirmation"

# The fields each message type signs, in the order SNS concatenates them. ``Subject`` is signed
# only when the message has one.
SIGNED_FIELDS: Final[Mapping[str, tuple[str, ...]]] = {
    NOTIFICATION: ("Message", "MessageId", "Subject", "Timestamp", "TopicArn", "Type"),
    SUBSCRIPTION_CONFIRMATION: (
        "Message",
        "MessageId",
        "SubscribeURL",
        "Timestamp",
        "Token",
        "TopicArn",
        "Type",
    ),
    UNSUBSCRIBE_CONFIRMATION: (
        "Message",
        "MessageId",
        "SubscribeURL",
        "Timestamp",
        "Token",
        "TopicArn",
        "Type",
    ),
}
OPTIONAL_SIGNED_FIELDS: Final = frozenset({"Subject"})
SIGNATURE_VERSIONS: Final = {"1": "SHA1", "2": "SHA256"}

# SNS in every partition: aws, aws-us-gov (sns.us-gov-west-1.amazonaws.com) and aws-cn
# (sns.cn-north-1.amazonaws.com.cn).
SNS_HOST: Final = re.compile(r"sns\.[a-z0-9-]+\.amazonaws\.com(?:\.cn)?")
# What a URL may contain at all: visible ASCII. Whitespace, control characters and non-ASCII
# letters are where URL parsers disagree with each other (and with the HTTP client).
_URL_CHARACTERS: Final = re.compile(r"[\x21-\x7e]+")

# AWS SDK for Java v2 (SnsMessageManager) refuses certificates over 10 KB; an SNS signing
# certificate is under 2 KB.
MAX_CERTIFICATE_BYTES: Final = 10 * 1024
# SNS gives an endpoint 15 s to answer; the certificate fetch must leave room for the rest.
CERTIFICATE_FETCH_TIMEOUT_SECONDS: Final = 5.0
MIN_RSA_KEY_BITS: Final = 2048


class SignatureError(ValueError):
    """The message is not proven to come from SNS.

    ``field`` names the message field at fault, ``reason`` says what is wrong with it and what
    a genuine SNS message has instead.
    """

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason


class MalformedSnsMessageError(SignatureError):
    """The message lacks a field or has one of the wrong form, so it cannot even be checked."""


class CertificateFetchError(SignatureError):
    """The signing certificate could not be fetched.

    ``retryable`` is true when the cause is transient (network, timeout, a 5xx answer): the
    message may be genuine, so the caller should ask SNS to deliver it again rather than drop it.
    """

    def __init__(self, reason: str, *, retryable: bool) -> None:
        super().__init__("SigningCertURL", reason)
        self.retryable = retryable


class FetchError(OSError):
    """An HTTPS GET failed; ``retryable`` says whether trying again later may succeed."""

    def __init__(self, url: str, reason: str, *, retryable: bool) -> None:
        super().__init__(f"GET {url}: {reason}")
        self.reason = reason
        self.retryable = retryable


class CertificateCache:
    """Public keys by certificate URL, each for at most ``ttl_seconds`` and never past the
    certificate's expiry, at most ``max_entries`` of them (least recently used evicted first).

    SNS signs with one certificate per region at a time and rotates it rarely, so a handful of
    entries cover a container's life; the bound keeps an attacker who finds many SNS-hosted
    ``.pem`` URLs from growing memory, and the TTL makes a rotated certificate be fetched again.
    Thread-safe.
    """

    def __init__(
        self,
        *,
        ttl_seconds: float = 3600.0,
        max_entries: int = 16,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if ttl_seconds <= 0:
            raise ValueError(f"ttl_seconds must be positive, got {ttl_seconds!r}")
        if max_entries < 1:
            raise ValueError(f"max_entries must be at least 1, got {max_entries!r}")
        self.ttl_seconds = ttl_seconds
        self.max_entries = max_entries
        self.clock = clock
        self._entries: OrderedDict[str, tuple[RSAPublicKey, float]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, url: str) -> RSAPublicKey | None:
        """The key cached for ``url`` if it has not expired (and mark it recently used)."""
        with self._lock:
            entry = self._entries.get(url)
            if entry is None:
                return None
            key, expires_at = entry
            if self.clock() >= expires_at:
                del self._entries[url]
                return None
            self._entries.move_to_end(url)
            return key

    def put(self, url: str, key: RSAPublicKey, not_after: float) -> None:
        """Cache ``key`` until the TTL runs out or ``not_after`` (epoch seconds), if sooner."""
        with self._lock:
            self._entries[url] = (key, min(self.clock() + self.ttl_seconds, not_after))
            self._entries.move_to_end(url)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        """Forget every key (for example after a certificate was revoked)."""
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def __contains__(self, url: object) -> bool:
        with self._lock:
            return url in self._entries


DEFAULT_CACHE: Final = CertificateCache()


def https_get(
    url: str,
    *,
    timeout: float,
    max_bytes: int,
    ssl_context: ssl.SSLContext | None = None,
) -> bytes:
    """GET ``url`` over TLS (certificate and host name verified against ``ssl_context``, by
    default the system's trust store) and return at most ``max_bytes`` of body; refuse
    redirects and larger answers.

    Redirects are refused because the URL was checked before the call: following a ``Location``
    would fetch from a host nobody checked. Raises :class:`FetchError`.
    """
    import ssl  # noqa: PLC0415 (lazy, for cold starts)
    import urllib.error  # noqa: PLC0415 (lazy, for cold starts)
    import urllib.request  # noqa: PLC0415 (lazy, for cold starts)

    if not url.startswith("https://"):
        raise FetchError(url, "only https URLs are fetched", retryable=False)

    class _RefuseRedirects(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *_args: object, **_kwargs: object) -> None:
            return None

    # Explicit, so that no environment setting (PYTHONHTTPSVERIFY=0) can turn verification off.
    context = ssl_context if ssl_context is not None else ssl.create_default_context()
    opener = urllib.request.build_opener(
        urllib.request.HTTPSHandler(context=context), _RefuseRedirects()
    )
    try:
        with opener.open(url, timeout=timeout) as response:
            body: bytes = response.read(max_bytes + 1)
    except urllib.error.HTTPError as error:
        retryable = error.code >= 500 or error.code in (408, 429)
        raise FetchError(url, f"HTTP status {error.code}", retryable=retryable) from error
    except urllib.error.URLError as error:
        raise FetchError(url, f"connection failed: {error.reason}", retryable=True) from error
    except OSError as error:
        raise FetchError(url, f"connection failed: {error}", retryable=True) from error
    if len(body) > max_bytes:
        raise FetchError(url, f"answer larger than {max_bytes} bytes", retryable=False)
    return body


def download_certificate(url: str) -> bytes:
    """The default certificate fetcher: the PEM at ``url``, over verified TLS, within
    :data:`CERTIFICATE_FETCH_TIMEOUT_SECONDS` and :data:`MAX_CERTIFICATE_BYTES`.

    Raises :class:`FetchError`, which :func:`public_key` turns into a
    :class:`CertificateFetchError`."""
    return https_get(
        url, timeout=CERTIFICATE_FETCH_TIMEOUT_SECONDS, max_bytes=MAX_CERTIFICATE_BYTES
    )


def check_sns_url(url: str, *, field: str) -> None:
    """Raise :class:`SignatureError` unless ``url`` is ``https://`` on an SNS host.

    The host is read the way an HTTP client reads it, and anything that lets two readers
    disagree is refused outright: userinfo (``sns.us-east-1.amazonaws.com@evil.example``), a
    port, backslashes, whitespace and non-ASCII characters.
    """
    if not _URL_CHARACTERS.fullmatch(url) or "\\" in url:
        raise SignatureError(
            field,
            "must be printable ASCII without spaces or backslashes; SNS URLs never contain them",
        )
    scheme, separator, rest = url.partition("://")
    if not separator or scheme != "https":
        raise SignatureError(field, f"must use https, got {url!r}")
    authority = re.split(r"[/?#]", rest, maxsplit=1)[0]
    if "@" in authority:
        raise SignatureError(field, f"must not carry userinfo ('@'), got {url!r}")
    if ":" in authority:
        raise SignatureError(field, f"must not name a port, got {url!r}")
    if not SNS_HOST.fullmatch(authority.lower()):
        raise SignatureError(
            field,
            f"host {authority!r} is not SNS; expected sns.<region>.amazonaws.com "
            "or sns.<region>.amazonaws.com.cn",
        )


def check_certificate_url(url: str) -> None:
    """Raise :class:`SignatureError` unless ``url`` may hold an SNS signing certificate:
    :func:`check_sns_url`, plus a path ending ``.pem`` and no query or fragment."""
    check_sns_url(url, field="SigningCertURL")
    path = url.partition("://")[2].partition("/")[2]
    if "?" in url or "#" in url:
        raise SignatureError("SigningCertURL", f"must not have a query or fragment, got {url!r}")
    if not path.endswith(".pem"):
        raise SignatureError("SigningCertURL", f"path must end with .pem, got {url!r}")


def text_field(message: Mapping[str, object], field: str) -> str:
    """``message[field]`` if it is text; :class:`MalformedSnsMessageError` naming it otherwise."""
    if field not in message:
        raise MalformedSnsMessageError(field, "is missing; every SNS message of this type has it")
    value = message[field]
    if not isinstance(value, str):
        raise MalformedSnsMessageError(field, f"must be a JSON string, got {type(value).__name__}")
    return value


def string_to_sign(message: Mapping[str, object]) -> str:
    """The text SNS signed: ``name\\nvalue\\n`` for each signed field of the message's type.

    A ``Subject`` that is absent or JSON ``null`` is left out, as SNS leaves it out when the
    publisher gave none.
    """
    message_type = text_field(message, "Type")
    fields = SIGNED_FIELDS.get(message_type)
    if fields is None:
        raise MalformedSnsMessageError(
            "Type",
            f"unknown message type {message_type!r}; expected one of {', '.join(SIGNED_FIELDS)}",
        )
    parts = []
    for field in fields:
        if field in OPTIONAL_SIGNED_FIELDS and message.get(field) is None:
            continue
        parts.append(f"{field}\n{text_field(message, field)}\n")
    return "".join(parts)


def verify(
    message: Mapping[str, object],
    *,
    fetch_certificate: CertificateFetcher = download_certificate,
    cache: CertificateCache | None = None,
) -> None:
    """Return if ``message`` (a parsed SNS JSON body) carries a valid SNS signature.

    Raises :class:`MalformedSnsMessageError` for a malformed message, :class:`CertificateFetchError`
    when the certificate cannot be had (see ``retryable``), and :class:`SignatureError` for
    anything else that fails. ``fetch_certificate`` maps a checked certificate URL to PEM bytes;
    ``cache`` defaults to a process-wide :class:`CertificateCache`.
    """
    signed_text = string_to_sign(message)
    version = text_field(message, "SignatureVersion")
    algorithm = SIGNATURE_VERSIONS.get(version)
    if algorithm is None:
        raise MalformedSnsMessageError(
            "SignatureVersion",
            f"unsupported version {version!r}; SNS signs with 1 (SHA1withRSA) or 2 (SHA256withRSA)",
        )
    signature = _decode_signature(text_field(message, "Signature"))
    url = text_field(message, "SigningCertURL")
    check_certificate_url(url)
    key = public_key(url, fetch_certificate=fetch_certificate, cache=cache)
    _check_signature(key, signature, signed_text.encode("utf-8"), algorithm)


def public_key(
    url: str,
    *,
    fetch_certificate: CertificateFetcher = download_certificate,
    cache: CertificateCache | None = None,
) -> RSAPublicKey:
    """The checked public key of the certificate at ``url``, from ``cache`` or fetched.

    ``url`` must already have passed :func:`check_certificate_url`. Failures are not cached: a
    transient fetch failure must not turn into a rejection of every later message.
    """
    cache = DEFAULT_CACHE if cache is None else cache
    key = cache.get(url)
    if key is not None:
        return key
    try:
        pem = fetch_certificate(url)
    except FetchError as error:
        raise CertificateFetchError(
            f"fetching the certificate failed: {error.reason}", retryable=error.retryable
        ) from error
    except OSError as error:
        raise CertificateFetchError(
            f"fetching the certificate failed: {error}", retryable=True
        ) from error
    key, not_after = _load_certificate(pem, now=cache.clock())
    cache.put(url, key, not_after)
    return key


def _load_certificate(pem: bytes, *, now: float) -> tuple[RSAPublicKey, float]:
    """The RSA key of the PEM certificate and its expiry (epoch seconds), after checks."""
    from cryptography import x509  # noqa: PLC0415 (lazy, for cold starts)
    from cryptography.hazmat.primitives.asymmetric.rsa import RSAPublicKey  # noqa: PLC0415 (lazy, for cold starts)

    if len(pem) > MAX_CERTIFICATE_BYTES:
        raise SignatureError(
            "SigningCertURL", f"certificate larger than {MAX_CERTIFICATE_BYTES} bytes"
        )
    try:
        certificate = x509.load_pem_x509_certificate(pem)
    except ValueError as error:
        raise SignatureError(
            "SigningCertURL", f"the document is not a PEM X.509 certificate ({error})"
        ) from error
    not_before = certificate.not_valid_before_utc.timestamp()
    not_after = certificate.not_valid_after_utc.timestamp()
    if not not_before <= now < not_after:
        raise SignatureError(
            "SigningCertURL",
            f"certificate is not valid now (valid from {certificate.not_valid_before_utc} "
            f"to {certificate.not_valid_after_utc})",
        )
    try:
        key_usage = certificate.extensions.get_extension_for_class(x509.KeyUsage).value
    except x509.ExtensionNotFound:
        key_usage = None
    if key_usage is not None and not key_usage.digital_signature:
        raise SignatureError(
            "SigningCertURL", "certificate's key usage does not allow digital signatures"
        )
    key = certificate.public_key()
    if not isinstance(key, RSAPublicKey):
        raise SignatureError(
            "SigningCertURL", f"certificate key is {type(key).__name__}; SNS signs with RSA"
        )
    if key.key_size < MIN_RSA_KEY_BITS:
        raise SignatureError(
            "SigningCertURL",
            f"certificate key has {key.key_size} bits; at least {MIN_RSA_KEY_BITS} are required",
        )
    return key, not_after


def _decode_signature(text: str) -> bytes:
    """The bytes of the base64 ``Signature``; :class:`MalformedSnsMessageError` if it is not base64."""
    try:
        signature = base64.b64decode(text, validate=True)
    except ValueError as error:  # binascii.Error, or not ASCII
        raise MalformedSnsMessageError("Signature", f"is not valid base64 ({error})") from error
    if not signature:
        raise MalformedSnsMessageError("Signature", "is empty")
    return signature


def _check_signature(key: RSAPublicKey, signature: bytes, data: bytes, algorithm: str) -> None:
    """Raise :class:`SignatureError` unless ``signature`` is ``key``'s PKCS #1 v1.5 signature
    of ``data`` with the hash named ``algorithm``."""
    from cryptography.exceptions import InvalidSignature  # noqa: PLC0415 (lazy, for cold starts)
    from cryptography.hazmat.primitives import hashes  # noqa: PLC0415 (lazy, for cold starts)
    from cryptography.hazmat.primitives.asymmetric import padding  # noqa: PLC0415 (lazy, for cold starts)

    # SHA1 only where the sender chose SignatureVersion 1, which SNS defines as SHA1withRSA.
    digest = hashes.SHA256() if algorithm == "SHA256" else hashes.SHA1()
    try:
        key.verify(signature, data, padding.PKCS1v15(), digest)
    except InvalidSignature as error:
        raise SignatureError(
            "Signature",
            "does not match the signed fields; the message was altered or not signed by SNS",
        ) from error
