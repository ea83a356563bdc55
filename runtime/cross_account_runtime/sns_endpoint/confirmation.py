"""Confirming a subscription: the GET of a ``SubscriptionConfirmation``'s ``SubscribeURL``.

The endpoint calls this only for a signed confirmation of an allowed topic whose ``SubscribeURL``
was checked to be ``https`` on an SNS host. The GET itself uses the same verified-TLS client as
the certificate download (:func:`cross_account_runtime.sns_endpoint.signature.https_get`): no
redirects, a short timeout and a bounded answer.
"""

from __future__ import annotations

from cross_account_runtime.sns_endpoint import signature as sns_signature

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final

# Connecting to SNS to confirm a subscription, within SNS's 15 s answer deadline.
CONFIRMATION_TIMEOUT_SECONDS: Final = 5.0
MAX_CONFIRMATION_RESPONSE_BYTES: Final = 64 * 1024


def confirm_subscription_over_https(url: str) -> None:
    """The default confirmer: GET the ``SubscribeURL`` (already checked to be SNS's)."""
    sns_signature.https_get(
        url, timeout=CONFIRMATION_TIMEOUT_SECONDS, max_bytes=MAX_CONFIRMATION_RESPONSE_BYTES
    )
