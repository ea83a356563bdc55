"""Preview the retry schedule of an SNS HTTP(S) delivery policy before deploying it.

Usage::

    python -m cross_account_runtime.delivery_policy.preview                  # SNS's default policy
    python -m cross_account_runtime.delivery_policy.preview --policy '{"healthyRetryPolicy": {...}}'
    python -m cross_account_runtime.delivery_policy.preview --file policy.json --json

The policy is a subscription ``DeliveryPolicy`` or a topic one (``{"http": {...}}``). Prints
each attempt (number, phase, delay before it, time since the first attempt), when SNS gives up,
and the backoff curve assumed; ``--json`` prints the same as one JSON object. A policy SNS would
refuse exits 2 with the message naming the field. Kept apart from
:mod:`cross_account_runtime.delivery_policy.policy` so that module stays a small, importable model.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cross_account_runtime.common.json_document import (
    WHOLE_DOCUMENT,
    JsonDocumentError,
    decode_json_document,
)
from cross_account_runtime.common.strict_json import object_without_duplicates
from cross_account_runtime.delivery_policy.policy import (
    BACKOFF_ASSUMPTION,
    BACKOFF_CURVES,
    DEFAULT,
    DELIVERY_TIMEOUT_SECONDS,
    DeliveryPolicyError,
    HttpDeliveryPolicy,
)

EXIT_BAD_INPUT = 2


def curve_assumed(policy: HttpDeliveryPolicy) -> str:
    """The backoff curve the schedule assumes, in words and as a formula."""
    function = policy.backoff_function
    return f"{function.value}, {BACKOFF_CURVES[function]}. {BACKOFF_ASSUMPTION}."


def preview_json(policy: HttpDeliveryPolicy) -> dict[str, Any]:
    """Everything the text preview shows, as one JSON-ready object."""
    return {
        "policy": policy.to_subscription_json(),
        "attempts": [
            {
                "number": attempt.number,
                "phase": attempt.phase,
                "delay_seconds": attempt.delay_seconds,
                "at_seconds": attempt.at_seconds,
            }
            for attempt in policy.schedule()
        ],
        "total_attempts": policy.total_attempts,
        "give_up_after_seconds": policy.give_up_after_seconds,
        "give_up_after_seconds_if_every_attempt_times_out": (
            policy.give_up_after_seconds_if_every_attempt_times_out
        ),
        "backoff_function": policy.backoff_function.value,
        "backoff_curve_assumed": curve_assumed(policy),
    }


def preview_text(policy: HttpDeliveryPolicy) -> str:
    """One line per attempt, then the give-up time, then the curve assumed."""
    lines = [f"{'attempt':>7}  {'phase':<12}  {'delay (s)':>9}  {'at (s)':>8}"]
    lines += [
        f"{a.number:>7}  {a.phase:<12}  {a.delay_seconds:>9.1f}  {a.at_seconds:>8.1f}"
        for a in policy.schedule()
    ]
    lines.append(
        f"SNS gives up after {policy.total_attempts} attempts, "
        f"{policy.give_up_after_seconds:.1f} s after the first one starts (jitter aside); "
        f"{policy.give_up_after_seconds_if_every_attempt_times_out:.1f} s if every attempt "
        f"waits the full {DELIVERY_TIMEOUT_SECONDS} s for an answer"
    )
    lines.append(f"backoff curve: {curve_assumed(policy)}")
    return "\n".join(lines)


def _load(arguments: argparse.Namespace) -> HttpDeliveryPolicy:
    if arguments.policy is None and arguments.file is None:
        return DEFAULT
    if arguments.policy is not None:
        try:
            document = json.loads(arguments.policy, object_pairs_hook=object_without_duplicates)
        except json.JSONDecodeError as error:
            raise DeliveryPolicyError(f"--policy: not valid JSON ({error})") from error
        except ValueError as error:
            raise DeliveryPolicyError(f"--policy: {error}; remove one") from error
    else:
        source = str(arguments.file)
        try:
            raw = arguments.file.read_bytes()
        except OSError as error:
            raise DeliveryPolicyError(f"{source}: cannot read the file ({error})") from error
        try:
            document = decode_json_document(raw, "the DeliveryPolicy JSON")
        except JsonDocumentError as error:
            where = "" if error.where == WHOLE_DOCUMENT else f" {error.where}"
            raise DeliveryPolicyError(f"{source}{where}: {error.rule}") from error
    return HttpDeliveryPolicy.from_json(document)


def main(argv: Sequence[str] | None = None) -> int:
    """Print the preview; 0 on success, 2 on a policy SNS would refuse or unreadable input."""
    parser = argparse.ArgumentParser(
        prog="python -m cross_account_runtime.delivery_policy.preview",
        description="Preview the retry schedule of an SNS HTTP(S) delivery policy "
        "(no argument: SNS's default policy).",
    )
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--policy", help="the DeliveryPolicy JSON (subscription or topic form)")
    source.add_argument("--file", type=Path, help="a file holding the DeliveryPolicy JSON")
    parser.add_argument("--json", action="store_true", help="print the preview as JSON")
    arguments = parser.parse_args(argv)
    try:
        policy = _load(arguments)
    except DeliveryPolicyError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if arguments.json:
        print(json.dumps(preview_json(policy), indent=2))
    else:
        print(preview_text(policy))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
