"""Per-message cost of the account-bridge relay and its cold import time, this tree beside an
earlier revision, in one run.

Prints one JSON object:

- ``handler_us_per_message``: the relay's batch processor
  (:class:`cross_account_runtime.relay.processor.Relay`, what the Lambda entry point calls) on batches
  of 10 records of 20 NServiceBus headers each, with a send function that records the request
  instead of calling SQS (so no network is measured) and the JSON log lines written to
  ``/dev/null``; for outbound stamping in both wire forms and with a time to be received (which
  the relay counts down), inbound delivery to an ARN-aware endpoint (unchanged) and to a
  released one (address headers translated), inbound conversion each way (an unwrapped message
  to a wrapping endpoint, a wrapped one to an unwrapping endpoint), and a native message passing
  through. ``core_us_per_message`` is the pure core
  (:func:`cross_account_runtime.relay.core.relay_message`) alone on the same records. Each
  figure is the best of several timeit runs, for ``after`` (this tree) and ``before`` (the
  runtime package at ``--baseline-revision``, ``git archive``'d), measured in alternating fresh
  interpreters, :data:`ROUNDS` of each, listed, and ``best``, the least of the rounds (a
  machine shared with other work slows some rounds, never speeds one up); an earlier revision
  has no form conversion nor time to be received, and relays those records as it did
  (unchanged);
- ``cold_import``: in fresh interpreters (median and best of several), importing the Lambda
  entry module ``cross_account_runtime.relay.lambda_handler`` (and with it everything it runs)
  alone, and importing it and creating the first SQS client (which imports boto3 and loads the
  SQS model; no request is made), each with the runtime's bytecode cached and compiled from
  source, before and after;
- ``machine``: ``nproc`` and ``lscpu``'s model name.

The worker (``--worker``) runs in the variant's interpreter with that variant's runtime package
first on ``PYTHONPATH``; it uses only what both revisions have.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import timeit
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Final

REPOSITORY = Path(__file__).resolve().parent.parent
BASELINE_REVISION: Final = "bdb2be7"
"""The revision before the relay kept time to be received and converted forms."""
LOCAL_ADDRESS = "Sales"
SALES_ARN = "arn:aws:sqs:us-east-1:111111111111:Sales"
SHADOW_ARN = "arn:aws:sqs:us-east-1:111111111111:Billing"
INGRESS_ARN = "arn:aws:sqs:us-east-1:222222222222:Billing-ingress"
SENT_MILLISECONDS = 1545082649183
BATCH_SIZE = 10
IMPORT_RUNS = 11
TIMING_REPEATS = 9
ROUNDS: Final = 3
TARGETS = {"handler_us_per_message": 50, "import_with_boto3_ms": 150}
TIME_TO_BE_RECEIVED = "NServiceBus.AmazonSQS.TimeToBeReceived"


def message_headers() -> dict[str, str]:
    """20 headers as an NServiceBus send carries them, 3 of which hold the local address."""
    headers = {
        "NServiceBus.MessageId": "0b7c4a5e-3f1d-4c2a-9e8b-2f6d1a0c9b11",
        "NServiceBus.CorrelationId": "0b7c4a5e-3f1d-4c2a-9e8b-2f6d1a0c9b11",
        "NServiceBus.ConversationId": "7e0f6f1c-5b9a-4d8e-8c3a-1a2b3c4d5e6f",
        "NServiceBus.MessageIntent": "Send",
        "NServiceBus.ContentType": "application/json",
        "NServiceBus.EnclosedMessageTypes": "Billing.Messages.BillOrder, Billing.Messages",
        "NServiceBus.TimeSent": "2024-05-01 10:15:30:123456 Z",
        "NServiceBus.Version": "9.2.3",
        "NServiceBus.OriginatingEndpoint": LOCAL_ADDRESS,
        "NServiceBus.OriginatingMachine": "ip-10-0-1-23",
        "NServiceBus.OriginatingHostId": "2f4e0a3b9c8d7e6f5a4b3c2d1e0f9a8b",
        "$.diagnostics.originating.hostid": "2f4e0a3b9c8d7e6f5a4b3c2d1e0f9a8b",
        "NServiceBus.ReplyToAddress": LOCAL_ADDRESS,
        "NServiceBus.FailedQ": LOCAL_ADDRESS,
        "NServiceBus.ProcessingStarted": "2024-05-01 10:15:30:100000 Z",
        "NServiceBus.ProcessingEnded": "2024-05-01 10:15:30:120000 Z",
        "NServiceBus.ProcessingMachine": "ip-10-0-1-23",
        "NServiceBus.TimeToBeReceived": "1.00:00:00",
        "traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        "Sales.TenantId": "tenant-42",
    }
    assert len(headers) == 20
    return headers


PAYLOAD = json.dumps({"OrderId": 42, "Lines": [{"Sku": f"SKU-{n}", "Qty": n} for n in range(10)]})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline-revision", default=BASELINE_REVISION)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.worker:
        handler, core = processing_figures()
        print(json.dumps({"handler": handler, "core": core}))
        return
    print(json.dumps(orchestrate(arguments.baseline_revision), indent=2))


def orchestrate(revision: str) -> dict[str, Any]:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import bench_support  # noqa: PLC0415 (beside this file)

    with tempfile.TemporaryDirectory() as scratch:
        baseline = bench_support.runtime_at(revision, Path(scratch) / "baseline")
        packages = {
            "before": baseline / "cross_account_runtime",
            "after": REPOSITORY / "runtime" / "cross_account_runtime",
        }
        runs: dict[str, list[dict[str, dict[str, float]]]] = {"before": [], "after": []}
        for _ in range(ROUNDS):
            for variant, package in packages.items():
                runs[variant].append(_run_worker(package.parent))
        cold: dict[str, Any] = {}
        for variant, package in packages.items():
            bench_support.RUNTIME_PACKAGE = package
            cold[variant] = cold_import_figures(bench_support)
    figures: dict[str, Any] = {}
    for measure in ("handler", "core"):
        figures[f"{measure}_us_per_message"] = {
            case: {
                **{variant: [run[measure][case] for run in runs[variant]] for variant in packages},
                "best": {
                    variant: min(run[measure][case] for run in runs[variant])
                    for variant in packages
                },
            }
            for case in runs["after"][0][measure]
        }
    return {
        "batch_size": BATCH_SIZE,
        "headers_per_message": 20,
        "baseline_revision": revision,
        **figures,
        "cold_import": cold,
        "targets": TARGETS,
        "machine": bench_support.machine(),
    }


def _run_worker(runtime: Path) -> dict[str, dict[str, float]]:
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(runtime), str(REPOSITORY)])}
    done = subprocess.run(
        [sys.executable, __file__, "--worker"],
        env=environment,
        check=True,
        capture_output=True,
        text=True,
    )
    result: dict[str, dict[str, float]] = json.loads(done.stdout)
    return result


# In the variant's interpreter --------------------------------------------------------------


def record(
    source: str, number: int, body: str, attributes: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A Lambda SQS record as the event source mapping delivers it."""
    return {
        "messageId": f"059f36b4-87a3-44ab-83d2-6619758300{number:02d}",
        "receiptHandle": "AQEBwJnKyrHigUMZj6rYigCgxlaS3SLy0a" + str(number),
        "body": body,
        "attributes": {
            "ApproximateReceiveCount": "1",
            "SentTimestamp": str(SENT_MILLISECONDS),
            "SenderId": "AIDAIENQZJOLO23YVJ4VO",
            "ApproximateFirstReceiveTimestamp": str(SENT_MILLISECONDS + 2),
        },
        "messageAttributes": attributes or {},
        "md5OfBody": "e4e68fb7bd0e697a0ae8f1bb342846b3",
        "eventSource": "aws:sqs",
        "eventSourceARN": source,
        "awsRegion": "us-east-1",
    }


def string_attribute(value: str) -> dict[str, Any]:
    return {
        "stringValue": value,
        "stringListValues": [],
        "binaryListValues": [],
        "dataType": "String",
    }


def as_sent(message: dict[str, object]) -> tuple[str, dict[str, Any]]:
    """The body and the Lambda record's attributes of a message built as the released
    transport's dispatcher builds it (:mod:`cross_account_runtime.nservicebus.dispatch`)."""
    attributes: dict[str, Any] = message["MessageAttributes"]  # type: ignore[assignment]
    return str(message["MessageBody"]), {
        name: string_attribute(attribute["StringValue"]) for name, attribute in attributes.items()
    }


def wrapped(headers: dict[str, str]) -> tuple[str, dict[str, Any]]:
    """The transport's default form: compact JSON, its escaping, the message id attribute."""
    from cross_account_runtime.nservicebus.dispatch import wrapped_message  # noqa: PLC0415

    return as_sent(wrapped_message(headers["NServiceBus.MessageId"], headers, PAYLOAD.encode()))


def unwrapped(headers: dict[str, str]) -> tuple[str, dict[str, Any]]:
    """``DoNotWrapOutgoingMessages``: the payload as the body, the headers in an attribute."""
    from cross_account_runtime.nservicebus.dispatch import unwrapped_message  # noqa: PLC0415

    return as_sent(unwrapped_message(headers["NServiceBus.MessageId"], headers, PAYLOAD.encode()))


def batches() -> dict[str, tuple[Any, dict[str, Any]]]:
    """A configuration and a 10-record event for each measured case."""
    from cross_account_runtime.relay import config as relay_config  # noqa: PLC0415
    from cross_account_runtime.relay.addresses import stamp  # noqa: PLC0415

    # Inbound routes name their form since form conversion came; the constant has lived in
    # the configuration module and, since, in its format module.
    forms = (
        hasattr(relay_config, "ROUTE_FORM")
        or importlib.util.find_spec("cross_account_runtime.relay.config_format") is not None
    )
    outbound = relay_config.RelayConfig(
        "outbound",
        {
            SHADOW_ARN: {
                "destination": INGRESS_ARN,
                "deadLetterQueue": "arn:aws:sqs:us-east-1:111111111111:Billing-dlq",
            }
        },
        [LOCAL_ADDRESS],
    )

    def inbound(receiver: str, form: str = "wrapped") -> Any:
        route: dict[str, object] = {
            "destination": "arn:aws:sqs:us-east-1:222222222222:Billing",
            "deadLetterQueue": "arn:aws:sqs:us-east-1:222222222222:Billing-ingress-dlq",
            "receiver": receiver,
        }
        if forms:
            route["form"] = form
        if receiver == "arn":
            return relay_config.RelayConfig("inbound", {INGRESS_ARN: route})
        # Billing reaches Sales through its shadow, and three more queues of other accounts.
        book = {
            "arn:aws:sqs:us-east-1:111111111111": ["Sales", "Shipping"],
            "arn:aws:sqs:us-east-1:222222222222": ["Billing"],
            "arn:aws:sqs:us-east-1:333333333333": ["error"],
        }
        return relay_config.RelayConfig(
            "inbound", {INGRESS_ARN: {**route, "addressBook": "1"}}, address_books={"1": book}
        )

    headers = message_headers()
    # What the outbound relay forwards: the ARN header lists the address headers it stamped.
    stamped = {**headers, **stamp(headers, {LOCAL_ADDRESS: SALES_ARN})[0]}
    # A heartbeat's time to be received, counted down by every hop.
    timed = {**headers, TIME_TO_BE_RECEIVED: "00:00:40"}
    numbers = range(BATCH_SIZE)

    def event(source: str, message: tuple[str, dict[str, Any]]) -> dict[str, Any]:
        return {"Records": [record(source, n, *message) for n in numbers]}

    return {
        "outbound_wrapped": (outbound, event(SHADOW_ARN, wrapped(headers))),
        "outbound_attribute": (outbound, event(SHADOW_ARN, unwrapped(headers))),
        "outbound_wrapped_time_to_be_received": (outbound, event(SHADOW_ARN, wrapped(timed))),
        "inbound_wrapped_arn_aware": (inbound("arn"), event(INGRESS_ARN, wrapped(stamped))),
        "inbound_wrapped_released": (inbound("name"), event(INGRESS_ARN, wrapped(stamped))),
        "inbound_attribute_to_wrapped": (
            inbound("name", "wrapped"),
            event(INGRESS_ARN, unwrapped(stamped)),
        ),
        "inbound_wrapped_to_attribute": (
            inbound("name", "attribute"),
            event(INGRESS_ARN, wrapped(stamped)),
        ),
        "native_passthrough": (
            outbound,
            {"Records": [record(SHADOW_ARN, n, PAYLOAD) for n in numbers]},
        ),
    }


class RecordingSend:
    """Stands in for ``SendMessageBatch``: accepts every entry and counts them."""

    def __init__(self, result: Callable[[dict[str, str], dict[str, Any]], Any]) -> None:
        self.result = result
        self.count = 0

    def __call__(self, _region: str, _queue_url: str, entries: Sequence[dict[str, Any]]) -> Any:
        self.count += len(entries)
        return self.result(
            {entry["Id"]: "1e4a3b2c-0000-4000-8000-000000000000" for entry in entries}, {}
        )


def microseconds_per_message(function: Callable[[], object]) -> float:
    """Best of several timeit runs of one batch, divided by the batch size."""
    timer = timeit.Timer(function)
    number, _ = timer.autorange()
    return min(timer.repeat(repeat=TIMING_REPEATS, number=number)) / number / BATCH_SIZE * 1e6


def processing_figures() -> tuple[dict[str, float], dict[str, float]]:
    from cross_account_runtime.common.json_log import JsonLogger  # noqa: PLC0415
    from cross_account_runtime.relay.core import relay_message  # noqa: PLC0415
    from cross_account_runtime.relay.processor import Relay  # noqa: PLC0415
    from cross_account_runtime.relay.sending import BatchResult  # noqa: PLC0415

    now = SENT_MILLISECONDS / 1000 + 5

    def relay_each(records: list[dict[str, Any]], config: Any) -> None:
        """The pure core on each record, without sending or logging."""
        for item in records:
            relay_message(item, config, now)

    handler: dict[str, float] = {}
    core: dict[str, float] = {}
    # Log lines and, since the relay writes them, its metrics lines (to standard output, as in
    # Lambda) go to the null device: written, as their cost is the relay's, never read.
    with open(os.devnull, "w", encoding="utf-8") as sink, contextlib.redirect_stdout(sink):
        for name, (config, event) in batches().items():
            send = RecordingSend(BatchResult)
            relay = Relay(
                config,
                send_batch=send,
                logger=JsonLogger("bench", stream=sink),
                clock=lambda: now,
            )
            response = relay(event, None)
            assert response == {"batchItemFailures": []}, response
            assert send.count == BATCH_SIZE
            handler[name] = round(
                microseconds_per_message(functools.partial(relay, event, None)), 2
            )
            core[name] = round(
                microseconds_per_message(functools.partial(relay_each, event["Records"], config)),
                2,
            )
    return handler, core


# Cold import -------------------------------------------------------------------------------


def import_milliseconds(support: Any, code: str, *, bytecode_cached: bool) -> dict[str, float]:
    """Cold import time of the relay (with boto3 and botocore as installed).

    Credentials are in the environment, as Lambda provides them: without them botocore's
    credential chain would try the instance metadata service over the network.
    """
    result: dict[str, float] = support.import_milliseconds(
        code,
        bytecode_cached=bytecode_cached,
        runs=IMPORT_RUNS,
        environment={
            "AWS_ACCESS_KEY_ID": "bench",
            "AWS_SECRET_ACCESS_KEY": "bench",
            "AWS_EC2_METADATA_DISABLED": "true",
            "AWS_CONFIG_FILE": os.devnull,
            "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
        },
    )
    return result


def cold_import_figures(support: Any) -> dict[str, dict[str, dict[str, float]]]:
    """The cold imports of the package ``support.RUNTIME_PACKAGE`` points at."""
    module_only = (
        "import time; start = time.perf_counter(); "
        "import cross_account_runtime.relay.lambda_handler; "
        "print(time.perf_counter() - start)"
    )
    with_client = (
        "import time; start = time.perf_counter(); "
        "import cross_account_runtime.relay.lambda_handler; "
        "from cross_account_runtime.relay.sending import create_sqs_client; "
        "create_sqs_client('us-east-1'); print(time.perf_counter() - start)"
    )
    return {
        label: {
            "import_relay": import_milliseconds(support, module_only, bytecode_cached=cached),
            "import_relay_and_first_sqs_client": import_milliseconds(
                support, with_client, bytecode_cached=cached
            ),
        }
        for cached, label in ((True, "bytecode_cached"), (False, "compiled_from_source"))
    }


if __name__ == "__main__":
    main()
