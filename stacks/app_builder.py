"""Build the CDK app, an account's stacks as the stack plan places its units, with the cdk-nag
packs attached: AwsSolutions and the package's own MessagingChecks (what would leave messages
undeliverable), so ``cdk synth``, the gates and the main job run the same checks."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from aws_cdk import App, Validations, cx_api
from cdk_nag import AwsSolutionsChecks

from constructs_lib import MessagingChecks
from stacks.delivery_log_stack import DeliveryLogStack
from stacks.messaging_stack import MessagingAccountStack
from stacks.placement.order import deployment_order, stack_dependencies
from stacks.placement.plan import StackPlan
from stacks.placement.plan_file import PlanFile
from stacks.quotas import require_within_quotas
from stacks.topology import Topology, load_topology, parse_topology
from stacks.topology.parsing import CDK_JSON

TOPOLOGY_CONTEXT_KEY = "topology"
FEATURE_FLAGS = {
    # SNS may use a subscribed queue's key only for the subscribed topic (aws:SourceArn).
    "@aws-cdk/aws-sns-subscriptions:restrictSqsDescryption": True,
    "@aws-cdk/aws-iam:minimizePolicies": True,
    "@aws-cdk/core:checkSecretUsage": True,
}
"""aws-cdk-lib feature flags the stacks rely on, set in code so that every way of building the
app (CLI, tests, the main job, other teams' apps) gets the same templates."""


def topology_from_context(value: Any, cdk_json: Path = CDK_JSON) -> Topology:
    """Resolve the ``topology`` context: a file path (``-c topology=<file>``), the inline
    object from ``cdk.json``, or, when the app runs without the CDK CLI, ``cdk.json`` itself."""
    if isinstance(value, str):
        return load_topology(value)
    if isinstance(value, Mapping):
        return parse_topology(value, f"{cdk_json.name} context '{TOPOLOGY_CONTEXT_KEY}'")
    return load_topology(cdk_json)


def plan_file_from_context(value: Any, cdk_json: Path = CDK_JSON) -> PlanFile:
    """Where the plan of the topology the ``topology`` context names is committed:
    ``<file>.stacks`` beside ``-c topology=<file>``, ``cdk.stacks`` for the topology in
    ``cdk.json``."""
    return PlanFile(Path(value) if isinstance(value, str) else cdk_json)


STACK_RESOURCE_LIMIT_CONTEXT = "@aws-cdk/core:stackResourceLimit"
LIFTED_CDK_RESOURCE_LIMIT = {STACK_RESOURCE_LIMIT_CONTEXT: 0}
"""aws-cdk-lib refuses a stack over 500 resources itself, from inside jsii, as a JavaScript
stack trace listing every resource type; 0 turns its check off, so that
:func:`~stacks.quotas.require_within_quotas` is what refuses, with one line per stack."""


class MessagingApp(App):
    """The app, whose synth checks every template against AWS's documented quotas that the
    local AWS does not enforce (:mod:`stacks.quotas`: a stack's resources and outputs,
    policy sizes, Lambda's environment, ...), refusing with one line per problem: ``cdk
    synth`` refuses what AWS would refuse at deploy, in one account after others were
    updated."""

    def __init__(self, *, context: Mapping[str, Any] | None = None, **kwargs: Any) -> None:
        super().__init__(context={**(context or {}), **LIFTED_CDK_RESOURCE_LIMIT}, **kwargs)

    def synth(self, **options: Any) -> cx_api.CloudAssembly:
        assembly = super().synth(**options)
        require_within_quotas(Path(assembly.directory))
        return assembly


def build_app(
    topology: Topology,
    plan: StackPlan,
    *,
    outdir: str | None = None,
    context: Mapping[str, Any] | None = None,
    nag: bool = True,
) -> App:
    """An app with the :class:`MessagingAccountStack` s of every account, as ``plan`` places its
    units (:func:`~stacks.placement.plan.committed_plan`; a stack it records that holds nothing any more included), and
    the :class:`DeliveryLogStack` when the topology has analytics.

    Stacks whose topics stream logs depend on the analytics stack, so ``cdk deploy`` creates the
    destination before the subscription filters that need it; a stack whose queues subscribe to
    a topic of another stack (of its account or another) depends on that stack.
    """
    app = MessagingApp(
        outdir=outdir,
        context={**FEATURE_FLAGS, **(context or {})},
        analytics_reporting=False,
    )
    analytics = DeliveryLogStack(app, topology, topology.analytics) if topology.analytics else None
    needs = stack_dependencies(topology, plan)
    stacks: dict[str, MessagingAccountStack] = {}
    for planned in deployment_order(topology, plan):
        stack = MessagingAccountStack(app, topology, plan, planned)
        stacks[planned.name] = stack
        if analytics is not None and stack.streams_logs:
            stack.add_stack_dependency(analytics, "subscription filters need the log destination")
        for needed in needs[planned]:
            stack.add_stack_dependency(
                stacks[needed.name], "its queues subscribe to topics this stack creates"
            )
    if nag:
        Validations.of(app).add_plugins(
            AwsSolutionsChecks(app, verbose=True), MessagingChecks(app, verbose=True)
        )
    return app
