"""Signature verification: what SNS signs is accepted, anything else is refused with a reason."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cross_account_runtime.sns_endpoint.signature import (
    CertificateCache,
    CertificateFetchError,
    FetchError,
    MalformedSnsMessageError,
    SignatureError,
    check_certificate_url,
    check_sns_url,
    string_to_sign,
    verify,
)
from tests.runtime.sns_endpoint.conftest import (
    NOW,
    SNS_CERT_URL,
    CertificateHost,
    Check,
    Pki,
    Signer,
    issue_certificate,
    now,
    pem,
)

ATTACKER_HOSTED = "https://evil.example/SimpleNotificationService-1.pem"


def _messages(signer: Signer, version: str) -> dict[str, dict[str, Any]]:
    return {
        "notification with subject": signer.notification(version=version),
        "notification without subject": signer.notification(subject=None, version=version),
        "subscription confirmation": signer.confirmation(version=version),
        "unsubscribe confirmation": signer.confirmation("UnsubscribeConfirmation", version=version),
    }


KINDS = [
    "notification with subject",
    "notification without subject",
    "subscription confirmation",
    "unsubscribe confirmation",
]


# --- what SNS signs is accepted ------------------------------------------------------------


@pytest.mark.parametrize("version", ["1", "2"])
@pytest.mark.parametrize("kind", KINDS)
def test_every_message_type_signed_with_either_version_is_accepted(
    signer: Signer,
    check: Check,
    kind: str,
    version: str,
) -> None:
    message = _messages(signer, version)[kind]
    check(message)


def test_notification_string_to_sign_is_name_newline_value_newline_in_documented_order() -> None:
    message = {
        "Type": "Notification",
        "MessageId": "m-1",
        "TopicArn": "arn:aws:sns:us-east-1:111111111111:Orders",
        "Subject": "S",
        "Message": "hello\nworld",
        "Timestamp": "2026-06-01T11:59:55.000Z",
        "UnsubscribeURL": "https://sns.us-east-1.amazonaws.com/?Action=Unsubscribe",
    }
    assert string_to_sign(message) == (
        "Message\nhello\nworld\nMessageId\nm-1\nSubject\nS\n"
        "Timestamp\n2026-06-01T11:59:55.000Z\n"
        "TopicArn\narn:aws:sns:us-east-1:111111111111:Orders\nType\nNotification\n"
    )


def test_notification_without_subject_leaves_subject_out_of_the_string_to_sign() -> None:
    message = {
        "Type": "Notification",
        "MessageId": "m-1",
        "TopicArn": "t",
        "Message": "x",
        "Timestamp": "ts",
    }
    assert "Subject" not in string_to_sign(message)
    assert string_to_sign({**message, "Subject": None}) == string_to_sign(message)


def test_confirmation_string_to_sign_includes_subscribe_url_and_token() -> None:
    message = {
        "Type": "SubscriptionConfirmation",
        "MessageId": "m",
        "Token": "tok",
        "TopicArn": "t",
        "Message": "msg",
        "SubscribeURL": "https://sns.us-east-1.amazonaws.com/?Action=ConfirmSubscription",
        "Timestamp": "ts",
    }
    assert string_to_sign(message) == (
        "Message\nmsg\nMessageId\nm\n"
        "SubscribeURL\nhttps://sns.us-east-1.amazonaws.com/?Action=ConfirmSubscription\n"
        "Timestamp\nts\nToken\ntok\nTopicArn\nt\nType\nSubscriptionConfirmation\n"
    )


def test_fields_outside_the_string_to_sign_may_change(signer: Signer, check: Check) -> None:
    message = signer.notification()
    message["UnsubscribeURL"] = "https://sns.us-east-1.amazonaws.com/?other"
    message["MessageAttributes"] = {}
    check(message)


@pytest.mark.parametrize(
    "url",
    [
        "https://sns.us-east-1.amazonaws.com/SimpleNotificationService-abc.pem",
        "https://sns.us-gov-west-1.amazonaws.com/SimpleNotificationService-abc.pem",
        "https://sns.cn-north-1.amazonaws.com.cn/SimpleNotificationService-abc.pem",
        "https://sns.eu-central-2.amazonaws.com/a/b/SimpleNotificationService-abc.pem",
        "https://SNS.US-EAST-1.AMAZONAWS.COM/SimpleNotificationService-abc.pem",
    ],
)
def test_certificate_urls_of_every_partition_are_accepted(url: str) -> None:
    check_certificate_url(url)


# --- altered messages are refused ----------------------------------------------------------

NOTIFICATION_FIELDS = ["Message", "MessageId", "Subject", "Timestamp", "TopicArn"]
CONFIRMATION_FIELDS = ["Message", "MessageId", "SubscribeURL", "Timestamp", "Token", "TopicArn"]


@pytest.mark.parametrize("version", ["1", "2"])
@pytest.mark.parametrize("name", NOTIFICATION_FIELDS)
def test_altering_any_signed_notification_field_breaks_the_signature(
    signer: Signer,
    check: Check,
    name: str,
    version: str,
) -> None:
    message = signer.notification(version=version)
    message[name] += "x"
    with pytest.raises(SignatureError, match="Signature: does not match") as raised:
        check(message)
    assert raised.value.field == "Signature"


@pytest.mark.parametrize("kind", ["SubscriptionConfirmation", "UnsubscribeConfirmation"])
@pytest.mark.parametrize("name", CONFIRMATION_FIELDS)
def test_altering_any_signed_confirmation_field_breaks_the_signature(
    signer: Signer,
    check: Check,
    name: str,
    kind: str,
) -> None:
    message = signer.confirmation(kind)
    message[name] += "x"
    with pytest.raises(SignatureError, match="Signature: does not match"):
        check(message)


def test_changing_the_type_between_the_confirmations_breaks_the_signature(
    signer: Signer, check: Check
) -> None:
    message = signer.confirmation("UnsubscribeConfirmation")
    message["Type"] = "SubscriptionConfirmation"
    with pytest.raises(SignatureError, match="Signature: does not match"):
        check(message)


@pytest.mark.parametrize("change", ["added", "removed"])
def test_adding_or_removing_a_subject_breaks_the_signature(
    signer: Signer,
    check: Check,
    change: str,
) -> None:
    if change == "added":
        message = signer.notification(subject=None)
        message["Subject"] = "injected"
    else:
        message = signer.notification(subject="Order placed")
        del message["Subject"]
    with pytest.raises(SignatureError, match="Signature: does not match"):
        check(message)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(name=st.sampled_from(NOTIFICATION_FIELDS), replacement=st.text(max_size=40))
def test_any_replacement_of_a_signed_value_is_refused(
    signer: Signer,
    check: Check,
    name: str,
    replacement: str,
) -> None:
    message = signer.notification()
    if replacement == message[name]:
        replacement += "x"
    message[name] = replacement
    with pytest.raises(SignatureError):
        check(message)


def test_a_signature_by_another_key_is_refused(
    signer: Signer,
    pki: Pki,
    check: Check,
) -> None:
    message = signer.notification(key=pki.attacker_key)
    with pytest.raises(SignatureError, match="Signature: does not match"):
        check(message)


@pytest.mark.parametrize(("signed", "claimed"), [("1", "2"), ("2", "1")])
def test_claiming_the_other_signature_version_is_refused(
    signer: Signer,
    check: Check,
    signed: str,
    claimed: str,
) -> None:
    message = signer.notification(version=signed)
    message["SignatureVersion"] = claimed
    with pytest.raises(SignatureError, match="Signature: does not match"):
        check(message)


# --- the certificate URL rules -------------------------------------------------------------

FORGED_CERT_URLS = [
    ("http://sns.us-east-1.amazonaws.com/SimpleNotificationService-1.pem", "must use https"),
    ("HTTPS://sns.us-east-1.amazonaws.com/SimpleNotificationService-1.pem", "must use https"),
    ("https://evil.example/SimpleNotificationService-1.pem", "is not SNS"),
    ("https://sns.us-east-1.amazonaws.com.evil.example/x.pem", "is not SNS"),
    ("https://sns.us-east-1.amazonaws.com@evil.example/x.pem", "userinfo"),
    ("https://user:pass@sns.us-east-1.amazonaws.com/x.pem", "userinfo"),
    ("https://sns.us-east-1.amazonaws.com:443@evil.example/x.pem", "userinfo"),
    ("https://sns.us-east-1.amazonaws.com:8443/x.pem", "port"),
    ("https://sns.us-east-1.amazonaws.com:/x.pem", "port"),
    ("https://evil.example#@sns.us-east-1.amazonaws.com/x.pem", "is not SNS"),
    ("https://evil.example\\@sns.us-east-1.amazonaws.com/x.pem", "backslashes"),
    ("https://sns.us-east-1.amazonaws.com\t.evil.example/x.pem", "without spaces"),
    ("https://sns.us-east-1.amazonaws.com%2eevil.example/x.pem", "is not SNS"),
    ("https://sns.us-east-1.amazonaws.com./x.pem", "is not SNS"),
    ("https://sns.us-east-1.amazonaws.co/x.pem", "is not SNS"),
    ("https://sqs.us-east-1.amazonaws.com/x.pem", "is not SNS"),
    ("https://sns.us_east-1.amazonaws.com/x.pem", "is not SNS"),
    ("https://xsns.us-east-1.amazonaws.com/x.pem", "is not SNS"),
    ("https://sns.us-east-1.amazonaws.com/x.pem.txt", "must end with .pem"),
    ("https://sns.us-east-1.amazonaws.com/x.crt", "must end with .pem"),
    ("https://sns.us-east-1.amazonaws.com", "must end with .pem"),
    ("https://sns.us-east-1.amazonaws.com/x?.pem", "query or fragment"),
    ("https://sns.us-east-1.amazonaws.com/x.pem?redirect=evil", "query or fragment"),
    ("https://sns.us-east-1.amazonaws.com/x.pem#frag", "query or fragment"),
    ("https://sn\u0455.us-east-1.amazonaws.com/x.pem", "printable ASCII"),
    ("//sns.us-east-1.amazonaws.com/x.pem", "must use https"),
    ("", "printable ASCII"),
]


@pytest.mark.parametrize(("url", "reason"), FORGED_CERT_URLS)
def test_a_certificate_url_off_sns_is_refused_before_anything_is_fetched(
    signer: Signer,
    pki: Pki,
    check: Check,
    url: str,
    reason: str,
) -> None:
    check.host.documents[url] = pem(pki.attacker_certificate)
    message = signer.notification(key=pki.attacker_key, cert_url=url)
    with pytest.raises(SignatureError, match=reason) as raised:
        check(message)
    assert raised.value.field == "SigningCertURL"
    assert check.host.fetched == []


def test_the_forgeries_would_verify_if_the_url_rules_let_them_through(
    signer: Signer,
    pki: Pki,
    check: Check,
) -> None:
    """The attacker's certificate is well formed: the URL rules alone stop the forgeries."""
    lookalike = "https://sns.us-east-1.amazonaws.com/attacker-uploaded.pem"
    check.host.documents[lookalike] = pem(pki.attacker_certificate)
    check(signer.notification(key=pki.attacker_key, cert_url=lookalike))


def test_subscribe_urls_follow_the_same_host_rules() -> None:
    check_sns_url(
        "https://sns.us-east-1.amazonaws.com/?Action=ConfirmSubscription&Token=t",
        field="SubscribeURL",
    )
    with pytest.raises(SignatureError, match=r"SubscribeURL: must not carry userinfo"):
        check_sns_url("https://sns.us-east-1.amazonaws.com@evil.example/", field="SubscribeURL")


# --- malformed messages --------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "Type",
        "Message",
        "MessageId",
        "Timestamp",
        "TopicArn",
        "Signature",
        "SigningCertURL",
        "SignatureVersion",
    ],
)
def test_a_missing_field_is_named(
    signer: Signer,
    check: Check,
    name: str,
) -> None:
    message = signer.notification()
    del message[name]
    with pytest.raises(MalformedSnsMessageError, match=f"{name}: is missing") as raised:
        check(message)
    assert raised.value.field == name


@pytest.mark.parametrize("name", ["Token", "SubscribeURL"])
def test_a_confirmation_without_its_token_or_url_is_malformed(
    signer: Signer,
    check: Check,
    name: str,
) -> None:
    message = signer.confirmation()
    del message[name]
    with pytest.raises(MalformedSnsMessageError, match=f"{name}: is missing"):
        check(message)


@pytest.mark.parametrize(
    ("name", "value"), [("Message", 42), ("Subject", ["x"]), ("MessageId", None)]
)
def test_a_field_that_is_not_a_string_is_named_with_its_type(
    signer: Signer,
    check: Check,
    name: str,
    value: object,
) -> None:
    message = signer.notification()
    message[name] = value
    with pytest.raises(MalformedSnsMessageError, match=f"{name}: must be a JSON string"):
        check(message)


@pytest.mark.parametrize("version", ["3", "", "SHA256", "02"])
def test_an_unknown_signature_version_is_refused(
    signer: Signer,
    check: Check,
    version: str,
) -> None:
    message = signer.notification()
    message["SignatureVersion"] = version
    with pytest.raises(MalformedSnsMessageError, match="SignatureVersion: unsupported version"):
        check(message)


def test_an_unknown_type_is_refused(signer: Signer, check: Check) -> None:
    message = signer.notification()
    message["Type"] = "Notice"
    with pytest.raises(MalformedSnsMessageError, match="Type: unknown message type 'Notice'"):
        check(message)


@pytest.mark.parametrize(
    ("signature", "reason"), [("not base64!", "is not valid base64"), ("", "is empty")]
)
def test_a_signature_that_is_not_base64_is_malformed(
    signer: Signer,
    check: Check,
    signature: str,
    reason: str,
) -> None:
    message = signer.notification()
    message["Signature"] = signature
    with pytest.raises(MalformedSnsMessageError, match=f"Signature: {reason}"):
        check(message)


# --- the certificate itself ----------------------------------------------------------------


def _sign_with_certificate(
    signer: Signer,
    certificate_host: CertificateHost,
    key: rsa.RSAPrivateKey,
    certificate_pem: bytes,
) -> dict[str, Any]:
    url = "https://sns.us-east-1.amazonaws.com/SimpleNotificationService-other.pem"
    certificate_host.documents[url] = certificate_pem
    return signer.notification(key=key, cert_url=url)


@pytest.mark.parametrize(
    ("validity", "reason"),
    [
        ((NOW - dt.timedelta(days=400), NOW - dt.timedelta(days=1)), "not valid now"),
        ((NOW + dt.timedelta(days=1), NOW + dt.timedelta(days=400)), "not valid now"),
    ],
)
def test_a_certificate_outside_its_validity_is_refused(
    signer: Signer,
    pki: Pki,
    check: Check,
    validity: tuple[dt.datetime, dt.datetime],
    reason: str,
) -> None:
    certificate = issue_certificate(
        pki.sns_key, pki.ca_key, not_before=validity[0], not_after=validity[1]
    )
    message = _sign_with_certificate(signer, check.host, pki.sns_key, pem(certificate))
    with pytest.raises(SignatureError, match=reason):
        check(message)


def test_a_certificate_whose_key_usage_excludes_signatures_is_refused(
    signer: Signer, pki: Pki, check: Check
) -> None:
    certificate = issue_certificate(pki.sns_key, pki.ca_key, digital_signature=False)
    message = _sign_with_certificate(signer, check.host, pki.sns_key, pem(certificate))
    with pytest.raises(SignatureError, match="does not allow digital signatures"):
        check(message)


def test_a_certificate_for_a_small_rsa_key_is_refused(
    signer: Signer, pki: Pki, check: Check
) -> None:
    small = rsa.generate_private_key(public_exponent=65537, key_size=1024)
    message = _sign_with_certificate(
        signer, check.host, small, pem(issue_certificate(small, pki.ca_key))
    )
    with pytest.raises(SignatureError, match="1024 bits; at least 2048"):
        check(message)


def test_a_certificate_for_a_non_rsa_key_is_refused(signer: Signer, pki: Pki, check: Check) -> None:
    ec_key = ec.generate_private_key(ec.SECP256R1())
    message = _sign_with_certificate(
        signer, check.host, pki.sns_key, pem(issue_certificate(ec_key, pki.ca_key))
    )
    with pytest.raises(SignatureError, match="SNS signs with RSA"):
        check(message)


@pytest.mark.parametrize(
    ("document", "reason"),
    [
        (b"<html>Not Found</html>", "not a PEM X.509 certificate"),
        (
            b"-----BEGIN CERTIFICATE-----\n" + b"A" * 11_000 + b"\n-----END CERTIFICATE-----\n",
            "larger than 10240 bytes",
        ),
    ],
)
def test_a_document_that_is_not_a_certificate_is_refused(
    signer: Signer,
    pki: Pki,
    check: Check,
    document: bytes,
    reason: str,
) -> None:
    message = _sign_with_certificate(signer, check.host, pki.sns_key, document)
    with pytest.raises(SignatureError, match=reason):
        check(message)


@pytest.mark.parametrize(
    ("failure", "retryable"),
    [
        (FetchError(SNS_CERT_URL, "HTTP status 404", retryable=False), False),
        (FetchError(SNS_CERT_URL, "HTTP status 503", retryable=True), True),
        (TimeoutError("timed out"), True),
        (ConnectionResetError("reset"), True),
    ],
)
def test_a_failed_fetch_says_whether_a_retry_can_succeed(
    signer: Signer,
    check: Check,
    failure: Exception,
    retryable: bool,
) -> None:
    check.host.failure = failure
    with pytest.raises(
        CertificateFetchError, match="SigningCertURL: fetching the certificate failed"
    ) as raised:
        check(signer.notification())
    assert raised.value.retryable is retryable


# --- the certificate cache -----------------------------------------------------------------


def test_a_cached_certificate_is_not_fetched_again(signer: Signer, check: Check) -> None:
    for _ in range(3):
        check(signer.notification())
    assert check.host.fetched == [SNS_CERT_URL]


def test_a_certificate_is_fetched_again_once_its_ttl_has_passed(
    signer: Signer, certificate_host: CertificateHost
) -> None:
    clock = [now()]
    cache = CertificateCache(ttl_seconds=60, clock=lambda: clock[0])
    verify(signer.notification(), fetch_certificate=certificate_host, cache=cache)
    clock[0] += 59
    verify(signer.notification(), fetch_certificate=certificate_host, cache=cache)
    clock[0] += 2
    verify(signer.notification(), fetch_certificate=certificate_host, cache=cache)
    assert certificate_host.fetched == [SNS_CERT_URL, SNS_CERT_URL]


def test_a_certificate_is_not_cached_past_its_expiry(
    signer: Signer, pki: Pki, certificate_host: CertificateHost
) -> None:
    certificate = issue_certificate(
        pki.sns_key, pki.ca_key, not_after=NOW + dt.timedelta(seconds=10)
    )
    certificate_host.documents[SNS_CERT_URL] = pem(certificate)
    clock = [now()]
    cache = CertificateCache(ttl_seconds=3600, clock=lambda: clock[0])
    verify(signer.notification(), fetch_certificate=certificate_host, cache=cache)
    clock[0] += 11
    with pytest.raises(SignatureError, match="not valid now"):
        verify(signer.notification(), fetch_certificate=certificate_host, cache=cache)
    assert certificate_host.fetched == [SNS_CERT_URL, SNS_CERT_URL]


def test_the_cache_keeps_the_most_recently_used_certificates(
    signer: Signer, pki: Pki, certificate_host: CertificateHost
) -> None:
    cache = CertificateCache(max_entries=2, clock=now)
    urls = [
        f"https://sns.us-east-{n}.amazonaws.com/SimpleNotificationService-{n}.pem"
        for n in (1, 2, 3)
    ]
    for url in urls:
        certificate_host.documents[url] = pem(pki.sns_certificate)
    for url in (urls[0], urls[1], urls[0], urls[2]):
        verify(signer.notification(cert_url=url), fetch_certificate=certificate_host, cache=cache)
    assert len(cache) == 2
    assert urls[0] in cache
    assert urls[1] not in cache
    assert urls[2] in cache


def test_a_failed_fetch_is_not_cached(signer: Signer, check: Check) -> None:
    check.host.failure = TimeoutError("timed out")
    with pytest.raises(CertificateFetchError):
        check(signer.notification())
    check.host.failure = None
    check(signer.notification())


def test_clearing_the_cache_forces_a_fetch(signer: Signer, check: Check) -> None:
    check(signer.notification())
    check.cache.clear()
    check(signer.notification())
    assert check.host.fetched == [SNS_CERT_URL, SNS_CERT_URL]


def test_a_cache_needs_a_positive_ttl_and_size() -> None:
    with pytest.raises(ValueError, match="ttl_seconds must be positive"):
        CertificateCache(ttl_seconds=0)
    with pytest.raises(ValueError, match="max_entries must be at least 1"):
        CertificateCache(max_entries=0)
