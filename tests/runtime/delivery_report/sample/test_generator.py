"""The sample-data generator: reproducible, consistent with the retry schedules, truthful."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from cross_account_runtime.delivery_policy.policy import DeliveryPolicyError, HttpDeliveryPolicy
from cross_account_runtime.delivery_report.causes import classify
from cross_account_runtime.delivery_report.sample.cli import main
from cross_account_runtime.delivery_report.sample.generator import SampleData, generate
from cross_account_runtime.delivery_report.sample.retry_schedule import (
    MANAGED_MAX_ATTEMPTS,
    http_delays,
)
from cross_account_runtime.delivery_report.sample.topology import (
    default_sample_topology,
    sample_topology_from_dict,
)

PROTOCOL_PREFIXES = {
    "arn:aws:sqs:": "sqs",
    "arn:aws:lambda:": "lambda",
    "arn:aws:firehose:": "firehose",
    "http": "http/s",
    "+": "sms",
}


def _protocol(destination: str) -> str:
    if ":endpoint/" in destination:
        return "application"
    return next(p for prefix, p in PROTOCOL_PREFIXES.items() if destination.startswith(prefix))


def _records(sample: SampleData) -> list[dict[str, Any]]:
    return [json.loads(event.message) for event in sample.events]


def test_same_seed_same_events() -> None:
    assert generate(300, 5).events == generate(300, 5).events
    assert generate(300, 5).events != generate(300, 6).events
    assert len(generate(301, 5).events) == 301


def test_generated_causes_are_what_the_classifier_finds(sample: SampleData) -> None:
    found: Counter[str] = Counter()
    for record in _records(sample):
        delivery = record["delivery"]
        cause = classify(
            record["status"],
            _protocol(delivery["destination"]),
            delivery.get("statusCode"),
            delivery.get("providerResponse"),
        )
        if cause is not None:
            found[cause] += 1
    assert found == sample.truth.by_cause
    assert len(found) >= 9


def test_attempts_and_dwell_follow_the_retry_schedules(sample: SampleData) -> None:
    topology = default_sample_topology()
    policies = {
        s.endpoint: s.policy
        for topic in topology.topics
        for s in topic.subscriptions
        if s.protocol == "http/s"
    }
    retried_failures = 0
    for record in _records(sample):
        delivery = record["delivery"]
        destination, attempts = delivery["destination"], delivery.get("attempts", 1)
        if destination in policies and attempts > 1:
            policy = policies[destination]
            assert attempts <= policy.num_retries + 1
            assert delivery["dwellTimeMs"] >= sum(http_delays(policy)[: attempts - 1]) * 1000
            if record["status"] == "FAILURE":
                assert attempts == policy.num_retries + 1
                retried_failures += 1
        if (
            record["status"] == "FAILURE"
            and _protocol(destination) in {"lambda", "firehose"}
            and attempts > 1
        ):
            assert attempts == MANAGED_MAX_ATTEMPTS
            assert delivery["dwellTimeMs"] > 22 * 24 * 3600 * 1000
    assert retried_failures > 0


def test_records_without_topic_arn_are_sms_and_push(sample: SampleData) -> None:
    groups = {
        e.log_group.removesuffix("/Failure") for e in sample.events if '"topicArn"' not in e.message
    }
    assert groups == {
        "sns/us-east-1/111111111111/DirectPublishToPhoneNumber",
        "sns/us-east-1/111111111111/app/APNS/SalesMobile",
    }


def test_http_retries_follow_the_shared_delivery_policy_schedule() -> None:
    assert http_delays(HttpDeliveryPolicy()) == [20.0, 20.0, 20.0]
    documented = HttpDeliveryPolicy.from_json(
        {
            "healthyRetryPolicy": {
                "minDelayTarget": 1,
                "maxDelayTarget": 60,
                "numRetries": 50,
                "numNoDelayRetries": 3,
                "numMinDelayRetries": 2,
                "numMaxDelayRetries": 35,
                "backoffFunction": "exponential",
            }
        },
    )
    delays = http_delays(documented)
    assert len(delays) == 50
    assert sum(delays) == documented.give_up_after_seconds


def test_topology_from_json_refuses_an_invalid_delivery_policy() -> None:
    topic = {
        "arn": "arn:aws:sns:us-east-1:111111111111:T",
        "subscriptions": [
            {
                "protocol": "https",
                "endpoint": "https://example.com/hook",
                "deliveryPolicy": {"healthyRetryPolicy": {"numRetries": 101}},
            }
        ],
    }
    with pytest.raises(DeliveryPolicyError, match="numRetries"):
        sample_topology_from_dict({"topics": [topic]})


def test_topology_from_json_rejects_impossible_failures() -> None:
    topic = {"arn": "arn:aws:sns:us-east-1:111111111111:T", "subscriptions": []}
    sub = {
        "protocol": "sqs",
        "endpoint": "arn:aws:sqs:us-east-1:1:Q",
        "failures": {"tls_error": 0.1},
    }
    with pytest.raises(ValueError, match=r"causes \['tls_error'\] are not logged for sqs"):
        sample_topology_from_dict({"topics": [{**topic, "subscriptions": [sub]}]})
    with pytest.raises(ValueError, match="has no subscriptions"):
        sample_topology_from_dict({"topics": [topic]})
    valid = {**sub, "failures": {"kms_access_denied": 0.5}}
    assert (
        len(
            generate(
                50,
                1,
                topology=sample_topology_from_dict(
                    {"topics": [{**topic, "subscriptions": [valid]}]}
                ),
            ).events
        )
        == 50
    )


def test_command_line_writes_every_layout(tmp_path: Path) -> None:
    assert main(["--out", str(tmp_path), "--records", "120", "--seed", "4"]) == 0
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["records"] == 120
    assert manifest["truth"]["records"] == 120
    for layout in ("export", "firehose", "filter-log-events", "jsonl"):
        assert any(p.is_file() for p in (tmp_path / layout).rglob("*")), layout
    assert main(["--out", str(tmp_path), "--topology", str(tmp_path / "missing.json")]) == 2


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        (["--records", "-3"], "--records: '-3' is not a whole number >= 1"),
        (["--hours", "0"], "--hours: '0' is not a number of hours above 0"),
        (["--start", "yesterday"], "--start 'yesterday' is not an ISO time"),
        (["--topology", "/nonexistent/t.json"], "--topology /nonexistent/t.json: cannot be read"),
    ],
)
def test_the_generator_cli_names_a_bad_argument_without_a_traceback(
    arguments: list[str], named: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    try:
        code = main(["--out", str(tmp_path), "--records", "5", *arguments])
    except SystemExit as exit_:  # argparse's own refusal
        code = int(exit_.code or 0)
    assert code == 2
    error = capsys.readouterr().err
    assert named in error
    assert "Traceback" not in error


def test_the_generator_cli_names_a_topology_file_that_is_not_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    topology = tmp_path / "t.json"
    topology.write_text("")
    assert main(["--out", str(tmp_path), "--topology", str(topology)]) == 2
    assert "not a sample topology JSON" in capsys.readouterr().err
