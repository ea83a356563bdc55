"""The real CDK CLI bootstraps and deploys every account's stack to moto in server mode."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from local_aws.cdk_cli import CDK_BIN
from local_aws.inventory import AccountInventory
from stacks.app_builder import topology_from_context
from stacks.checks import access_report
from stacks.placement.plan import committed_plan
from stacks.placement.plan_file import PlanFile
from stacks.topology import Topology

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.moto, pytest.mark.synth]


def test_every_account_has_its_stacks_and_nothing_else(
    example_inventory: dict[str, AccountInventory],
) -> None:
    assert {name: inv.stacks for name, inv in example_inventory.items()} == {
        "Sales": {"CDKToolkit": "CREATE_COMPLETE", "Messaging-Sales": "CREATE_COMPLETE"},
        "Billing": {"CDKToolkit": "CREATE_COMPLETE", "Messaging-Billing": "CREATE_COMPLETE"},
        "Ops": {
            "CDKToolkit": "CREATE_COMPLETE",
            "Messaging-Ops": "CREATE_COMPLETE",
            "DeliveryLogs-Ops": "CREATE_COMPLETE",
        },
    }


def test_the_ops_account_holds_the_log_bucket_the_stream_and_the_spark_application(
    example_inventory: dict[str, AccountInventory],
) -> None:
    ops = example_inventory["Ops"]
    assert "messaging-delivery-logs-333333333333-us-east-1" in ops.buckets
    assert [s for s in ops.delivery_streams if s.startswith("DeliveryLogs-Ops-LogStream")] != []
    assert ops.spark_applications == ("delivery-report (emr-spark-8.0.0)",)
    assert example_inventory["Billing"].spark_applications == ()


def expected_queues(topology: Topology, account: str) -> set[str]:
    """Every queue the topology places in an account: endpoint queues, their DLQs, and the
    DLQs of the subscriptions that account owns."""
    return {
        arn
        for arn in access_report.expected_access(topology, committed_plan(topology, PlanFile()))
        if ":sqs:" in arn and arn.split(":")[4] == topology.account(account).id
    }


@pytest.mark.parametrize("account", ["Sales", "Billing", "Ops"])
def test_every_queue_exists_in_its_account(
    example_inventory: dict[str, AccountInventory], account: str
) -> None:
    topology = topology_from_context(None)
    assert example_inventory[account].queue_arns == expected_queues(topology, account)


@pytest.mark.parametrize(
    ("account", "account_id", "queue"),
    [
        ("Sales", "111111111111", "Sales"),
        ("Billing", "222222222222", "Billing"),
        ("Ops", "333333333333", "error"),
    ],
)
def test_each_endpoint_queue_redrives_to_its_dlq_and_uses_its_key(
    example_inventory: dict[str, AccountInventory], account: str, account_id: str, queue: str
) -> None:
    inventory = example_inventory[account]
    arn = f"arn:aws:sqs:us-east-1:{account_id}:{queue}"
    main = next(q for q in inventory.queues if q.arn == arn)
    dlq = next(q for q in inventory.queues if q.arn == f"{arn}-dlq")
    assert main.dead_letter_target == dlq.arn
    # NServiceBus's 5 immediate retries need 6 receives; 4 more are the margin.
    assert main.max_receive_count == 10
    key_arns = {f"arn:aws:kms:us-east-1:{account_id}:key/{k}" for k in inventory.key_ids}
    assert main.kms_key == dlq.kms_key
    assert main.kms_key in key_arns


def test_the_topic_and_its_delivery_log_groups_exist_in_the_publisher_account(
    example_inventory: dict[str, AccountInventory],
) -> None:
    """Sales holds the anchor topic of the event for Shipping, its message-driven subscriber."""
    billing = example_inventory["Billing"]
    assert billing.topic_arns == (
        "arn:aws:sns:us-east-1:222222222222:MyCompany-Messages-OrderBilled",
    )
    assert set(billing.log_groups) >= {
        "sns/us-east-1/222222222222/MyCompany-Messages-OrderBilled",
        "sns/us-east-1/222222222222/MyCompany-Messages-OrderBilled/Failure",
    }
    assert example_inventory["Sales"].topic_arns == (
        "arn:aws:sns:us-east-1:111111111111:MyCompany-Messages-OrderBilled",
    )


@pytest.mark.parametrize(
    ("account", "event_sources"),
    [
        # Inbound: Sales' and Shipping's ingress queues; outbound: the shadows of Billing and its
        # delay queue, and of ServiceControl's four queues (what goes there is never delayed).
        ("Sales", [2, 6]),
        # Inbound: Billing's ingress queue; outbound: the shadows of Shipping and Sales and of
        # their delay queues (replies may be delayed), and of ServiceControl's four queues.
        ("Billing", [1, 8]),
        # Inbound: the ingress queues of error, audit, Particular-ServiceControl and
        # Particular-Monitoring; outbound: ServiceControl's retries to Sales, Shipping and
        # Billing (it sends nothing delayed).
        ("Ops", [3, 4]),
    ],
)
def test_each_account_of_the_bridge_runs_an_outbound_and_an_inbound_relay(
    example_inventory: dict[str, AccountInventory], account: str, event_sources: list[int]
) -> None:
    functions = example_inventory[account].functions
    assert len(functions) == 2
    assert {f.handler for f in functions} == {"cross_account_runtime.relay.lambda_handler.handler"}
    assert sorted(f.event_sources for f in functions) == event_sources


def test_the_cdk_cli_takes_a_topology_file_from_context(
    tmp_path: Path, document: dict[str, Any]
) -> None:
    document["accounts"][0]["region"] = "mars-1"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(document))
    env = {**os.environ, "CDK_DISABLE_CLI_TELEMETRY": "true"}
    result = subprocess.run(
        [
            str(CDK_BIN),
            "synth",
            "-c",
            f"topology={bad}",
            "-o",
            str(tmp_path / "out"),
            "--no-notices",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode != 0
    assert f"{bad}: topology.accounts[0].region: malformed region 'mars-1'" in result.stderr
