"""Realistic, reproducible SNS delivery-status logs for tests, benchmarks and demos.

Deliveries are drawn from a topology (``topology.py``) with a seeded ``random.Random``:
``attempts`` and ``dwellTimeMs`` follow the retry schedules (``retry_schedule.py``), failures
of every cause appear with the wording SNS logs for them, some records are logged twice and
some HTTP endpoints answer 4xx (logged as SUCCESS). The same events are then written in any
of the four layouts (``sample_writers.py``; command line in ``sample_data.py``), so one data
set read through every layout must give one summary. ``Truth`` counts what was generated,
for tests to compare against.
"""

from __future__ import annotations

import json
import math
import random
import uuid
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from cross_account_runtime.delivery_report.sample.retry_schedule import (
    MANAGED_MAX_ATTEMPTS,
    http_delays,
    managed_elapsed,
    push_delay,
)
from cross_account_runtime.delivery_report.sample.topology import (
    RETRIED_CAUSES,
    SampleSubscription,
    SampleTopic,
    SampleTopology,
    default_sample_topology,
)

DEFAULT_START = datetime(2025, 1, 6, tzinfo=UTC)
HTTP_TIMEOUT_MS = 15_000
STREAMS_PER_GROUP = 4
_LATENCY_MS = {
    "sqs": 25.0,
    "lambda": 45.0,
    "firehose": 60.0,
    "http/s": 150.0,
    "application": 400.0,
    "sms": 600.0,
}
_SUCCESS_CODE = {"sqs": 200, "lambda": 202, "firehose": 200, "http/s": 200, "application": 200}
_HTTP_4XX = {
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    429: "Too Many Requests",
}
_HTTP_5XX = {
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    504: "Gateway Timeout",
}


@dataclass(frozen=True)
class LogEvent:
    """One CloudWatch Logs event holding one delivery-status record."""

    log_group: str
    log_stream: str
    owner: str
    timestamp_ms: int
    message: str


@dataclass(frozen=True)
class _Meta:
    """What a generated record is, for the ``Truth`` counts."""

    topic: str
    destination: str
    protocol: str
    message_id: str
    status: str
    cause: str | None
    retried: bool
    http_4xx_success: bool


@dataclass
class Truth:
    """Counts of what was generated; the job's summary must report the same numbers."""

    records: int = 0
    by_status: Counter[str] = field(default_factory=Counter)
    by_cause: Counter[str] = field(default_factory=Counter)
    by_protocol: Counter[str] = field(default_factory=Counter)
    retried: int = 0
    retried_succeeded: int = 0
    http_4xx_success: int = 0
    duplicated_deliveries: int = 0
    duplicate_extra_records: int = 0
    lost: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "records": self.records,
            "by_status": dict(sorted(self.by_status.items())),
            "by_cause": dict(sorted(self.by_cause.items())),
            "by_protocol": dict(sorted(self.by_protocol.items())),
            "retried": self.retried,
            "retried_succeeded": self.retried_succeeded,
            "http_4xx_success": self.http_4xx_success,
            "duplicated_deliveries": self.duplicated_deliveries,
            "duplicate_extra_records": self.duplicate_extra_records,
            "lost": self.lost,
        }


@dataclass(frozen=True)
class SampleData:
    events: list[LogEvent]
    truth: Truth


@dataclass
class _Outcome:
    status: str
    cause: str | None
    attempts: int
    dwell_ms: int
    status_code: int | None
    response: str
    http_4xx: bool = False


def generate(
    records: int,
    seed: int,
    *,
    topology: SampleTopology | None = None,
    start: datetime = DEFAULT_START,
    hours: float = 48.0,
    duplicate_rate: float = 0.002,
) -> SampleData:
    """``records`` log events (exactly), reproducible from ``seed``."""
    if records < 0:
        raise ValueError("records must be >= 0")
    rng = random.Random(seed)
    topo = topology or default_sample_topology()
    weights = [topic.weight for topic in topo.topics]
    start_ms = int(start.timestamp() * 1000)
    window_ms = int(hours * 3600 * 1000)
    outage = (start_ms + int(window_ms * 0.40), start_ms + int(window_ms * 0.42))
    streams: dict[str, list[str]] = {}
    events: list[LogEvent] = []
    metas: list[_Meta] = []
    while len(events) < records:
        topic = rng.choices(topo.topics, weights)[0]
        published_ms = start_ms + rng.randrange(window_ms)
        message_id = _uuid(rng)
        md5 = f"{rng.getrandbits(128):032x}"
        for subscription in topic.subscriptions:
            in_outage = outage[0] <= published_ms < outage[1]
            outcome = _outcome(rng, subscription, in_outage)
            if outcome.status == "SUCCESS" and rng.random() * 100 >= topic.success_sample_rate:
                continue
            record = _record(
                rng,
                topic=topic,
                subscription=subscription,
                message_id=message_id,
                md5=md5,
                published_ms=published_ms,
                outcome=outcome,
            )
            group = topic.log_group(failure=outcome.status == "FAILURE")
            if group not in streams:
                streams[group] = [_uuid(rng) for _ in range(STREAMS_PER_GROUP)]
            event = LogEvent(
                log_group=group,
                log_stream=rng.choice(streams[group]),
                owner=topic.account,
                timestamp_ms=published_ms + outcome.dwell_ms + rng.randint(5, 200),
                message=json.dumps(record, separators=(",", ":")),
            )
            meta = _Meta(
                topic=topic.arn,
                destination=subscription.endpoint,
                protocol=subscription.protocol,
                message_id=message_id,
                status=outcome.status,
                cause=outcome.cause,
                retried=outcome.attempts > 1,
                http_4xx_success=outcome.http_4xx,
            )
            copies = 2 if rng.random() < duplicate_rate else 1
            for _ in range(copies):
                events.append(event)
                metas.append(meta)
    del events[records:], metas[records:]
    return SampleData(events=events, truth=_truth(metas))


def _truth(metas: Sequence[_Meta]) -> Truth:
    truth = Truth(records=len(metas))
    deliveries: Counter[tuple[str, str, str]] = Counter()
    failed: set[tuple[str, str, str]] = set()
    succeeded: set[tuple[str, str, str]] = set()
    for meta in metas:
        key = (meta.topic, meta.destination, meta.message_id)
        deliveries[key] += 1
        truth.by_status[meta.status] += 1
        truth.by_protocol[meta.protocol] += 1
        if meta.cause is not None:
            truth.by_cause[meta.cause] += 1
        truth.retried += meta.retried
        truth.retried_succeeded += meta.retried and meta.status == "SUCCESS"
        truth.http_4xx_success += meta.http_4xx_success
        (succeeded if meta.status == "SUCCESS" else failed).add(key)
    truth.duplicated_deliveries = sum(1 for n in deliveries.values() if n > 1)
    truth.duplicate_extra_records = sum(n - 1 for n in deliveries.values())
    truth.lost = len(failed - succeeded)
    return truth


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _latency(rng: random.Random, protocol: str) -> int:
    return max(1, int(rng.lognormvariate(math.log(_LATENCY_MS[protocol]), 0.6)))


def _outcome(rng: random.Random, subscription: SampleSubscription, in_outage: bool) -> _Outcome:
    protocol = subscription.protocol
    failures = dict(subscription.failures)
    if in_outage and protocol == "http/s":
        failures = {"timeout": 0.5, "http_5xx": 0.3}
    draw = rng.random()
    for cause, rate in sorted(failures.items()):
        if draw < rate:
            return _failure(rng, subscription, cause)
        draw -= rate
    if draw < subscription.retried_success_rate:
        return _retried_success(rng, subscription)
    draw -= subscription.retried_success_rate
    latency = _latency(rng, protocol)
    if draw < subscription.http_4xx_success_rate:
        code = rng.choice(sorted(_HTTP_4XX))
        return _Outcome("SUCCESS", None, 1, latency, code, _HTTP_4XX[code], http_4xx=True)
    return _Outcome(
        "SUCCESS", None, 1, latency, _SUCCESS_CODE.get(protocol), _success_response(rng, protocol)
    )


def _retry_wait_ms(rng: random.Random, subscription: SampleSubscription, retries: int) -> int:
    """Time spent waiting between attempts for ``retries`` retries, with SNS's jitter."""
    protocol = subscription.protocol
    if protocol == "http/s":
        seconds = sum(http_delays(subscription.policy)[:retries])
    elif protocol in {"application", "sms"}:
        seconds = sum(push_delay(r) for r in range(1, retries + 1))
    else:
        seconds = managed_elapsed(retries)
    return int(seconds * 1000 * rng.uniform(1.0, 1.1))


def _max_retries(subscription: SampleSubscription) -> int:
    if subscription.protocol == "http/s":
        return subscription.policy.num_retries
    if subscription.protocol in {"application", "sms"}:
        return 49
    return MANAGED_MAX_ATTEMPTS - 1


def _retried_success(rng: random.Random, subscription: SampleSubscription) -> _Outcome:
    protocol = subscription.protocol
    ceiling = max(1, min(_max_retries(subscription), 8))
    retries = min(ceiling, 1 + int(rng.expovariate(0.7)))
    per_attempt = _latency(rng, protocol)
    timed_out = protocol == "http/s" and rng.random() < 0.3
    failed_attempts_ms = retries * (HTTP_TIMEOUT_MS if timed_out else per_attempt)
    dwell = _retry_wait_ms(rng, subscription, retries) + failed_attempts_ms + per_attempt
    return _Outcome(
        "SUCCESS",
        None,
        retries + 1,
        dwell,
        _SUCCESS_CODE.get(protocol),
        _success_response(rng, protocol),
    )


def _failure(rng: random.Random, subscription: SampleSubscription, cause: str) -> _Outcome:
    protocol = subscription.protocol
    latency = _latency(rng, protocol)
    code, response = _failure_answer(rng, subscription, cause)
    if cause not in RETRIED_CAUSES:
        return _Outcome("FAILURE", cause, 1, latency, code, response)
    retries = _max_retries(subscription)
    per_attempt = HTTP_TIMEOUT_MS if cause == "timeout" else latency
    dwell = _retry_wait_ms(rng, subscription, retries) + (retries + 1) * per_attempt
    return _Outcome("FAILURE", cause, retries + 1, dwell, code, response)


def _failure_answer(
    rng: random.Random, subscription: SampleSubscription, cause: str
) -> tuple[int | None, str]:
    """The ``statusCode`` and ``providerResponse`` SNS logs for a failure of this cause."""
    protocol = subscription.protocol
    endpoint = subscription.endpoint
    if cause == "http_5xx":
        code = rng.choice(sorted(_HTTP_5XX))
        return code, f"{code} {_HTTP_5XX[code]}"
    if cause == "timeout":
        return None, rng.choice(
            [
                "Timeout waiting for the endpoint to respond",
                "SocketTimeoutException: Read timed out",
            ]
        )
    if cause == "tls_error":
        return None, rng.choice(
            [
                "SSLPeerUnverifiedException in HttpClient",
                "SSLHandshakeException: PKIX path building failed",
            ],
        )
    if cause == "connection_error":
        return None, rng.choice(
            [
                "Connection refused",
                "UnknownHostException in HttpClient",
                "NoHttpResponseException in HttpClient",
            ],
        )
    if cause == "kms_access_denied":
        account = endpoint.split(":")[4]
        message = (
            f"User: arn:aws:sts::{account}:assumed-role/sns-delivery is not authorized to perform: "
            f"kms:GenerateDataKey on resource: arn:aws:kms:us-east-1:{account}:key/{_uuid(rng)}"
        )
        return 400, _provider_json(protocol, "KMS.AccessDeniedException", message)
    if cause == "endpoint_missing":
        if protocol == "application":
            return None, "Endpoint is disabled"
        error = (
            "AWS.SimpleQueueService.NonExistentQueue"
            if protocol == "sqs"
            else "ResourceNotFoundException"
        )
        return (400 if protocol == "sqs" else 404), _provider_json(
            protocol, error, f"{endpoint} does not exist"
        )
    if cause == "access_denied":
        error = "AccessDenied" if protocol == "sqs" else "AccessDeniedException"
        return 403, _provider_json(protocol, error, f"Access to the resource {endpoint} is denied.")
    if cause == "data_protection_policy":
        return 403, (
            "The topic's data protection policy prohibits this message from being delivered to "
            f"{endpoint}:{_uuid(rng)}"
        )
    if cause == "throttled":
        error = "TooManyRequestsException" if protocol == "lambda" else "ThrottlingException"
        return 429, _provider_json(protocol, error, "Rate exceeded")
    if protocol == "sms":
        return None, rng.choice(
            ["Phone carrier has blocked this message", "Phone is currently unreachable/unavailable"]
        )
    return 8, "NotificationErrorResponse(command=8, status=InvalidToken, id=1, cause=null)"


def _provider_json(protocol: str, error: str, message: str) -> str:
    body: dict[str, str] = {"ErrorCode": error, "ErrorMessage": message}
    if protocol == "sqs":
        body["sqsRequestId"] = "Unrecoverable"
    return json.dumps(body, separators=(",", ":"))


def _success_response(rng: random.Random, protocol: str) -> str:
    if protocol == "sqs":
        return json.dumps(
            {"sqsRequestId": _uuid(rng), "sqsMessageId": _uuid(rng)}, separators=(",", ":")
        )
    if protocol == "lambda":
        return json.dumps({"lambdaRequestId": _uuid(rng)}, separators=(",", ":"))
    if protocol == "firehose":
        return json.dumps({"firehoseRequestId": _uuid(rng)}, separators=(",", ":"))
    if protocol == "sms":
        return "Message has been accepted by phone carrier"
    if protocol == "application":
        return json.dumps({"apns-id": _uuid(rng)}, separators=(",", ":"))
    return "OK"


def _timestamp_text(rng: random.Random, published_ms: int) -> str:
    """Mostly SNS's usual format; some with two fractional digits or AWS's ISO sample form."""
    moment = datetime.fromtimestamp(published_ms / 1000, UTC)
    draw = rng.random()
    if draw < 0.01:
        return f"{moment:%Y-%m-%d}T{moment.hour}:{moment:%M:%S}Z"
    millis = f"{published_ms % 1000:03d}"
    if draw < 0.04:
        return f"{moment:%Y-%m-%d %H:%M:%S}.{millis[:2]}"
    return f"{moment:%Y-%m-%d %H:%M:%S}.{millis}"


def _record(
    rng: random.Random,
    *,
    topic: SampleTopic,
    subscription: SampleSubscription,
    message_id: str,
    md5: str,
    published_ms: int,
    outcome: _Outcome,
) -> dict[str, Any]:
    notification: dict[str, Any] = {}
    if topic.carries_topic_arn:
        notification["messageMD5Sum"] = md5
    notification["messageId"] = message_id
    if topic.carries_topic_arn:
        notification["topicArn"] = topic.arn
    notification["timestamp"] = _timestamp_text(rng, published_ms)
    protocol = subscription.protocol
    if protocol == "sms":
        delivery: dict[str, Any] = {
            "phoneCarrier": "Example Mobile",
            "mnc": 270,
            "numberOfMessageParts": 1,
            "destination": subscription.endpoint,
            "priceInUSD": 0.00645,
            "smsType": "Transactional",
            "mcc": 310,
            "providerResponse": outcome.response,
            "dwellTimeMs": outcome.dwell_ms,
        }
        if outcome.status == "SUCCESS":
            delivery["dwellTimeMsUntilDeviceAck"] = outcome.dwell_ms + rng.randint(200, 2000)
        return {"notification": notification, "delivery": delivery, "status": outcome.status}
    delivery = {
        "deliveryId": _uuid(rng),
        "destination": subscription.endpoint,
        "providerResponse": outcome.response,
        "dwellTimeMs": outcome.dwell_ms,
    }
    if not (protocol == "lambda" and outcome.attempts == 1 and outcome.status == "SUCCESS"):
        delivery["attempts"] = outcome.attempts
    if outcome.status_code is not None:
        delivery["statusCode"] = outcome.status_code
    if protocol == "application":
        delivery["token"] = f"{rng.getrandbits(256):064x}"
    return {"notification": notification, "delivery": delivery, "status": outcome.status}
