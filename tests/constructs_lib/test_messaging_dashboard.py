"""MessagingDashboard: a section per relay (its messages in and out, its function, the oldest
message of each queue it reads, its alarms) and per SNS HTTPS endpoint, every graph and status
widget within CloudWatch's numbers however many queues and alarms a stack holds."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from aws_cdk import App, Environment, Stack
from aws_cdk import aws_sqs as sqs
from aws_cdk.assertions import Template

from constructs_lib import (
    AccountBridge,
    BridgeShadow,
    EndpointQueue,
    MessagingAlarms,
    MessagingDashboard,
    SnsHttpsEndpoint,
)
from constructs_lib.defaults import ALARMS_PER_STATUS_WIDGET, QUEUES_PER_GRAPH
from cross_account_runtime.sns_endpoint.receiver import DELIVERY_METRICS
from stacks.quotas.assembly import StackTemplate

pytestmark = pytest.mark.synth

ACCOUNT = "111111111111"
REMOTE = "222222222222"


def stack() -> Stack:
    return Stack(App(), "Sales", env=Environment(account=ACCOUNT, region="us-east-1"))


def widgets(stack: Stack) -> list[dict[str, Any]]:
    """The dashboard's widgets, its body resolved as CloudFormation passes it on."""
    template = Template.from_stack(stack).to_json()
    resolved = StackTemplate("Sales", "Sales.template.json", ACCOUNT, "us-east-1", 0, template)
    ((_, props),) = resolved.of_type("AWS::CloudWatch::Dashboard")
    found: list[dict[str, Any]] = json.loads(resolved.text(props["DashboardBody"]))["widgets"]
    return found


def titled(found: list[dict[str, Any]], prefix: str) -> list[dict[str, Any]]:
    return [w for w in found if w["properties"].get("title", "").startswith(prefix)]


def bridge_of(stack: Stack, shadows: int, *, delayed_delivery: bool = True) -> MessagingDashboard:
    dashboard = MessagingDashboard(stack, "Dashboard", dashboard_name="Messaging-Sales")
    AccountBridge(
        stack,
        "Bridge",
        account_name="Sales",
        local_endpoints=["Sales"],
        shadows=[
            BridgeShadow(
                f"arn:aws:sqs:us-east-1:{REMOTE}:Endpoint{n:02}", delayed_delivery=delayed_delivery
            )
            for n in range(shadows)
        ],
        alarms=MessagingAlarms(stack, "Alarms"),
        dashboard=dashboard,
    )
    return dashboard


def test_a_relay_section_shows_its_messages_function_queues_and_alarms() -> None:
    here = stack()
    bridge_of(here, 2)
    found = widgets(here)
    assert [w["properties"]["markdown"] for w in found if w["type"] == "text"] == [
        "# The account bridge of stack Sales\nBuilt by its CDK stack: a change made here in "
        "the console is lost at the next deploy.",
        "## Outbound relay messaging-relay-outbound-Sales",
    ]
    (messages,) = titled(found, "Messages")
    assert [m[1] for m in messages["properties"]["metrics"]] == [
        "Records",
        "Forwarded",
        "DeadLettered",
        "Expired",
        "Failed",
    ]
    (function,) = titled(found, "Function")
    assert {m[1] for m in function["properties"]["metrics"]} == {"Errors", "Throttles", "Duration"}
    (oldest,) = titled(found, "Oldest message")
    # Each shadow; not the shadows of the delay queues, which hold every message until due.
    assert sorted(m[3] for m in oldest["properties"]["metrics"]) == ["Endpoint00", "Endpoint01"]
    (status,) = [w for w in found if w["type"] == "alarm"]
    # The relay's five and each shadow's oldest message and dead letters (the delay shadows'
    # dead letters too).
    assert len(status["properties"]["alarms"]) == 5 + 2 * 2 + 2


def test_a_relay_reading_many_queues_gets_graphs_of_a_readable_size() -> None:
    here = stack()
    bridge_of(here, 30, delayed_delivery=False)
    oldest = titled(widgets(here), "Oldest message")
    assert [len(w["properties"]["metrics"]) for w in oldest] == [
        QUEUES_PER_GRAPH,
        30 - QUEUES_PER_GRAPH,
    ]
    assert oldest[0]["properties"]["title"] == "Oldest message per queue read (s) (1 of 2)"


def test_more_alarms_than_a_status_widget_takes_go_into_more_widgets_all_shown() -> None:
    here = stack()
    alarms = MessagingAlarms(here, "Alarms")
    watched = [
        alarms.watch_dead_letter_queue(
            f"Q{n}",
            sqs.Queue.from_queue_arn(here, f"Q{n}", f"arn:aws:sqs:us-east-1:{ACCOUNT}:q{n}"),
        )
        for n in range(120)
    ]
    dashboard = MessagingDashboard(here, "Dashboard")
    dashboard.show_alarms("Dead letters", watched)
    statuses = [w["properties"] for w in widgets(here) if w["type"] == "alarm"]
    assert [len(s["alarms"]) for s in statuses] == [ALARMS_PER_STATUS_WIDGET, 20]
    assert [s["title"] for s in statuses] == ["Dead letters (1 of 2)", "Dead letters (2 of 2)"]
    assert dashboard.shown_alarms == watched


def test_alarms_no_section_showed_get_a_section_of_their_own() -> None:
    here = stack()
    dashboard = bridge_of(here, 1)
    extra = MessagingAlarms(here, "More")
    queue = EndpointQueue(here, "Sales", endpoint_name="Sales")
    dashboard.show_alarms("Endpoint queues", [extra.watch_endpoint_queue("Sales", queue.queue)])
    dashboard.show_alarms("Nothing", [])
    found = widgets(here)
    assert found[-2]["properties"]["markdown"] == "## Endpoint queues"
    assert len(found[-1]["properties"]["alarms"]) == 1
    assert "## Nothing" not in json.dumps(found)


def test_an_sns_endpoint_section_shows_its_answers_its_url_and_its_function(
    partner_endpoint: Callable[..., SnsHttpsEndpoint],
) -> None:
    here = stack()
    endpoint = partner_endpoint(here)
    alarms = MessagingAlarms(here, "Alarms").watch_sns_endpoint("Partner", endpoint)
    MessagingDashboard(here, "Dashboard").show_sns_endpoint(endpoint, alarms)
    found = widgets(here)
    (answers,) = titled(found, "Deliveries by answer")
    assert tuple(m[1] for m in answers["properties"]["metrics"]) == DELIVERY_METRICS
    (url,) = titled(found, "Function URL")
    assert [m[1] for m in url["properties"]["metrics"]] == [
        "UrlRequestCount",
        "Url4xxCount",
        "Url5xxCount",
    ]
    (status,) = [w for w in found if w["type"] == "alarm"]
    assert len(status["properties"]["alarms"]) == 4


@pytest.mark.parametrize("name", ["Messaging Sales", "", "x" * 256, "Sales/Prod"])
def test_a_name_cloudwatch_refuses_is_refused_at_synth_naming_the_field(name: str) -> None:
    with pytest.raises(ValueError, match=r"^dashboard_name: CloudWatch takes 1 to 255 letters"):
        MessagingDashboard(stack(), "Dashboard", dashboard_name=name)
