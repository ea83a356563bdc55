"""The sample-data generator: reproducible, lazy, consistent with the retry schedules,
truthful."""

from __future__ import annotations

import itertools
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from cross_account_runtime.delivery_policy.policy import DeliveryPolicyError, HttpDeliveryPolicy
from cross_account_runtime.delivery_report.causes import classify
from cross_account_runtime.delivery_report.sample.cli import main
from cross_account_runtime.delivery_report.sample.generator import (
    STREAMS_PER_GROUP,
    generate,
    generate_chunk,
)
from cross_account_runtime.delivery_report.sample.retry_schedule import (
    MANAGED_MAX_ATTEMPTS,
    http_delays,
)
from cross_account_runtime.delivery_report.sample.topology import (
    default_sample_topology,
    sample_topology_from_dict,
)
from tests.runtime.delivery_report.conftest import Sample, truth_of
from tests.runtime.delivery_report.sample.recount import protocol_of, recount


def _records(sample: Sample) -> list[dict[str, Any]]:
    return [json.loads(event.message) for event in sample.events]


def test_same_seed_same_events() -> None:
    assert list(generate(300, 5)) == list(generate(300, 5))
    assert list(generate(300, 5)) != list(generate(300, 6))


@pytest.mark.parametrize("records", [0, 1, 2, 301, 1001])
def test_exactly_the_records_asked_for(records: int) -> None:
    events = list(generate(records, 9, duplicate_rate=0.3, chunk_records=100))
    assert len(events) == records
    assert truth_of(events).records == records


def test_impossible_counts_are_refused_at_the_call() -> None:
    with pytest.raises(ValueError, match="records must be >= 0"):
        generate(-1, 1)
    with pytest.raises(ValueError, match="chunk_records must be >= 1"):
        generate(10, 1, chunk_records=0)


def test_events_are_made_as_they_are_read() -> None:
    """A billion records are never held: the first thousand come without the rest."""
    first = list(itertools.islice(generate(10**9, 1), 1000))
    assert len(first) == 1000


def test_a_chunk_depends_on_the_seed_and_its_index_alone() -> None:
    """What lets separate processes make the chunks of one stream."""
    stream = list(generate(250, 5, chunk_records=100))
    assert stream[100:200] == list(generate_chunk(1, 100, 5))
    assert stream[200:] == list(generate_chunk(2, 50, 5))
    streams = Counter(group for group, _ in {(e.log_group, e.log_stream) for e in stream})
    assert max(streams.values()) == STREAMS_PER_GROUP  # every chunk writes to the same streams


def test_the_truth_counts_what_the_records_say(sample: Sample) -> None:
    assert sample.truth == recount((e.log_group, e.message) for e in sample.events)
    assert sample.truth.duplicated_deliveries > 0
    assert sample.truth.lost > 0


@pytest.mark.parametrize(("records", "seed"), [(1001, 9), (20_000, 4)])
def test_the_truth_counts_what_the_records_say_with_many_duplicates(
    records: int, seed: int
) -> None:
    events = list(generate(records, seed, duplicate_rate=0.4, chunk_records=300))
    assert truth_of(events) == recount((e.log_group, e.message) for e in events)


def test_a_duplicate_cut_off_by_the_record_count_is_not_counted() -> None:
    records = _count_that_cuts_a_duplicate_pair(seed=9)
    whole = list(generate(records + 1, 9, duplicate_rate=0.4))
    cut = list(generate(records, 9, duplicate_rate=0.4))
    assert cut == whole[:records]
    assert whole[records] == whole[records - 1]  # the copy the count leaves out
    assert truth_of(cut).duplicated_deliveries == truth_of(whole).duplicated_deliveries - 1
    assert truth_of(cut) == recount((e.log_group, e.message) for e in cut)


def _count_that_cuts_a_duplicate_pair(seed: int) -> int:
    events = list(generate(200, seed, duplicate_rate=0.4))
    return next(i for i in range(1, len(events)) if events[i] == events[i - 1])


def test_records_are_compact_json_as_sns_writes_them(sample: Sample) -> None:
    for event in sample.events:
        assert json.dumps(json.loads(event.message), separators=(",", ":")) == event.message


def test_generated_causes_are_what_the_classifier_finds(sample: Sample) -> None:
    found: Counter[str] = Counter()
    for record in _records(sample):
        delivery = record["delivery"]
        cause = classify(
            record["status"],
            protocol_of(delivery["destination"]),
            delivery.get("statusCode"),
            delivery.get("providerResponse"),
        )
        if cause is not None:
            found[cause] += 1
    assert found == sample.truth.by_cause
    assert len(found) >= 9


def test_attempts_and_dwell_follow_the_retry_schedules(sample: Sample) -> None:
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
            and protocol_of(destination) in {"lambda", "firehose"}
            and attempts > 1
        ):
            assert attempts == MANAGED_MAX_ATTEMPTS
            assert delivery["dwellTimeMs"] > 22 * 24 * 3600 * 1000
    assert retried_failures > 0


def test_records_without_topic_arn_are_sms_and_push(sample: Sample) -> None:
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
    topology = sample_topology_from_dict({"topics": [{**topic, "subscriptions": [valid]}]})
    assert len(list(generate(50, 1, topology=topology))) == 50


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
