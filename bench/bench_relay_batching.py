"""Relay throughput and SQS requests per message, against moto with a fixed added latency.

Prints one JSON object. For each case (standard queues at 10 and 100 messages per invocation,
FIFO at 10 with two message groups interleaved) and for each variant of the relay (``batched``:
this tree; ``today``: the runtime package at :data:`BASELINE_REVISION`, which sends one
``SendMessage`` per message), it reports:

- ``send_requests_per_message``: the ``SendMessage`` and ``SendMessageBatch`` calls the relay
  made, over the messages of the invocation;
- ``messages_per_second``: the invocation's messages over its wall time (median of
  :data:`REPEATS` invocations), the relay built once as a warm container's is.

**The latency.** Each HTTP request the relay's SQS clients make is held for
:data:`ADDED_LATENCY_MS` by a ``before-send`` hook on the boto3 session the relay's clients come
from, before it goes to moto on 127.0.0.1. That stands in for the 5-20 ms an in-region SQS
request takes on AWS, which loopback does not have. It is fair between the variants: both run
the same decision core in the same kind of fresh interpreter against the same moto server,
the hook adds the same delay to every request whatever its size, and moto's own service time
(larger for a batch) stays in the figures. The hook is registered only around the relay's
invocation, so queue set-up and reading the messages back are not slowed.

Each variant runs in its own interpreter (the two packages share one name) with the runtime
package on ``PYTHONPATH``: the baseline is ``git archive``'d into a temporary directory.

``--slow-calls`` runs instead the scenario of a large batch and slow calls: a standard shadow
queue holding :data:`SLOW_MESSAGES` messages, with a redrive policy of ``maxReceiveCount``
:data:`SLOW_MAX_RECEIVE_COUNT` to its dead-letter queue, read :data:`SLOW_BATCH` at a time as
Lambda's event source mapping reads it (a failed message is visible again at once, as after its
visibility timeout; the queue and its redrive are simulated in process, since moto's
``ReceiveMessage`` slows with every message the queue holds), the relay's sends going to moto,
every ``SendMessageBatch`` taking :data:`SLOW_CALL_SECONDS`. The time is
simulated: the ``before-send`` hook adds the call's seconds to a clock instead of sleeping, and
the function's remaining time (Lambda's ``get_remaining_time_in_millis``) counts from that clock,
so the scenario runs in a few minutes. It reports, per variant, where the messages ended: the
ingress queue, the dead-letter queue by the relay's own send with its ``Relay.Rejection``
(tried, with the reason) or moved by the redrive policy (without a reason: never tried, or
failed without the relay knowing it was the last receive), as shares of the messages, and the
invocations it took. Variants: ``before`` (the runtime at
:data:`SLOW_BASELINE_REVISION`, a 60 s function timeout), ``after, 60 s`` (this tree, the
route naming the queue's ``maxReceiveCount``, the same timeout) and ``after, sized`` (this tree
with the timeout a batch of :data:`SLOW_BATCH` gets, ``--sized-timeout``, Lambda's maximum by
default: the constructs derive it from the batch size).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any, Final

REPOSITORY = Path(__file__).resolve().parent.parent
BASELINE_REVISION: Final = "7ff9b38"
"""The last revision whose relay sends one ``SendMessage`` per message."""
ADDED_LATENCY_MS: Final = 15.0
REPEATS: Final = 5
CASES: Final = (("standard", 10, 1), ("standard", 100, 1), ("fifo", 10, 2))
"""(queue kind, messages per invocation, message groups)."""
SALES, BILLING, REGION = "111111111111", "222222222222", "us-east-1"
SLOW_BASELINE_REVISION: Final = "bdb2be7"
"""The revision before the relay sent the most received messages first."""
SLOW_MESSAGES: Final = 2_000
SLOW_BATCH: Final = 1_000
SLOW_CALL_SECONDS: Final = 4.0
SLOW_MAX_RECEIVE_COUNT: Final = 10
SLOW_FIXED_TIMEOUT_SECONDS: Final = 60
LAMBDA_MAXIMUM_TIMEOUT_SECONDS: Final = 900


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slow-calls", action="store_true", help="the slow-call scenario only")
    parser.add_argument(
        "--sized-timeout",
        type=int,
        default=LAMBDA_MAXIMUM_TIMEOUT_SECONDS,
        help="the function timeout of the 'after, sized' variant, in seconds",
    )
    parser.add_argument("--worker", choices=("batched", "today", "slow"), help=argparse.SUPPRESS)
    parser.add_argument("--endpoint", help=argparse.SUPPRESS)
    parser.add_argument("--timeout", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--route-max-receive-count", action="store_true", help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.worker == "slow":
        print(
            json.dumps(
                _slow_worker(
                    arguments.endpoint, arguments.timeout, arguments.route_max_receive_count
                )
            )
        )
        return
    if arguments.worker:
        print(json.dumps(_worker(arguments.endpoint)))
        return
    if arguments.slow_calls:
        print(json.dumps(_orchestrate_slow_calls(arguments.sized_timeout), indent=2))
        return
    print(json.dumps(_orchestrate(), indent=2))


def _repository_on_path() -> None:
    """Make the repository importable here and in moto's server process, which imports the
    local AWS's models from it."""
    sys.path.insert(0, str(REPOSITORY))
    os.environ["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(REPOSITORY), os.environ.get("PYTHONPATH", "")) if p
    )


def _orchestrate() -> dict[str, Any]:
    _repository_on_path()
    import bench_support  # noqa: PLC0415 (beside this file)

    from local_aws.moto.server import MotoServer  # noqa: PLC0415

    with tempfile.TemporaryDirectory() as scratch:
        baseline = bench_support.runtime_at(BASELINE_REVISION, Path(scratch) / "baseline")
        paths = {"batched": REPOSITORY / "runtime", "today": baseline}
        with MotoServer(Path(scratch) / "moto.log") as server:
            results = {
                variant: _run_worker(variant, path, server.endpoint_url)
                for variant, path in paths.items()
            }
    cases: dict[str, Any] = {}
    for name in results["batched"]:
        batched, today = results["batched"][name], results["today"][name]
        cases[name] = {
            "batched": batched,
            "today": today,
            "throughput_ratio": round(
                batched["messages_per_second"] / today["messages_per_second"], 2
            ),
        }
    return {
        "added_latency_ms": ADDED_LATENCY_MS,
        "repeats": REPEATS,
        "baseline_revision": BASELINE_REVISION,
        "cases": cases,
        "targets": {
            "standard_send_requests_per_message": 0.15,
            "standard_throughput_ratio": 5,
            "fifo_two_groups_send_requests_per_message": 0.5,
        },
        "machine": bench_support.machine(),
    }


def _orchestrate_slow_calls(sized_timeout: int) -> dict[str, Any]:
    _repository_on_path()
    import bench_support  # noqa: PLC0415 (beside this file)

    from local_aws.moto.server import MotoServer  # noqa: PLC0415

    with tempfile.TemporaryDirectory() as scratch:
        baseline = bench_support.runtime_at(SLOW_BASELINE_REVISION, Path(scratch) / "baseline")
        variants = {
            "before": (baseline, SLOW_FIXED_TIMEOUT_SECONDS, False),
            "after, 60 s": (REPOSITORY / "runtime", SLOW_FIXED_TIMEOUT_SECONDS, True),
            "after, sized": (REPOSITORY / "runtime", sized_timeout, True),
        }
        results = {}
        with MotoServer(Path(scratch) / "moto.log") as server:
            for name, (runtime, timeout, route_count) in variants.items():
                extra = ["--timeout", str(timeout)]
                if route_count:
                    extra.append("--route-max-receive-count")
                results[name] = {
                    "function_timeout_seconds": timeout,
                    **_run_worker("slow", runtime, server.endpoint_url, extra),
                }
    return {
        "messages": SLOW_MESSAGES,
        "batch_size": SLOW_BATCH,
        "seconds_per_call": SLOW_CALL_SECONDS,
        "max_receive_count": SLOW_MAX_RECEIVE_COUNT,
        "baseline_revision": SLOW_BASELINE_REVISION,
        "variants": results,
        "machine": bench_support.machine(),
    }


def _run_worker(
    variant: str, runtime: Path, endpoint: str, extra: list[str] | None = None
) -> dict[str, Any]:
    environment = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(runtime), str(REPOSITORY)]),
        "AWS_ACCESS_KEY_ID": "bench",
        "AWS_SECRET_ACCESS_KEY": "bench",
        "AWS_DEFAULT_REGION": REGION,
        "AWS_REGION": REGION,
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_CONFIG_FILE": "/nonexistent",
        "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent",
    }
    done = subprocess.run(
        [sys.executable, __file__, "--worker", variant, "--endpoint", endpoint, *(extra or [])],
        env=environment,
        check=True,
        capture_output=True,
        text=True,
    )
    result: dict[str, Any] = json.loads(done.stdout)
    return result


class _Requests:
    """While active, holds each SQS request for the added latency and counts the sends.

    Registered once, before the relay creates its clients: a client copies the session's
    hooks when it is created."""

    def __init__(self) -> None:
        self.active = False
        self.sends = 0

    def __call__(self, event_name: str, **_: Any) -> None:
        if not self.active:
            return
        if event_name.endswith((".SendMessage", ".SendMessageBatch")):
            self.sends += 1
        time.sleep(ADDED_LATENCY_MS / 1000)


def _worker(endpoint: str) -> dict[str, Any]:
    """In the variant's interpreter: every case, :data:`REPEATS` invocations each."""
    import boto3  # noqa: PLC0415

    from cross_account_runtime.common.json_log import JsonLogger  # noqa: PLC0415
    from cross_account_runtime.relay.config import RelayConfig  # noqa: PLC0415
    from cross_account_runtime.relay.processor import Relay  # noqa: PLC0415
    from local_aws.accounts import route_sqs_by_queue_url  # noqa: PLC0415
    from local_aws.lambda_poller import lambda_record  # noqa: PLC0415

    session = boto3.session.Session()
    session.events.register("before-sign.sqs", route_sqs_by_queue_url)
    boto3.DEFAULT_SESSION = session
    sqs = {account: _client(session, endpoint, account) for account in (SALES, BILLING)}
    requests = _Requests()
    session.events.register("before-send.sqs", requests)
    results: dict[str, Any] = {}
    with open(os.devnull, "w") as sink:
        for kind, size, groups in CASES:
            fifo = kind == "fifo"
            shadow, ingress, dead_letter = _queues(sqs, fifo)
            # The decoded configuration, which every revision's RelayConfig takes alike.
            config = RelayConfig(
                "outbound",
                {shadow[1]: {"destination": ingress[1], "deadLetterQueue": dead_letter}},
                ["Sales"],
            )
            relay = Relay(config, logger=JsonLogger("bench", stream=sink))
            seconds = []
            requests.sends = 0
            relay({"Records": _fill(sqs[SALES], shadow, size, groups, lambda_record)}, None)
            _drain(sqs[BILLING], ingress[0], size)  # a warm container: clients created
            for _ in range(REPEATS):
                records = _fill(sqs[SALES], shadow, size, groups, lambda_record)
                requests.active = True
                started = time.perf_counter()
                response = relay({"Records": records}, None)
                seconds.append(time.perf_counter() - started)
                requests.active = False
                assert response["batchItemFailures"] == [], response
                _drain(sqs[BILLING], ingress[0], size)
            sends = requests.sends
            results[f"{kind}_{size}" + (f"_{groups}_groups" if fifo else "")] = {
                "send_requests_per_message": round(sends / (size * REPEATS), 3),
                "messages_per_second": round(size / statistics.median(seconds), 1),
            }
    return results


class _SimulatedClock:
    """Seconds since the invocation started: real time, plus what the slow calls added."""

    def __init__(self) -> None:
        self.started = time.perf_counter()
        self.added = 0.0

    def restart(self) -> None:
        self.started = time.perf_counter()
        self.added = 0.0

    def elapsed(self) -> float:
        return time.perf_counter() - self.started + self.added


class _SlowCalls:
    """``before-send`` hook: every ``SendMessageBatch`` takes :data:`SLOW_CALL_SECONDS` of the
    simulated clock."""

    def __init__(self, clock: _SimulatedClock) -> None:
        self.clock = clock
        self.calls = 0

    def __call__(self, event_name: str, **_: Any) -> None:
        if event_name.endswith(".SendMessageBatch"):
            self.calls += 1
            self.clock.added += SLOW_CALL_SECONDS


class _Context:
    """The part of Lambda's context the relay reads, timed by the simulated clock."""

    aws_request_id = "bench"

    def __init__(self, clock: _SimulatedClock, timeout: int) -> None:
        self.clock = clock
        self.timeout = timeout

    def get_remaining_time_in_millis(self) -> int:
        return int((self.timeout - self.clock.elapsed()) * 1000)


def _slow_worker(endpoint: str, timeout: int, route_max_receive_count: bool) -> dict[str, Any]:
    """In the variant's interpreter: the slow-call scenario, until the shadow queue is empty."""
    import boto3  # noqa: PLC0415

    from cross_account_runtime.common.json_log import JsonLogger  # noqa: PLC0415
    from cross_account_runtime.relay.config import RelayConfig  # noqa: PLC0415
    from cross_account_runtime.relay.processor import Relay  # noqa: PLC0415
    from local_aws.accounts import route_sqs_by_queue_url  # noqa: PLC0415

    session = boto3.session.Session()
    session.events.register("before-sign.sqs", route_sqs_by_queue_url)
    boto3.DEFAULT_SESSION = session
    sqs = {account: _client(session, endpoint, account) for account in (SALES, BILLING)}
    clock = _SimulatedClock()
    slow = _SlowCalls(clock)
    session.events.register("before-send.sqs", slow)
    name = f"Billing{uuid.uuid4().hex[:8]}"
    dead_letter = sqs[SALES].create_queue(QueueName=f"{name}-dlq")["QueueUrl"]
    ingress = sqs[BILLING].create_queue(QueueName=f"{name}-ingress")["QueueUrl"]
    shadow = _SimulatedShadow(f"arn:aws:sqs:{REGION}:{SALES}:{name}", SLOW_MESSAGES)
    route: dict[str, object] = {
        "destination": f"arn:aws:sqs:{REGION}:{BILLING}:{name}-ingress",
        "deadLetterQueue": f"arn:aws:sqs:{REGION}:{SALES}:{name}-dlq",
    }
    if route_max_receive_count:
        route["maxReceiveCount"] = SLOW_MAX_RECEIVE_COUNT
    config = RelayConfig("outbound", {shadow.arn: route}, ["Sales"])
    invocations = 0
    with open(os.devnull, "w") as sink:
        relay = Relay(config, logger=JsonLogger("bench", stream=sink))
        while records := shadow.receive(SLOW_BATCH):
            invocations += 1
            clock.restart()
            response = relay({"Records": records}, _Context(clock, timeout))
            shadow.settle(
                records, {item["itemIdentifier"] for item in response["batchItemFailures"]}
            )
    relay_dead_lettered = _count(sqs[SALES], dead_letter)
    return {
        "invocations": invocations,
        "send_requests": slow.calls,
        "delivered": _count(sqs[BILLING], ingress),
        "dead_lettered_by_the_relay_with_reason": relay_dead_lettered,
        "moved_by_redrive_without_reason": shadow.redriven,
        "dead_letter_share": round((relay_dead_lettered + shadow.redriven) / SLOW_MESSAGES, 3),
        "redriven_share": round(shadow.redriven / SLOW_MESSAGES, 3),
    }


class _SimulatedShadow:
    """A standard shadow queue as the event source mapping reads it, with a redrive policy of
    :data:`SLOW_MAX_RECEIVE_COUNT`. In process: moto's ``ReceiveMessage`` takes about a
    millisecond per message the queue holds (two seconds a call at 2,000 messages). A receive
    takes the visible messages in order; one already received ``maxReceiveCount`` times is
    moved to the dead-letter queue instead, as SQS moves it. A failed message is visible again
    at once (its visibility timeout passed), behind the others."""

    def __init__(self, arn: str, count: int) -> None:
        self.arn = arn
        self.waiting: list[dict[str, Any]] = [
            {"messageId": str(uuid.uuid4()), "body": _request_body(), "count": 0}
            for _ in range(count)
        ]
        self.redriven = 0

    def receive(self, size: int) -> list[dict[str, Any]]:
        records: list[dict[str, Any]] = []
        while self.waiting and len(records) < size:
            message = self.waiting.pop(0)
            if message["count"] >= SLOW_MAX_RECEIVE_COUNT:
                self.redriven += 1
                continue
            message["count"] += 1
            records.append(self._record(message))
        return records

    def settle(self, records: list[dict[str, Any]], failed: set[str]) -> None:
        for record in records:
            if record["messageId"] in failed:
                count = int(record["attributes"]["ApproximateReceiveCount"])
                self.waiting.append(
                    {"messageId": record["messageId"], "body": record["body"], "count": count}
                )

    def _record(self, message: dict[str, Any]) -> dict[str, Any]:
        sent = str(int(time.time() * 1000))
        return {
            "messageId": message["messageId"],
            "receiptHandle": uuid.uuid4().hex,
            "body": message["body"],
            "attributes": {
                "ApproximateReceiveCount": str(message["count"]),
                "SentTimestamp": sent,
                "SenderId": "AIDAIENQZJOLO23YVJ4VO",
                "ApproximateFirstReceiveTimestamp": sent,
            },
            "messageAttributes": {},
            "md5OfBody": "",
            "eventSource": "aws:sqs",
            "eventSourceARN": self.arn,
            "awsRegion": REGION,
        }


def _request_body() -> str:
    headers = {
        "NServiceBus.MessageId": str(uuid.uuid4()),
        "NServiceBus.MessageIntent": "Send",
        "NServiceBus.ReplyToAddress": "Sales",
        "NServiceBus.EnclosedMessageTypes": "Billing.Messages.BillOrder",
    }
    return json.dumps({"Headers": headers, "Body": "eyJPcmRlcklkIjo0Mn0=", "S3BodyKey": None})


def _count(sqs: Any, url: str) -> int:
    attributes = sqs.get_queue_attributes(
        QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"]
    )["Attributes"]
    return int(attributes["ApproximateNumberOfMessages"])


def _client(session: Any, endpoint: str, account: str) -> Any:
    """A client whose calls moto attributes to ``account`` (by the header it reads)."""
    client = session.client("sqs", region_name=REGION, endpoint_url=endpoint)
    client.meta.events.register(
        "before-sign.sqs",
        lambda request, **_: request.headers.__setitem__("x-moto-account-id", account),
    )
    return client


def _queues(sqs: dict[str, Any], fifo: bool) -> tuple[tuple[str, str], tuple[str, str], str]:
    """(URL, ARN) of a shadow in Sales and an ingress queue in Billing; the shadow's DLQ ARN."""
    suffix = ".fifo" if fifo else ""
    name = f"Billing{uuid.uuid4().hex[:8]}"
    attributes = {"FifoQueue": "true"} if fifo else {}
    made = []
    for account, queue in ((SALES, name), (BILLING, f"{name}-ingress"), (SALES, f"{name}-dlq")):
        url = sqs[account].create_queue(QueueName=queue + suffix, Attributes=attributes)["QueueUrl"]
        made.append((url, f"arn:aws:sqs:{REGION}:{account}:{queue}{suffix}"))
    return made[0], made[1], made[2][1]


def _fill(
    sqs: Any, shadow: tuple[str, str], size: int, groups: int, lambda_record: Any
) -> list[dict[str, Any]]:
    """Send ``size`` NServiceBus requests to the shadow (a FIFO one: round-robin over
    ``groups`` message groups) and receive them as Lambda would."""
    fifo = shadow[1].endswith(".fifo")
    for n in range(size):
        headers = {
            "NServiceBus.MessageId": str(uuid.uuid4()),
            "NServiceBus.MessageIntent": "Send",
            "NServiceBus.ReplyToAddress": "Sales",
            "NServiceBus.EnclosedMessageTypes": "Billing.Messages.BillOrder",
        }
        body = json.dumps({"Headers": headers, "Body": "eyJPcmRlcklkIjo0Mn0=", "S3BodyKey": None})
        extra = (
            {"MessageGroupId": f"group-{n % groups}", "MessageDeduplicationId": uuid.uuid4().hex}
            if fifo
            else {}
        )
        sqs.send_message(QueueUrl=shadow[0], MessageBody=body, **extra)
    records: list[dict[str, Any]] = []
    while len(records) < size:
        messages = sqs.receive_message(
            QueueUrl=shadow[0],
            MaxNumberOfMessages=10,
            AttributeNames=["All"],
            MessageAttributeNames=["All"],
        ).get("Messages", [])
        assert messages, f"only {len(records)} of {size} messages came back"
        for message in messages:
            records.append(lambda_record(message, shadow[1]))
            sqs.delete_message(QueueUrl=shadow[0], ReceiptHandle=message["ReceiptHandle"])
    return records


def _drain(sqs: Any, url: str, expected: int) -> None:
    """Read the forwarded messages back, so the next repeat starts empty."""
    seen = 0
    while seen < expected:
        messages = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", [])
        assert messages, f"only {seen} of {expected} forwarded messages arrived"
        for message in messages:
            sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
        seen += len(messages)


if __name__ == "__main__":
    main()
