"""MessagingAlarms on the bridge's functions: a relay's and an SNS HTTPS endpoint's alarms read
the metrics the runtimes really write (under the service the construct gives the function),
alarm at once on what no retry cures and after a quarter of an hour on what SQS or SNS
retries."""

from __future__ import annotations

import io
from collections.abc import Callable, Mapping
from typing import Any

import pytest
from aws_cdk import App, Environment, Stack
from aws_cdk.assertions import Template

from constructs_lib import (
    CrossAccountRelay,
    EndpointQueue,
    MessagingAlarms,
    RelayDirection,
    RelayRoute,
    RelayTiming,
    SnsHttpsEndpoint,
)
from constructs_lib.defaults import PERSISTING_FAILURE_PERIODS
from cross_account_runtime.common.emf import NAMESPACE
from cross_account_runtime.common.json_log import ENV_SERVICE_NAME, JsonLogger, default_logger
from cross_account_runtime.relay.config_format import DEFAULT_SERVICE_NAME
from cross_account_runtime.relay.processor import Relay
from cross_account_runtime.sns_endpoint.receiver import SIGNATURE_REFUSED_METRIC
from tests.runtime.relay.conftest import (
    LambdaContext,
    RecordingSend,
    outbound_config,
    request_headers,
    sqs_event,
    sqs_record,
    wrapped_body,
)
from tests.runtime.relay.test_processor import SENT, TTBR

pytestmark = pytest.mark.synth

ACCOUNT = "111111111111"
Alarms = dict[str, dict[str, Any]]


def relay_stack(role_name: str | None = "messaging-relay-outbound-Sales") -> Stack:
    stack = Stack(App(), "Sales", env=Environment(account=ACCOUNT, region="us-east-1"))
    shadow = EndpointQueue(
        stack,
        "Shadow",
        endpoint_name="Billing",
        visibility_timeout=RelayTiming.for_batch(10).visibility_timeout,
    )
    relay = CrossAccountRelay(
        stack,
        "Outbound",
        direction=RelayDirection.OUTBOUND,
        routes=[RelayRoute(shadow, "arn:aws:sqs:us-east-1:222222222222:Billing-ingress")],
        local_endpoints=["Sales"],
        role_name=role_name,
    )
    MessagingAlarms(stack, "Alarms").watch_relay("Outbound", relay)
    return stack


def alarms_by_metric(stack: Stack) -> Alarms:
    found = Template.from_stack(stack).find_resources("AWS::CloudWatch::Alarm").values()
    return {
        a["Properties"].get("MetricName") or a["Properties"]["Metrics"][0]["Id"]: a["Properties"]
        for a in found
    }


def dimensions(alarm: Mapping[str, Any]) -> dict[str, Any]:
    return {d["Name"]: d["Value"] for d in alarm["Dimensions"]}


def test_a_relay_is_watched_for_errors_throttles_dead_letters_expiries_and_failures() -> None:
    alarms = alarms_by_metric(relay_stack())
    assert set(alarms) == {"Errors", "Throttles", "DeadLettered", "Expired", "Failed"}
    for name in ("Errors", "Throttles"):
        assert alarms[name]["Namespace"] == "AWS/Lambda"
        assert set(dimensions(alarms[name])) == {"FunctionName"}
    for name in ("DeadLettered", "Expired", "Failed"):
        assert alarms[name]["Namespace"] == NAMESPACE
        assert dimensions(alarms[name]) == {
            "Service": "messaging-relay-outbound-Sales",
            "Direction": "outbound",
        }
    for alarm in alarms.values():
        assert (alarm["Threshold"], alarm["Statistic"]) == (0, "Sum")
        assert alarm["TreatMissingData"] == "notBreaching"
    # A failed send is redelivered by SQS: an alarm only when it keeps failing.
    periods = {name: alarm["EvaluationPeriods"] for name, alarm in alarms.items()}
    assert periods == {
        "Errors": 1,
        "Throttles": 1,
        "DeadLettered": 1,
        "Expired": 1,
        "Failed": PERSISTING_FAILURE_PERIODS,
    }
    assert alarms["Failed"]["DatapointsToAlarm"] == PERSISTING_FAILURE_PERIODS


def test_the_relay_alarms_read_the_line_the_relay_writes_under_its_functions_service(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The function's environment names the service; the runtime, reading it as Lambda gives
    it, writes the metrics the alarms watch, under the same dimensions."""
    stack = relay_stack()
    (function,) = Template.from_stack(stack).find_resources("AWS::Lambda::Function").values()
    monkeypatch.setenv(
        ENV_SERVICE_NAME, function["Properties"]["Environment"]["Variables"][ENV_SERVICE_NAME]
    )
    written: list[tuple[dict[str, str], dict[str, int]]] = []
    service = default_logger(DEFAULT_SERVICE_NAME).service  # as the handler names its logger
    relay = Relay(
        outbound_config(),
        send_batch=RecordingSend(),
        logger=JsonLogger(service, stream=io.StringIO()),
        clock=lambda: SENT + 60,
        metrics=lambda d, c: written.append((dict(d), dict(c))),
    )
    expired = sqs_record(wrapped_body(request_headers(**{TTBR: "00:00:30"})))
    relay(sqs_event(expired), LambdaContext())

    ((line_dimensions, counts),) = written
    alarms = alarms_by_metric(stack)
    for name in ("DeadLettered", "Expired", "Failed"):
        assert dimensions(alarms[name]) == line_dimensions
        assert name in counts
    assert counts["Expired"] == 1


def test_relays_of_two_stacks_of_an_account_write_under_services_of_their_own() -> None:
    first = relay_stack("messaging-relay-outbound-Sales")
    second = relay_stack("messaging-relay-outbound-Sales-2")
    services = {
        dimensions(alarms_by_metric(stack)["Expired"])["Service"] for stack in (first, second)
    }
    assert services == {"messaging-relay-outbound-Sales", "messaging-relay-outbound-Sales-2"}


def test_a_relay_without_a_fixed_role_name_gets_a_service_unique_in_the_app() -> None:
    service = dimensions(alarms_by_metric(relay_stack(None))["Expired"])["Service"]
    assert service.startswith(f"{DEFAULT_SERVICE_NAME}-")
    assert service != DEFAULT_SERVICE_NAME


def test_an_sns_endpoint_is_watched_for_errors_forgeries_throttles_and_5xx(
    partner_endpoint: Callable[..., SnsHttpsEndpoint],
) -> None:
    stack = Stack(App(), "Partner", env=Environment(account=ACCOUNT, region="us-east-1"))
    endpoint = partner_endpoint(stack)
    MessagingAlarms(stack, "Alarms").watch_sns_endpoint("Partner", endpoint)
    alarms = alarms_by_metric(stack)
    assert set(alarms) == {"Errors", SIGNATURE_REFUSED_METRIC, "Url5xxCount", "expr_1"}
    assert dimensions(alarms[SIGNATURE_REFUSED_METRIC]) == {"Service": "sns-https-endpoint-E"}
    assert alarms["Url5xxCount"]["EvaluationPeriods"] == PERSISTING_FAILURE_PERIODS
    throttles = alarms["expr_1"]["Metrics"]
    assert sorted(
        m["MetricStat"]["Metric"]["MetricName"] for m in throttles if "MetricStat" in m
    ) == [
        "ReadThrottleEvents",
        "WriteThrottleEvents",
    ]


def test_the_endpoint_alarm_reads_the_service_its_function_writes_under(
    partner_endpoint: Callable[..., SnsHttpsEndpoint],
) -> None:
    stack = Stack(App(), "Partner", env=Environment(account=ACCOUNT, region="us-east-1"))
    endpoint = partner_endpoint(stack)
    MessagingAlarms(stack, "Alarms").watch_sns_endpoint("Partner", endpoint)
    template = Template.from_stack(stack)
    (function,) = template.find_resources("AWS::Lambda::Function").values()
    service = function["Properties"]["Environment"]["Variables"][ENV_SERVICE_NAME]
    assert JsonLogger(service).service == endpoint.service_name
    assert dimensions(alarms_by_metric(stack)[SIGNATURE_REFUSED_METRIC])["Service"] == service
