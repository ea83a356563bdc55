"""Build the CDK app, one stack per account, with the cdk-nag AwsSolutions pack attached."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from aws_cdk import App, Validations
from cdk_nag import AwsSolutionsChecks

from stacks.delivery_log_stack import DeliveryLogStack
from stacks.messaging_stack import MessagingAccountStack
from stacks.topology import Topology, load_topology, parse_topology
from stacks.topology.stack_order import stack_order, topic_accounts_needed

TOPOLOGY_CONTEXT_KEY = "topology"
FEATURE_FLAGS = {
    # SNS may use a subscribed queue's key only for the subscribed topic (aws:SourceArn).
    "@aws-cdk/aws-sns-subscriptions:restrictSqsDescryption": True,
    "@aws-cdk/aws-iam:minimizePolicies": True,
    "@aws-cdk/core:checkSecretUsage": True,
}
"""aws-cdk-lib feature flags the stacks rely on, set in code so that every way of building the
app (CLI, tests, the main job, other teams' apps) gets the same templates."""
CDK_JSON = Path(__file__).resolve().parent.parent / "cdk.json"


def topology_from_context(value: Any, cdk_json: Path = CDK_JSON) -> Topology:
    """Resolve the ``topology`` context: a file path (``-c topology=<file>``), the inline
    object from ``cdk.json``, or, when the app runs without the CDK CLI, ``cdk.json`` itself."""
    if isinstance(value, str):
        return load_topology(value)
    if isinstance(value, Mapping):
        return parse_topology(value, f"{cdk_json.name} context '{TOPOLOGY_CONTEXT_KEY}'")
    return load_topology(cdk_json)


def build_app(
    topology: Topology,
    *,
    outdir: str | None = None,
    context: Mapping[str, Any] | None = None,
    nag: bool = True,
) -> App:
    """An app with one :class:`MessagingAccountStack` per account that owns queues or topics,
    and the :class:`DeliveryLogStack` when the topology has analytics.

    Stacks whose topics stream logs depend on the analytics stack, so ``cdk deploy --all``
    creates the destination before the subscription filters that need it; a stack whose queues
    subscribe to another account's topics depends on that account's stack.
    """
    app = App(
        outdir=outdir, context={**FEATURE_FLAGS, **(context or {})}, analytics_reporting=False
    )
    analytics = DeliveryLogStack(app, topology, topology.analytics) if topology.analytics else None
    stacks: dict[str, MessagingAccountStack] = {}
    for account in stack_order(topology):
        stack = MessagingAccountStack(app, topology, account)
        stacks[account.name] = stack
        if analytics is not None and any(
            t.account == account.name for t in topology.log_streaming_topics
        ):
            stack.add_stack_dependency(analytics, "subscription filters need the log destination")
        for owner in topic_accounts_needed(topology, account.name):
            stack.add_stack_dependency(
                stacks[owner], "its queues subscribe to topics this stack creates"
            )
    if nag:
        Validations.of(app).add_plugins(AwsSolutionsChecks(app, verbose=True))
    return app
