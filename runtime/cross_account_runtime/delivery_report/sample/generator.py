"""Realistic, reproducible SNS delivery-status logs for tests, benchmarks and demos.

Deliveries are drawn from a topology (``topology.py``) with a seeded ``random.Random``:
``attempts`` and ``dwellTimeMs`` follow the retry schedules (``retry_schedule.py``), failures
of every cause appear with the wording SNS logs for them, HTTP endpoints fail more during an
outage window, some records are logged twice and some HTTP endpoints answer 4xx (logged as
SUCCESS). The same events are then written in any of the four layouts (``writers.py``;
command line in ``cli.py``), so one data set read through every layout must give one summary.

Events are made lazily: :func:`generate` is an iterator, so tens of millions of records never
sit in memory, and a ``TruthCounter`` (``events.py``) counts what passes (the ``Truth`` the
job's summary must reproduce) in constant memory. The stream is a sequence of chunks of
:data:`CHUNK_RECORDS`, each seeded from the seed and its index alone, so that the writers can
make chunks on several cores and still write the same files as on one.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import json
import math
import random
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from typing import NamedTuple

from cross_account_runtime.delivery_report.sample.events import (
    FAILURE,
    SUCCESS,
    LogEvent,
    RecordFacts,
)
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
DEFAULT_HOURS = 48.0
DUPLICATE_RATE = 0.002
CHUNK_RECORDS = 1_000_000
"""Records per independently seeded chunk: the unit of work of one core when writing."""
HTTP_TIMEOUT_MS = 15_000
STREAMS_PER_GROUP = 4
OUTAGE = (0.40, 0.42)
"""Where in the publishing window the HTTP endpoints' outage falls (fractions of it)."""
OUTAGE_FAILURES: Mapping[str, float] = {"timeout": 0.5, "http_5xx": 0.3}
"""How HTTP/S deliveries fail during the outage."""
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
_HTTP_4XX_CODES = tuple(sorted(_HTTP_4XX))
_HTTP_5XX = {
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    504: "Gateway Timeout",
}
_UUID_CLEAR = ~((0xF000 << 64) | (0xC000 << 48))
_UUID_V4 = (4 << 76) | (0x8000 << 48)


def chunk_sizes(records: int, chunk_records: int = CHUNK_RECORDS) -> Iterator[int]:
    """The records of each chunk, in order: full chunks, then the remainder (the arguments are
    checked at the call, not when the first size is read)."""
    if records < 0:
        raise ValueError("records must be >= 0")
    if chunk_records < 1:
        raise ValueError("chunk_records must be >= 1")
    full, rest = divmod(records, chunk_records)
    return itertools.chain(itertools.repeat(chunk_records, full), [rest] if rest else [])


def generate(
    records: int,
    seed: int,
    *,
    topology: SampleTopology | None = None,
    start: datetime = DEFAULT_START,
    hours: float = DEFAULT_HOURS,
    duplicate_rate: float = DUPLICATE_RATE,
    chunk_records: int = CHUNK_RECORDS,
) -> Iterator[LogEvent]:
    """``records`` log events (exactly), reproducible from ``seed``, made as they are read.

    The events of chunk ``i`` are :func:`generate_chunk` ``(i, ...)``; ``chunk_records`` only
    matters in that a different chunking gives different (equally realistic) events.
    """
    sizes = chunk_sizes(records, chunk_records)
    return itertools.chain.from_iterable(
        generate_chunk(
            index,
            size,
            seed,
            topology=topology,
            start=start,
            hours=hours,
            duplicate_rate=duplicate_rate,
        )
        for index, size in enumerate(sizes)
    )


def generate_chunk(
    index: int,
    records: int,
    seed: int,
    *,
    topology: SampleTopology | None = None,
    start: datetime = DEFAULT_START,
    hours: float = DEFAULT_HOURS,
    duplicate_rate: float = DUPLICATE_RATE,
) -> Iterator[LogEvent]:
    """The ``records`` events of chunk ``index``: seeded from ``seed`` and ``index`` alone, so
    that any process can make any chunk. Log streams are the same in every chunk."""
    if records < 0:
        raise ValueError("records must be >= 0")
    topics = (topology or default_sample_topology()).topics
    cumulative = list(itertools.accumulate(topic.weight for topic in topics))
    if not cumulative[-1] > 0:
        raise ValueError("the topics' weights must add up to more than 0")
    prepared_topics = [_PreparedTopic(topic, seed) for topic in topics]
    return _events(
        random.Random(f"{seed}:{index}"),
        prepared_topics,
        cumulative,
        records,
        start_ms=int(start.timestamp() * 1000),
        window_ms=int(hours * 3600 * 1000),
        duplicate_rate=duplicate_rate,
    )


def _events(
    rng: random.Random,
    prepared_topics: list[_PreparedTopic],
    cumulative: list[float],
    records: int,
    *,
    start_ms: int,
    window_ms: int,
    duplicate_rate: float,
) -> Iterator[LogEvent]:
    """Published messages, each delivered to every subscription of its topic, until exactly
    ``records`` events (the last message's, or a duplicate pair, may be cut short)."""
    outage = (start_ms + int(window_ms * OUTAGE[0]), start_ms + int(window_ms * OUTAGE[1]))
    total = cumulative[-1]
    last = len(prepared_topics) - 1
    random_ = rng.random
    emitted = 0
    while emitted < records:
        topic = prepared_topics[bisect.bisect(cumulative, random_() * total, 0, last)]
        published_ms = start_ms + int(random_() * window_ms)
        message_id = _uuid(rng.getrandbits(128))
        head = topic.notification_head(rng, message_id)
        in_outage = outage[0] <= published_ms < outage[1]
        for subscription in topic.subscriptions:
            outcome = subscription.outcome(rng, in_outage)
            if (
                outcome.status == SUCCESS
                and topic.success_sample_rate < 100
                and random_() * 100 >= topic.success_sample_rate
            ):
                continue
            failed = outcome.status == FAILURE
            streams = topic.failure_streams if failed else topic.success_streams
            # Fields by position: quicker than by keyword, for every record.
            event = LogEvent(
                topic.failure_group if failed else topic.success_group,
                streams[int(random_() * len(streams))],
                topic.owner,
                published_ms + outcome.dwell_ms + 5 + int(random_() * 196),
                subscription.record_text(rng, head, published_ms, outcome),
                RecordFacts(
                    topic.arn,
                    subscription.endpoint,
                    subscription.protocol,
                    message_id,
                    outcome.status,
                    outcome.cause,
                    outcome.attempts > 1,
                    outcome.http_4xx,
                ),
            )
            copies = 2 if random_() < duplicate_rate else 1
            for _ in range(copies):
                yield event
                emitted += 1
                if emitted == records:
                    return


class _Outcome(NamedTuple):
    status: str
    cause: str | None
    attempts: int
    dwell_ms: int
    status_code: int | None
    response: str
    http_4xx: bool = False


class _PreparedTopic:
    """A topic with what its records share worked out once: log groups, streams, JSON."""

    def __init__(self, topic: SampleTopic, seed: int) -> None:
        self.arn = topic.arn
        self.owner = topic.account
        self.success_sample_rate = topic.success_sample_rate
        self.success_group = topic.log_group(failure=False)
        self.failure_group = topic.log_group(failure=True)
        self.success_streams = _log_streams(seed, self.success_group)
        self.failure_streams = _log_streams(seed, self.failure_group)
        self.carries_topic_arn = topic.carries_topic_arn
        self.arn_json = json.dumps(topic.arn)
        self.subscriptions = [_PreparedSubscription(s) for s in topic.subscriptions]

    def notification_head(self, rng: random.Random, message_id: str) -> str:
        """A record's text up to its notification's timestamp, the same for every record of
        one message (drawing its MD5 when SNS writes one)."""
        if self.carries_topic_arn:
            md5 = f"{rng.getrandbits(128):032x}"
            return (
                f'{{"notification":{{"messageMD5Sum":"{md5}","messageId":"{message_id}",'
                f'"topicArn":{self.arn_json},"timestamp":"'
            )
        return f'{{"notification":{{"messageId":"{message_id}","timestamp":"'


def _log_streams(seed: int, group: str) -> tuple[str, ...]:
    """The log streams of a group: from the seed and the group alone, so every chunk writes to
    the same ones."""
    rng = random.Random(f"{seed}:{group}")
    return tuple(_uuid(rng.getrandbits(128)) for _ in range(STREAMS_PER_GROUP))


class _PreparedSubscription:
    """A subscription's outcomes and records, with its rates and schedules worked out once."""

    def __init__(self, subscription: SampleSubscription) -> None:
        self.subscription = subscription
        self.protocol = subscription.protocol
        self.endpoint = subscription.endpoint
        self.destination_json = json.dumps(subscription.endpoint)
        self.failures = tuple(sorted(subscription.failures.items()))
        self.outage_failures = (
            tuple(sorted(OUTAGE_FAILURES.items())) if self.protocol == "http/s" else self.failures
        )
        self.retried_success_rate = subscription.retried_success_rate
        self.http_4xx_success_rate = subscription.http_4xx_success_rate
        self.latency_mu = math.log(_LATENCY_MS[self.protocol])
        self.success_code = _SUCCESS_CODE.get(self.protocol)
        self.max_retries = _max_retries(subscription)
        self._wait_s: dict[int, float] = {}

    def outcome(self, rng: random.Random, in_outage: bool) -> _Outcome:
        draw = rng.random()
        for cause, rate in self.outage_failures if in_outage else self.failures:
            if draw < rate:
                return self._failure(rng, cause)
            draw -= rate
        if draw < self.retried_success_rate:
            return self._retried_success(rng)
        draw -= self.retried_success_rate
        latency = self.latency(rng)
        if draw < self.http_4xx_success_rate:
            code = rng.choice(_HTTP_4XX_CODES)
            return _Outcome(SUCCESS, None, 1, latency, code, _HTTP_4XX[code], http_4xx=True)
        return _Outcome(
            SUCCESS, None, 1, latency, self.success_code, _success_response(rng, self.protocol)
        )

    def latency(self, rng: random.Random) -> int:
        """One attempt's milliseconds: log-normal around the protocol's typical latency."""
        return max(1, int(math.exp(rng.gauss(self.latency_mu, 0.6))))

    def retry_wait_ms(self, rng: random.Random, retries: int) -> int:
        """Time spent waiting between attempts for ``retries`` retries, with SNS's jitter."""
        seconds = self._wait_s.get(retries)
        if seconds is None:
            seconds = self._wait_s[retries] = _retry_wait_seconds(self.subscription, retries)
        return int(seconds * 1000 * rng.uniform(1.0, 1.1))

    def _retried_success(self, rng: random.Random) -> _Outcome:
        ceiling = max(1, min(self.max_retries, 8))
        retries = min(ceiling, 1 + int(rng.expovariate(0.7)))
        per_attempt = self.latency(rng)
        timed_out = self.protocol == "http/s" and rng.random() < 0.3
        failed_attempts_ms = retries * (HTTP_TIMEOUT_MS if timed_out else per_attempt)
        dwell = self.retry_wait_ms(rng, retries) + failed_attempts_ms + per_attempt
        return _Outcome(
            SUCCESS,
            None,
            retries + 1,
            dwell,
            self.success_code,
            _success_response(rng, self.protocol),
        )

    def _failure(self, rng: random.Random, cause: str) -> _Outcome:
        latency = self.latency(rng)
        code, response = _failure_answer(rng, self.subscription, cause)
        if cause not in RETRIED_CAUSES:
            return _Outcome(FAILURE, cause, 1, latency, code, response)
        retries = self.max_retries
        per_attempt = HTTP_TIMEOUT_MS if cause == "timeout" else latency
        dwell = self.retry_wait_ms(rng, retries) + (retries + 1) * per_attempt
        return _Outcome(FAILURE, cause, retries + 1, dwell, code, response)

    def record_text(
        self, rng: random.Random, head: str, published_ms: int, outcome: _Outcome
    ) -> str:
        """The record as SNS logs it: compact JSON, keys in SNS's order."""
        timestamp = _timestamp_text(rng.random(), published_ms)
        response = json.dumps(outcome.response)
        if self.protocol == "sms":
            delivery = (
                '{"phoneCarrier":"Example Mobile","mnc":270,"numberOfMessageParts":1,'
                f'"destination":{self.destination_json},"priceInUSD":0.00645,'
                f'"smsType":"Transactional","mcc":310,"providerResponse":{response},'
                f'"dwellTimeMs":{outcome.dwell_ms}'
            )
            if outcome.status == SUCCESS:
                ack_ms = outcome.dwell_ms + rng.randint(200, 2000)
                delivery += f',"dwellTimeMsUntilDeviceAck":{ack_ms}'
        else:
            delivery = (
                f'{{"deliveryId":"{_uuid(rng.getrandbits(128))}",'
                f'"destination":{self.destination_json},"providerResponse":{response},'
                f'"dwellTimeMs":{outcome.dwell_ms}'
            )
            if not (
                self.protocol == "lambda" and outcome.attempts == 1 and outcome.status == SUCCESS
            ):
                delivery += f',"attempts":{outcome.attempts}'
            if outcome.status_code is not None:
                delivery += f',"statusCode":{outcome.status_code}'
            if self.protocol == "application":
                delivery += f',"token":"{rng.getrandbits(256):064x}"'
        return f'{head}{timestamp}"}},"delivery":{delivery}}},"status":"{outcome.status}"}}'


def _uuid(bits: int) -> str:
    """A version-4 UUID's text from 128 random bits (as ``uuid.UUID(int=..., version=4)``)."""
    text = f"{(bits & _UUID_CLEAR) | _UUID_V4:032x}"
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


def _retry_wait_seconds(subscription: SampleSubscription, retries: int) -> float:
    """Seconds the schedule waits between attempts over ``retries`` retries, without jitter."""
    protocol = subscription.protocol
    if protocol == "http/s":
        return sum(http_delays(subscription.policy)[:retries])
    if protocol in {"application", "sms"}:
        return sum(push_delay(r) for r in range(1, retries + 1))
    return managed_elapsed(retries)


def _max_retries(subscription: SampleSubscription) -> int:
    if subscription.protocol == "http/s":
        return subscription.policy.num_retries
    if subscription.protocol in {"application", "sms"}:
        return 49
    return MANAGED_MAX_ATTEMPTS - 1


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
            f"kms:GenerateDataKey on resource: arn:aws:kms:us-east-1:{account}:key/"
            f"{_uuid(rng.getrandbits(128))}"
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
            f"{endpoint}:{_uuid(rng.getrandbits(128))}"
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
        request, message = _uuid(rng.getrandbits(128)), _uuid(rng.getrandbits(128))
        return f'{{"sqsRequestId":"{request}","sqsMessageId":"{message}"}}'
    if protocol == "lambda":
        return f'{{"lambdaRequestId":"{_uuid(rng.getrandbits(128))}"}}'
    if protocol == "firehose":
        return f'{{"firehoseRequestId":"{_uuid(rng.getrandbits(128))}"}}'
    if protocol == "sms":
        return "Message has been accepted by phone carrier"
    if protocol == "application":
        return f'{{"apns-id":"{_uuid(rng.getrandbits(128))}"}}'
    return "OK"


def _timestamp_text(draw: float, published_ms: int) -> str:
    """Mostly SNS's usual format; some with two fractional digits or AWS's ISO sample form."""
    if draw < 0.01:
        moment = datetime.fromtimestamp(published_ms / 1000, UTC)
        return f"{moment:%Y-%m-%d}T{moment.hour}:{moment:%M:%S}Z"
    text = millis_text(published_ms, " ")
    return text[:-1] if draw < 0.04 else text


def millis_text(timestamp_ms: int, separator: str) -> str:
    """``YYYY-MM-DD<separator>HH:MM:SS.mmm`` of a UTC moment given in milliseconds.

    Every record formats a moment or two, so this is built from parts: a data set spans few
    minutes (formatted once each), seconds and milliseconds are looked up.
    """
    minute, of_minute = divmod(timestamp_ms, 60_000)
    second, millis = divmod(of_minute, 1000)
    return _minute_text(minute, separator) + _SECOND_TEXT[second] + _MILLIS_TEXT[millis]


@functools.lru_cache(maxsize=65_536)
def _minute_text(minute: int, separator: str) -> str:
    return f"{datetime.fromtimestamp(minute * 60, UTC):%Y-%m-%d{separator}%H:%M}"


_SECOND_TEXT = tuple(f":{second:02d}" for second in range(60))
_MILLIS_TEXT = tuple(f".{millis:03d}" for millis in range(1000))
