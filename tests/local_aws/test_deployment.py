"""The local deployment reads its stacks from the cloud assembly's manifest: every stack of every
account, each after the stacks it depends on."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from local_aws.deployment import AssemblyStack, assembly_stacks


def _stack(account: str, *needs: str) -> dict[str, Any]:
    return {
        "type": "aws:cloudformation:stack",
        "environment": f"aws://{account}/us-east-1",
        "dependencies": list(needs),
    }


def test_every_stack_of_every_account_deploys_after_the_stacks_it_needs(tmp_path: Path) -> None:
    artifacts = {
        "Messaging-Sales-2": _stack(
            "111111111111", "Messaging-Sales-2.assets", "Messaging-Billing"
        ),
        "Messaging-Sales-2.assets": {"type": "cdk:asset-manifest"},
        "Messaging-Sales": _stack("111111111111", "Messaging-Sales-2"),
        "Messaging-Billing": _stack("222222222222", "DeliveryLogs-Ops"),
        "Messaging-Billing-2": _stack("222222222222"),
        "DeliveryLogs-Ops": _stack("333333333333"),
        "Tree": {"type": "cdk:tree"},
    }
    (tmp_path / "manifest.json").write_text(json.dumps({"artifacts": artifacts}))
    # The first stack of the manifest whose needs are deployed goes next.
    assert assembly_stacks(tmp_path) == (
        AssemblyStack("Messaging-Billing-2", "222222222222", ()),
        AssemblyStack("DeliveryLogs-Ops", "333333333333", ()),
        AssemblyStack("Messaging-Billing", "222222222222", ("DeliveryLogs-Ops",)),
        AssemblyStack(
            "Messaging-Sales-2",
            "111111111111",
            ("Messaging-Sales-2.assets", "Messaging-Billing"),
        ),
        AssemblyStack("Messaging-Sales", "111111111111", ("Messaging-Sales-2",)),
    )


@pytest.mark.synth
def test_the_example_deploys_analytics_first_and_billing_before_its_subscriber_sales(
    example_assembly: Path,
) -> None:
    assert [stack.name for stack in assembly_stacks(example_assembly)] == [
        "DeliveryLogs-Ops",
        "Messaging-Billing",
        "Messaging-Sales",
        "Messaging-Ops",
    ]
