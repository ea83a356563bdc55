"""Per-message cost of the ARN header steps and the import time of the runtime modules.

Prints one JSON object: microseconds per ``stamp_outgoing`` and ``substitute_incoming`` on a
20-header message of which 3 headers carry the local address (the substitute runs on the
stamped message, so it decodes those 3 entries), their fast paths (nothing to stamp, no ARN
header), ``encode``/``decode`` of 3 entries, and the import time of each runtime module,
measured in a fresh interpreter, with and without cached bytecode.
"""

from __future__ import annotations

import json
import timeit
from collections.abc import Callable

import bench_support

from cross_account_runtime.nservicebus.arn_header import (
    decode,
    encode,
    stamp_outgoing,
    substitute_incoming,
)

LOCAL_ADDRESS = "Sales"
LOCAL_ARN = "arn:aws:sqs:eu-west-1:123456789012:prod-Sales"
MODULES = (
    "cross_account_runtime.nservicebus.arn_header",
    "cross_account_runtime.nservicebus.transport_address",
    "cross_account_runtime.nservicebus.wire_writing",
)
IMPORT_RUNS = 9
TIMING_REPEATS = 5


def message_headers() -> dict[str, str]:
    """20 headers as an NServiceBus send carries them, 3 of which hold the local address."""
    headers = {
        "NServiceBus.MessageId": "0b7c4a5e-3f1d-4c2a-9e8b-2f6d1a0c9b11",
        "NServiceBus.CorrelationId": "0b7c4a5e-3f1d-4c2a-9e8b-2f6d1a0c9b11",
        "NServiceBus.ConversationId": "7e0f6f1c-5b9a-4d8e-8c3a-1a2b3c4d5e6f",
        "NServiceBus.MessageIntent": "Send",
        "NServiceBus.ContentType": "application/json",
        "NServiceBus.EnclosedMessageTypes": "Sales.Messages.PlaceOrder, Sales.Messages",
        "NServiceBus.TimeSent": "2024-05-01 10:15:30:123456 Z",
        "NServiceBus.Version": "9.2.3",
        "NServiceBus.OriginatingEndpoint": "Billing",
        "NServiceBus.OriginatingMachine": "ip-10-0-1-23",
        "NServiceBus.OriginatingHostId": "2f4e0a3b9c8d7e6f5a4b3c2d1e0f9a8b",
        "$.diagnostics.originating.hostid": "2f4e0a3b9c8d7e6f5a4b3c2d1e0f9a8b",
        "NServiceBus.ReplyToAddress": LOCAL_ADDRESS,
        "NServiceBus.SubscriberAddress": LOCAL_ADDRESS,
        "NServiceBus.FailedQ": LOCAL_ADDRESS,
        "NServiceBus.ProcessingStarted": "2024-05-01 10:15:30:100000 Z",
        "NServiceBus.ProcessingEnded": "2024-05-01 10:15:30:120000 Z",
        "NServiceBus.ProcessingMachine": "ip-10-0-1-23",
        "traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        "Sales.TenantId": "tenant-42",
    }
    assert len(headers) == 20
    return headers


def microseconds_per_call(function: Callable[[], object]) -> float:
    """Best of several timeit runs, each long enough to swamp the timer's resolution."""
    timer = timeit.Timer(function)
    number, _ = timer.autorange()
    return min(timer.repeat(repeat=TIMING_REPEATS, number=number)) / number * 1e6


def import_milliseconds(modules: tuple[str, ...], *, bytecode_cached: bool) -> dict[str, float]:
    """Cold import time of ``modules``: only the ``import`` statement is timed."""
    statements = "; ".join(f"import {module}" for module in modules)
    code = (
        "import time; start = time.perf_counter(); "
        f"{statements}; print(time.perf_counter() - start)"
    )
    return bench_support.import_milliseconds(
        code, bytecode_cached=bytecode_cached, runs=IMPORT_RUNS
    )


def main() -> None:
    headers = message_headers()
    stamped = stamp_outgoing(headers, LOCAL_ADDRESS, LOCAL_ARN)
    unmatched = {**headers, "NServiceBus.ReplyToAddress": "Other"}
    unmatched.pop("NServiceBus.SubscriberAddress")
    unmatched.pop("NServiceBus.FailedQ")
    entries = {
        "NServiceBus.ReplyToAddress": LOCAL_ARN,
        "NServiceBus.SubscriberAddress": LOCAL_ARN,
        "NServiceBus.FailedQ": LOCAL_ARN,
    }
    text = encode(entries)
    result = {
        "stamp_outgoing_us": microseconds_per_call(
            lambda: stamp_outgoing(headers, LOCAL_ADDRESS, LOCAL_ARN)
        ),
        "substitute_incoming_us": microseconds_per_call(lambda: substitute_incoming(stamped)),
        "stamp_outgoing_nothing_to_stamp_us": microseconds_per_call(
            lambda: stamp_outgoing(unmatched, LOCAL_ADDRESS, LOCAL_ARN)
        ),
        "substitute_incoming_no_arn_header_us": microseconds_per_call(
            lambda: substitute_incoming(headers)
        ),
        "encode_3_entries_us": microseconds_per_call(lambda: encode(entries)),
        "decode_3_entries_us": microseconds_per_call(lambda: decode(text)),
    }
    figures: dict[str, object] = {name: round(value, 3) for name, value in result.items()}
    for cached, label in ((True, "bytecode_cached"), (False, "compiled_from_source")):
        figures[f"import_{label}"] = {
            **{
                module: import_milliseconds((module,), bytecode_cached=cached) for module in MODULES
            },
            "all_three": import_milliseconds(MODULES, bytecode_cached=cached),
        }
    figures["targets"] = {"stamp_and_substitute_us": 5, "import_ms": 20}
    figures["machine"] = bench_support.machine()
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
