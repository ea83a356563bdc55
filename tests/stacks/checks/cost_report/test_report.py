"""The cost report counts and prices what the templates deploy: keys, alarms and event sources
per account, and a million messages through the relays as their event sources batch them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cross_account_runtime.relay.config_format import HANDLER as RELAY_HANDLER
from cross_account_runtime.sns_endpoint.config import HANDLER as SNS_ENDPOINT_HANDLER
from stacks.checks.cost_report import build_cost_report
from stacks.checks.cost_report import prices as p
from tests.stacks.quotas.assemblies import (
    OTHER_ACCOUNT,
    resource,
    resources,
    write_assembly,
)

ROOT = Path(__file__).resolve().parents[4]
ROLE_ARN = {"Fn::GetAtt": ["Role", "Arn"]}


def keys(count: int) -> dict[str, Any]:
    return {f"Key{i}": resource("AWS::KMS::Key", KeyPolicy={}) for i in range(count)}


def relay(direction: str, *, batch: int = 10, memory: int = 256, **queue: Any) -> dict[str, Any]:
    """A relay of ``direction`` reading one encrypted queue."""
    return resources(
        Queue=resource(
            "AWS::SQS::Queue", **({"QueueName": "Billing", "KmsMasterKeyId": "k"} | queue)
        ),
        Role=resource("AWS::IAM::Role", RoleName=f"messaging-relay-{direction}-Sales"),
        Logs=resource("AWS::Logs::LogGroup", RetentionInDays=90),
        Function=resource(
            "AWS::Lambda::Function",
            Handler=RELAY_HANDLER,
            Role=ROLE_ARN,
            MemorySize=memory,
            LoggingConfig={"LogGroup": {"Ref": "Logs"}},
        ),
        Source=resource(
            "AWS::Lambda::EventSourceMapping",
            EventSourceArn={"Fn::GetAtt": ["Queue", "Arn"]},
            FunctionName={"Ref": "Function"},
            BatchSize=batch,
        ),
    )


def bridge(tmp_path: Path, outbound: dict[str, Any], **options: Any) -> dict[str, float]:
    """Quantity per line of the bridge's cost, with an inbound relay of the defaults."""
    assembly = write_assembly(
        tmp_path, {"Out": outbound, "In": relay("inbound")}, {"In": OTHER_ACCOUNT}
    )
    return {
        line.item: line.quantity for line in build_cost_report(assembly, **options).bridge.lines
    }


def test_an_account_pays_for_each_key_its_templates_hold(tmp_path: Path) -> None:
    per_queue = resources(**keys(4))
    per_account = resources(**keys(1))
    report = build_cost_report(
        write_assembly(tmp_path, {"A": per_queue, "B": per_account}, {"B": OTHER_ACCOUNT})
    )
    by_account = {a.account: a for a in report.accounts}
    assert [a.keys for a in report.accounts] == [4, 1]
    assert by_account["111111111111"].usd - by_account[OTHER_ACCOUNT].usd == pytest.approx(3.0)


def test_stacks_of_one_account_add_up(tmp_path: Path) -> None:
    report = build_cost_report(
        write_assembly(tmp_path, {"A": resources(**keys(2)), "A2": resources(**keys(3))})
    )
    (account,) = report.accounts
    assert (account.stacks, account.keys) == (["A", "A2"], 5)


def test_an_alarm_pays_per_metric(tmp_path: Path) -> None:
    math = [
        {"Id": "e", "Expression": "a+b"},
        {"Id": "a", "MetricStat": {}},
        {"Id": "b", "MetricStat": {}},
    ]
    template = resources(
        Plain=resource("AWS::CloudWatch::Alarm", MetricName="ApproximateAgeOfOldestMessage"),
        Math=resource("AWS::CloudWatch::Alarm", Metrics=math),
    )
    (account,) = build_cost_report(write_assembly(tmp_path, {"A": template})).accounts
    assert account.alarm_metrics == 3
    (alarms,) = [line for line in account.lines if line.price is p.ALARM_METRIC_MONTH]
    assert alarms.usd == pytest.approx(0.30)


def test_an_idle_event_source_is_an_estimated_fixed_cost(tmp_path: Path) -> None:
    (account,) = build_cost_report(write_assembly(tmp_path, {"A": relay("outbound")})).accounts
    (idle,) = [line for line in account.lines if line.item.startswith("empty receives")]
    assert (account.event_sources, idle.quantity) == (1, 5 * 30 * 86_400 / 20)


def test_a_batch_of_ten_costs_a_tenth_of_a_call_per_message(tmp_path: Path) -> None:
    lines = bridge(tmp_path, relay("outbound"))
    assert lines["sender: sends to its shadow queue"] == 1_000_000
    for direction in ("outbound", "inbound"):
        for call in ("receives", "deletes", "sends", "invocations"):
            assert lines[f"{direction}: {call}"] == 100_000
        assert lines[f"{direction}: duration"] == pytest.approx(100_000 * 0.05 * 0.25)


def test_a_larger_batch_saves_invocations_not_sqs_calls(tmp_path: Path) -> None:
    lines = bridge(tmp_path, relay("outbound", batch=100))
    assert lines["outbound: invocations"] == 10_000
    assert lines["outbound: receives"] == 100_000
    assert lines["outbound: duration"] == pytest.approx(10_000 * 10 * 0.05 * 0.25)


def test_each_64_kib_of_a_call_is_a_request(tmp_path: Path) -> None:
    lines = bridge(tmp_path, relay("outbound"), message_bytes=40_000)
    assert lines["sender: sends to its shadow queue"] == 1_000_000
    assert lines["outbound: sends"] == 100_000 * 7
    assert lines["outbound: deletes"] == 100_000


def test_kms_requests_follow_the_shortest_reuse_period_never_more_than_the_messages(
    tmp_path: Path,
) -> None:
    lines = bridge(tmp_path / "a", relay("outbound", KmsDataKeyReusePeriodSeconds=86_400))
    assert lines["KMS data keys"] == 3 * 2 * 30 * 86_400 / 300
    lines = bridge(tmp_path / "b", relay("outbound", KmsDataKeyReusePeriodSeconds=60))
    assert lines["KMS data keys"] == 3 * 2 * 30 * 86_400 / 60
    lines = bridge(tmp_path / "c", relay("outbound"), messages=1_000)
    assert lines["KMS data keys"] == 3 * 2 * 1_000


def test_fifo_relay_sources_pay_fifo_requests(tmp_path: Path) -> None:
    fifo = relay("outbound", QueueName="Billing.fifo", FifoQueue=True)
    assembly = write_assembly(tmp_path, {"Out": fifo})
    (receives,) = [
        line
        for line in build_cost_report(assembly).bridge.lines
        if line.item == "outbound: receives"
    ]
    assert receives.price is p.SQS_FIFO_REQUEST


def test_functions_that_are_no_relays_are_left_out(tmp_path: Path) -> None:
    other = relay("outbound")
    other["Resources"]["Role"]["Properties"]["RoleName"] = "react"
    elsewhere = relay("outbound")
    elsewhere["Resources"]["Source"]["Properties"]["FunctionName"] = "arn:aws:lambda:x"
    assembly = write_assembly(tmp_path, {"A": other, "B": elsewhere})
    assert build_cost_report(assembly).bridge.hops == {}


def test_a_dashboard_and_the_metrics_each_function_writes_are_priced_per_month(
    tmp_path: Path,
) -> None:
    template = resources(
        **relay("outbound")["Resources"],
        Dashboard=resource("AWS::CloudWatch::Dashboard", DashboardBody="{}"),
        Endpoint=resource("AWS::Lambda::Function", Handler=SNS_ENDPOINT_HANDLER),
        Other=resource("AWS::Lambda::Function", Handler="index.handler"),
    )
    (account,) = build_cost_report(write_assembly(tmp_path, {"A": template})).accounts
    # The relay's six core counts, the endpoint's eight answers; another function none.
    assert (account.dashboards, account.custom_metrics) == (1, 6 + 8)
    by_price = {line.price: line for line in account.lines}
    assert by_price[p.DASHBOARD_MONTH].usd == pytest.approx(3.00)
    assert by_price[p.CUSTOM_METRIC_MONTH].usd == pytest.approx(14 * 0.30)
    assert by_price[p.CUSTOM_METRIC_MONTH].estimate
