"""HTTP/S deliveries as SNS makes them: the endpoint confirms, SNS retries by the delivery
policy, and each delivery's outcome is logged.

In AWS an HTTP(S) subscription is pending until its endpoint confirms it: SNS POSTs a
``SubscriptionConfirmation`` whose ``SubscribeURL`` (``ConfirmSubscription`` with the request's
``Token``) the endpoint visits. SNS then POSTs each ``Notification`` (headers
``x-amz-sns-message-type``, ``x-amz-sns-message-id``, ``x-amz-sns-topic-arn``,
``x-amz-sns-subscription-arn``; ``Content-Type`` from the request policy). An answer from 200 to
499 ends the delivery as a ``SUCCESS`` (a 4xx is not retried, and is logged ``SUCCESS`` with its
code); a 5xx, no answer within 15 s, or no connection is retried along the subscription's
effective delivery policy: ``numNoDelayRetries`` at once, ``numMinDelayRetries`` after
``minDelayTarget``, the backoff phase rising from ``minDelayTarget`` to ``maxDelayTarget``
along ``backoffFunction``, ``numMaxDelayRetries`` after ``maxDelayTarget``, no faster than
``throttlePolicy.maxReceivesPerSecond``. The subscription's ``DeliveryPolicy`` overrides the
topic's ``http`` defaults unless the topic sets ``disableSubscriptionOverrides``; what neither
sets is SNS's default (3 retries 20 s apart). When the retries run out the delivery is a
``FAILURE``, and the message goes to the subscription's dead-letter queue if it has one
(``RedrivePolicy``). (``../shared/reference/delivery-policy.md``; "Amazon SNS message delivery
retries" and "Creating an HTTP/S delivery policy" in the SNS developer guide.)

moto does none of that: ``SNSBackend.subscribe`` (``moto/sns/models.py``) confirms every
subscription at once, ``SNSResponse.confirm_subscription`` accepts any token for a topic of the
default account, and ``Subscription.publish`` makes one ``requests.post`` to the endpoint's real
address and forgets the answer. The local AWS must never reach a real address.

:func:`register` teaches it, for hosts the local AWS is told to map (``POST``
:data:`HOSTS_PATH` ``?host=partner.example.com&url=http://127.0.0.1:PORT``, :func:`map_http_host`;
only a loopback ``http`` URL is accepted): an HTTP(S) subscription starts pending, and a
confirmation request goes to its mapped host as soon as both exist, its ``SubscribeURL``
pointing at this server (:data:`CONFIRMATION_PATH`, which takes ``Action``, ``TopicArn`` and
``Token`` as SNS's own URL does; ``ConfirmSubscription`` through the API takes the token too).
moto's ``requests`` in ``moto/sns/models.py`` is replaced by one that only hands the
notification moto built (filter policy, message structure and signature applied) to a
dispatcher, which makes the attempts on its own thread with the policy's spacing on a local
clock: ``POST`` :data:`AGE_RETRIES_PATH` ``?seconds=N`` moves that clock on and answers once
every attempt then due was made (:func:`age_http_retries`), so a schedule of an hour runs in a
moment with its spacing intact. Every attempt is kept, with its local time, status code and
provider response (``GET`` :data:`ATTEMPTS_PATH`, :func:`http_attempts`), each delivery's outcome
is logged through :mod:`local_aws.moto.delivery_status` (one record after its last attempt,
``attempts`` and ``dwellTimeMs`` on the local clock) and counted in the ledger.

The retry schedule is the local AWS's own reading of SNS's documentation, kept apart from the
product's (``cross_account_runtime.delivery_policy``) on purpose, so each checks the other. AWS
shows the backoff functions only as a graph: the curves assumed are named in
:func:`backoff_delays`. Not modelled: TLS (the mapped URL is plain HTTP on loopback, so no
certificate can fail), SNS's jitter (attempts fall exactly on the schedule), the confirmation
request's signature (it carries none; notifications carry moto's), resending an unanswered
confirmation and its expiry after 3 days, and the topic's ``sicklyRetryPolicy``.
"""

from __future__ import annotations

import contextvars
import functools
import http.client
import json
import secrets
import threading
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlencode, urlparse, urlunparse
from xml.sax.saxutils import escape

import moto.sns.models as sns_models
from moto.core.exceptions import ServiceException
from moto.core.responses import ActionResult
from moto.core.utils import iso_8601_datetime_with_milliseconds
from moto.moto_api._internal import mock_random
from moto.sns.models import SNSBackend, Subscription, sns_backends
from moto.sns.responses import SNSResponse
from moto.sqs.models import sqs_backends
from moto.utilities.arns import parse_arn

from local_aws.moto.api_routes import RouteResponse, add_route, ageing_route, request_ageing
from local_aws.moto.delivery_status import (
    FAILURE,
    SUCCESS,
    Outcome,
    count_delivery,
    log_delivery,
    published_ms,
)
from local_aws.moto.job_clock import JobClock
from local_aws.moto.patching import replacing
from local_aws.moto.sns_delivery_policy import (
    DEFAULT_CONTENT_TYPE,
    EffectivePolicy,
    effective_policy,
    policy_json,
)

HTTP_PROTOCOLS = frozenset({"http", "https"})
HOSTS_PATH = "/moto-api/local-aws/sns/http-hosts"
"""``POST ?host=H&url=U``: deliver what SNS sends to host ``H`` to the loopback URL ``U``."""
CONFIRMATION_PATH = "/moto-api/local-aws/sns/confirm-subscription"
"""The local stand-in of ``https://sns.<region>.amazonaws.com/?Action=ConfirmSubscription``."""
AGE_RETRIES_PATH = "/moto-api/local-aws/sns/age-http-retries"
"""``POST ?seconds=N``: the dispatcher's clock N seconds on; answers ``{"attempts": n}``."""
ATTEMPTS_PATH = "/moto-api/local-aws/sns/http-attempts"
"""``GET``: every HTTP/S attempt made so far (:class:`Attempt`)."""

DELIVERY_TIMEOUT_SECONDS = 15.0
"""SNS waits this long for an answer before counting the attempt as failed."""
USER_AGENT = "Amazon Simple Notification Service Agent"
SNS_NAMESPACE = "http://sns.amazonaws.com/doc/2010-03-31/"

_PATCHED = "_local_aws_sns_http_deliveries"


# Where a host's requests go ----------------------------------------------------------------

_hosts: dict[str, str] = {}
"""Host name -> the loopback base URL that stands in for it."""
_server_url: list[str] = []
"""This server's own base URL, learnt from the first host mapping: the SubscribeURL's."""


def mapped_url(endpoint: str) -> str | None:
    """The loopback URL a request to ``endpoint`` goes to, or ``None`` if its host is not
    mapped (then nothing is sent: the local AWS reaches no real address)."""
    parts = urlparse(endpoint)
    base = _hosts.get(parts.hostname or "")
    if base is None:
        return None
    target = urlparse(base)
    return urlunparse(parts._replace(scheme=target.scheme, netloc=target.netloc))


def _hosts_response(_request: Any, full_url: str, _headers: Any) -> RouteResponse:
    query = parse_qs(urlparse(full_url).query)
    host = (query.get("host") or [""])[0]
    url = (query.get("url") or [""])[0]
    target = urlparse(url)
    if not host or target.scheme != "http" or target.hostname not in ("127.0.0.1", "localhost"):
        return (
            400,
            {},
            json.dumps(
                {
                    "error": "host and url: give the host SNS would call and a loopback http URL "
                    "standing in for it, e.g. ?host=partner.example.com&url=http://127.0.0.1:8080"
                }
            ),
        )
    own = urlparse(full_url)
    if not _server_url:
        _server_url.append(f"{own.scheme}://{own.netloc}")
    _hosts[host] = f"http://{target.netloc}"
    confirmations = _request_pending_confirmations(host)
    return 200, {"Content-Type": "application/json"}, json.dumps({"confirmations": confirmations})


def map_http_host(endpoint_url: str, host: str, url: str) -> int:
    """Have the local AWS at ``endpoint_url`` send what SNS sends to ``host`` to ``url`` (a
    loopback http URL); returns how many confirmation requests that sent on their way."""
    query = urlencode({"host": host, "url": url})
    request = urllib.request.Request(f"{endpoint_url}{HOSTS_PATH}?{query}", method="POST", data=b"")
    with urllib.request.urlopen(request, timeout=10) as response:
        sent: int = json.loads(response.read())["confirmations"]
    return sent


# The local clock and the attempts on it ------------------------------------------------------


@dataclass(frozen=True)
class Attempt:
    """One request SNS made to an endpoint, as :data:`ATTEMPTS_PATH` lists it."""

    topic: str
    subscription: str
    endpoint: str
    message_id: str
    attempt: int
    at_seconds: float
    """Local seconds since SNS took the message (a throttled first attempt starts later)."""
    local_time: float
    """The attempt's instant on the local clock (epoch seconds, plus whatever was aged)."""
    status_code: int | None
    provider_response: str
    result: str
    """``retry``, or the delivery's outcome (``SUCCESS`` or ``FAILURE``) on its last attempt."""


@dataclass
class _Delivery:
    subscription: Subscription
    body: dict[str, Any]
    message_id: str
    published: int
    """Epoch ms SNS took the message (the record's timestamp)."""
    policy: EffectivePolicy
    taken_at: float
    """The local instant SNS took the message: the dwell time counts from it."""
    attempts: int = 0


_dispatcher = JobClock()
"""SNS's HTTP/S requests: confirmations, and each attempt of a delivery."""
_next_slot: dict[str, float] = {}
"""Per subscription ARN: the earliest instant its throttle lets the next attempt go."""
_attempts: list[Attempt] = []
_attempts_lock = threading.Lock()


def _post(
    url: str, body: dict[str, Any], content_type: str, *, subscription_arn: str | None = None
) -> tuple[int | None, str]:
    """One POST as SNS makes it, its headers read off the message (``Type``, ``MessageId``,
    ``TopicArn``; the subscription's ARN on a notification): the status and provider response
    SNS logs for it (no redirect followed; a timeout or a refused connection has no status)."""
    headers = {
        "Content-Type": content_type,
        "User-Agent": USER_AGENT,
        "x-amz-sns-message-type": str(body["Type"]),
        "x-amz-sns-message-id": str(body["MessageId"]),
        "x-amz-sns-topic-arn": str(body["TopicArn"]),
    }
    if subscription_arn is not None:
        headers["x-amz-sns-subscription-arn"] = subscription_arn
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers=headers, method="POST"
    )
    try:
        with _OPENER.open(request, timeout=DELIVERY_TIMEOUT_SECONDS) as response:
            return response.status, _reason(response.status)
    except urllib.error.HTTPError as error:
        if error.code >= 500:
            return error.code, f"{error.code} {_reason(error.code)}"
        return error.code, _reason(error.code)
    except TimeoutError:
        return None, "Timeout waiting for the endpoint to respond"
    except urllib.error.URLError as error:
        if isinstance(error.reason, TimeoutError):
            return None, "Timeout waiting for the endpoint to respond"
        if isinstance(error.reason, ConnectionRefusedError):
            return None, "Connection refused"
        return None, f"NoHttpResponseException in HttpClient: {error.reason}"
    except (http.client.HTTPException, ConnectionError) as error:
        return None, f"NoHttpResponseException in HttpClient: {error}"


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *_: Any) -> None:
        return None


_OPENER = urllib.request.build_opener(_NoRedirect)
"""SNS's client for every request: a redirect is an answer, not followed."""


def _reason(code: int) -> str:
    try:
        return http.client.responses[code]
    except KeyError:
        return str(code)


def _throttled(subscription_arn: str, at: float, rate: float | None) -> float:
    """When an attempt due ``at`` may go: ``at`` if ``1 / rate`` seconds have passed since the
    subscription's last (``throttlePolicy.maxReceivesPerSecond``), which it then becomes;
    otherwise the first instant they will have."""
    if rate is None:
        return at
    slot = _next_slot.get(subscription_arn, at)
    if slot > at:
        return slot
    _next_slot[subscription_arn] = at + 1 / rate
    return at


def _attempt(delivery: _Delivery, at: float) -> None:
    """Make one attempt of ``delivery`` due at local time ``at``; schedule the next or end it."""
    subscription = delivery.subscription
    slot = _throttled(subscription.arn, at, delivery.policy.max_receives_per_second)
    if slot > at:
        _dispatcher.schedule(slot, functools.partial(_attempt, delivery))
        return
    delivery.attempts += 1
    url = mapped_url(subscription.endpoint)
    if url is None:
        code, response = None, "UnknownHostException in HttpClient"
    else:
        code, response = _post(
            url, delivery.body, delivery.policy.content_type, subscription_arn=subscription.arn
        )
    answered = code is not None and 200 <= code < 500
    retries_left = delivery.attempts <= len(delivery.policy.delays)
    result = SUCCESS if answered else FAILURE if not retries_left else "retry"
    with _attempts_lock:
        _attempts.append(
            Attempt(
                topic=subscription.topic.arn,
                subscription=subscription.arn,
                endpoint=subscription.endpoint,
                message_id=delivery.message_id,
                attempt=delivery.attempts,
                at_seconds=round(at - delivery.taken_at, 3),
                local_time=at,
                status_code=code,
                provider_response=response,
                result=result,
            )
        )
    if result == "retry":
        delay = delivery.policy.delays[delivery.attempts - 1]
        _dispatcher.schedule(at + delay, functools.partial(_attempt, delivery))
        return
    outcome = Outcome(result, code, response, delivery.attempts)
    count_delivery(subscription, outcome)
    dwell_ms = round((at - delivery.taken_at) * 1000)
    log_delivery(
        subscription,
        str(delivery.body["Message"]),
        delivery.message_id,
        outcome,
        delivery.published,
        now_ms=delivery.published + dwell_ms,
    )
    if result == FAILURE:
        _dead_letter(subscription, delivery.body)


def _dead_letter(subscription: Subscription, body: dict[str, Any]) -> None:
    """A delivery whose retries ran out goes to the subscription's dead-letter queue, if any
    (a queue that is not there keeps nothing, as in AWS, where the message is then lost)."""
    target = policy_json(subscription.attributes.get("RedrivePolicy")).get("deadLetterTargetArn")
    if not target:
        return
    arn = parse_arn(str(target))
    backend = sqs_backends[arn.account][arn.region]
    try:
        backend.send_message(arn.resource_id, json.dumps(body))
    except ServiceException:
        return  # SNS drops what the queue refuses, and says nothing


def _attempts_response(_request: Any, _full_url: str, _headers: Any) -> RouteResponse:
    with _attempts_lock:
        rows = [vars(a) for a in _attempts]
    return 200, {"Content-Type": "application/json"}, json.dumps({"attempts": rows})


def http_attempts(endpoint_url: str) -> list[dict[str, Any]]:
    """Every HTTP/S attempt the local AWS at ``endpoint_url`` made, in the order made."""
    with urllib.request.urlopen(f"{endpoint_url}{ATTEMPTS_PATH}", timeout=10) as response:
        rows: list[dict[str, Any]] = json.loads(response.read())["attempts"]
    return rows


def age_http_retries(endpoint_url: str, seconds: float) -> int:
    """Move the local AWS's HTTP/S delivery clock ``seconds`` on; returns how many attempts
    that made (``seconds=0`` makes those already due, such as the first attempts)."""
    return request_ageing(endpoint_url, AGE_RETRIES_PATH, seconds, "attempts")


# Confirmation --------------------------------------------------------------------------------

_tokens: dict[str, Subscription] = {}
_tokens_lock = threading.Lock()


def _request_confirmation(subscription: Subscription) -> None:
    """Send the subscription's endpoint a ``SubscriptionConfirmation`` (when its host is
    mapped; until then it stays pending, as an endpoint SNS cannot reach leaves it)."""
    if not _server_url or mapped_url(subscription.endpoint) is None:
        return
    token = secrets.token_hex(64)
    with _tokens_lock:
        _tokens[token] = subscription
    topic_arn = subscription.topic.arn
    query = urlencode({"Action": "ConfirmSubscription", "TopicArn": topic_arn, "Token": token})
    message_id = str(mock_random.uuid4())
    body = {
        "Type": "SubscriptionConfirmation",
        "MessageId": message_id,
        "Token": token,
        "TopicArn": topic_arn,
        "Message": f"You have chosen to subscribe to the topic {topic_arn}.\n"
        "To confirm the subscription, visit the SubscribeURL included in this message.",
        "SubscribeURL": f"{_server_url[0]}{CONFIRMATION_PATH}?{query}",
        "Timestamp": iso_8601_datetime_with_milliseconds(),
    }

    def send(_at: float) -> None:
        url = mapped_url(subscription.endpoint)
        if url is not None:
            _post(url, body, DEFAULT_CONTENT_TYPE)

    _dispatcher.schedule(_dispatcher.now(), send)


def _pending_on(host: str) -> list[Subscription]:
    found = []
    for account_backends in list(sns_backends.values()):
        for backend in list(account_backends.values()):
            for subscription in list(backend.subscriptions.values()):
                if (
                    subscription.protocol in HTTP_PROTOCOLS
                    and subscription.attributes.get("PendingConfirmation")
                    and urlparse(subscription.endpoint).hostname == host
                ):
                    found.append(subscription)
    return found


def _request_pending_confirmations(host: str) -> int:
    pending = _pending_on(host)
    for subscription in pending:
        _request_confirmation(subscription)
    return len(pending)


def confirm(topic_arn: str, token: str, *, authenticated: bool) -> Subscription | None:
    """Confirm the subscription ``token`` was sent for, if it is ``topic_arn``'s."""
    with _tokens_lock:
        subscription = _tokens.get(token)
    if subscription is None or subscription.topic.arn != topic_arn:
        return None
    subscription.confirmed = True
    subscription.attributes["PendingConfirmation"] = False
    subscription.attributes["ConfirmationWasAuthenticated"] = authenticated
    return subscription


def _confirmation_response(_request: Any, full_url: str, _headers: Any) -> RouteResponse:
    query = {k: v[0] for k, v in parse_qs(urlparse(full_url).query).items()}
    topic_arn, token = query.get("TopicArn", ""), query.get("Token", "")
    request_id = str(mock_random.uuid4())
    subscription = (
        confirm(topic_arn, token, authenticated=False)
        if query.get("Action") == "ConfirmSubscription"
        else None
    )
    if subscription is None:
        body = (
            f'<ErrorResponse xmlns="{SNS_NAMESPACE}"><Error><Type>Sender</Type>'
            "<Code>InvalidParameter</Code><Message>Invalid token</Message></Error>"
            f"<RequestId>{request_id}</RequestId></ErrorResponse>"
        )
        return 400, {"Content-Type": "text/xml"}, body
    body = (
        f'<ConfirmSubscriptionResponse xmlns="{SNS_NAMESPACE}"><ConfirmSubscriptionResult>'
        f"<SubscriptionArn>{escape(subscription.arn)}</SubscriptionArn>"
        "</ConfirmSubscriptionResult><ResponseMetadata>"
        f"<RequestId>{request_id}</RequestId></ResponseMetadata></ConfirmSubscriptionResponse>"
    )
    return 200, {"Content-Type": "text/xml"}, body


# What register patches ---------------------------------------------------------------------

_delivering: contextvars.ContextVar[tuple[Subscription, str] | None] = contextvars.ContextVar(
    "local_aws_sns_http_delivering", default=None
)
"""While moto's ``Subscription.publish`` runs for an HTTP(S) subscription: it, and the id of
the message."""


class _Requests:
    """What ``moto/sns/models.py`` sees as ``requests``: its one call, ``post``, hands the
    notification to the dispatcher instead of sending it anywhere."""

    @staticmethod
    def post(url: str, json: dict[str, Any], **_: Any) -> None:
        current = _delivering.get()
        if current is None:
            raise RuntimeError(f"the local AWS sends no HTTP request to {url} outside a delivery")
        subscription, message_id = current
        delivery = _Delivery(
            subscription=subscription,
            body=json,
            message_id=message_id,
            published=published_ms(message_id),
            policy=effective_policy(subscription),
            taken_at=_dispatcher.now(),
        )
        _dispatcher.schedule(delivery.taken_at, functools.partial(_attempt, delivery))


def _patch_publish() -> None:
    original = Subscription.publish

    @replacing(Subscription, "publish", _PATCHED)
    def publish(
        self: Subscription, message: str, message_id: str, *args: Any, **kwargs: Any
    ) -> None:
        if self.protocol not in HTTP_PROTOCOLS:
            original(self, message, message_id, *args, **kwargs)
            return
        token = _delivering.set((self, message_id))
        try:
            original(self, message, message_id, *args, **kwargs)
        finally:
            _delivering.reset(token)

    setattr(sns_models, "requests", _Requests)  # noqa: B010 - moto's module attribute


def _patch_subscribe() -> None:
    original = SNSBackend.subscribe

    @replacing(SNSBackend, "subscribe", _PATCHED)
    def subscribe(self: SNSBackend, topic_arn: str, endpoint: str, protocol: str) -> Subscription:
        subscription: Subscription = original(self, topic_arn, endpoint, protocol)
        if protocol in HTTP_PROTOCOLS and not subscription.confirmed:
            subscription.attributes["PendingConfirmation"] = True
            subscription.attributes["ConfirmationWasAuthenticated"] = False
            _request_confirmation(subscription)
        return subscription


def _patch_confirm_subscription() -> None:
    original = SNSResponse.confirm_subscription

    @replacing(SNSResponse, "confirm_subscription", _PATCHED)
    def confirm_subscription(self: SNSResponse) -> Any:
        authenticate = str(self._get_param("AuthenticateOnUnsubscribe") or "").lower() == "true"
        subscription = confirm(
            self._get_param("TopicArn"), self._get_param("Token"), authenticated=authenticate
        )
        if subscription is None:
            return original(self)
        return ActionResult({"SubscriptionArn": subscription.arn})


def register() -> None:
    """Make moto's SNS confirm, deliver to and retry HTTP(S) subscriptions on mapped hosts as
    SNS does (see above), and add the routes. Idempotent."""
    _patch_subscribe()
    _patch_publish()
    _patch_confirm_subscription()
    add_route(HOSTS_PATH, _hosts_response)
    add_route(CONFIRMATION_PATH, _confirmation_response)
    add_route(ATTEMPTS_PATH, _attempts_response)
    add_route(AGE_RETRIES_PATH, ageing_route(_dispatcher.age, "attempts", example_seconds=3600))
