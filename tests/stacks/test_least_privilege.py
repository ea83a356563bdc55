"""Least privilege, asked of an independent IAM policy simulator over the example's synthesized
templates: each intended request is allowed, and the same request of a look-alike is not: another
role of the sending account, a role whose name extends the relay's or that sits under a path, the
relay's name in another account, and any request without TLS.

Each look-alike is given every permission its own account could give it, so it is refused only
if the receiving resource's policy refuses it (:mod:`tests.iam_simulator.organization`).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from stacks.app_builder import topology_from_context
from stacks.checks.access_report.policies import as_list
from stacks.placement.plan import StackPlan, committed_plan
from stacks.placement.plan_file import PlanFile
from stacks.placement.relays import body_writers, ingress_writers
from stacks.topology import Topology
from stacks.topology.bridge import ingress_endpoints
from tests.iam_simulator.organization import Organization, Request

pytestmark = pytest.mark.synth

STRANGER = "999999999999"
ALLOWED = "Allowed"


@pytest.fixture(scope="module")
def topology() -> Topology:
    return topology_from_context(None)


@pytest.fixture(scope="module")
def plan(topology: Topology) -> StackPlan:
    return committed_plan(topology, PlanFile())


@pytest.fixture(scope="module")
def organization(example_assembly: Path) -> Organization:
    return Organization.of(example_assembly)


def look_alikes(role: str) -> list[str]:
    """Roles an account's other teams could make that resemble ``role``, and ``role``'s name in
    an account that is not its own."""
    prefix, name = role.split(":role/")
    account = prefix.split(":")[4]
    return [
        f"{role}Evil",
        f"{role}-reports-etl",
        f"{prefix}:role/team/{name}",
        f"{prefix}:role/{name}/etl",
        f"{prefix}:role/reports-etl",
        role.replace(f"::{account}:", f"::{STRANGER}:"),
    ]


def _ingress_queues(topology: Topology, plan: StackPlan) -> list[tuple[str, tuple[str, ...]]]:
    """Every ingress queue's ARN with the relay roles meant to deliver to it."""
    return [
        (
            topology.sqs_arn(account.name, f"{endpoint.queue_name}-ingress"),
            ingress_writers(topology, plan, endpoint),
        )
        for account in topology.accounts
        for endpoint in ingress_endpoints(topology, account.name)
    ]


def _misjudged(
    organization: Organization, intended: list[Request], refused: list[Request]
) -> list[tuple[Request, str]]:
    """The intended requests not allowed and the others allowed, with the simulator's word."""
    decisions = organization.decide(intended + refused)
    expected = [True] * len(intended) + [False] * len(refused)
    return [
        (request, decision)
        for request, decision, allowed in zip(intended + refused, decisions, expected, strict=True)
        if (decision == ALLOWED) != allowed
    ]


def test_an_ingress_queue_and_its_key_admit_the_relays_that_deliver_there_and_no_look_alike(
    organization: Organization, topology: Topology, plan: StackPlan
) -> None:
    intended: list[Request] = []
    refused: list[Request] = []
    for queue, writers in _ingress_queues(topology, plan):
        region = queue.split(":")[3]
        key_context = {
            "kms:ViaService": f"sqs.{region}.amazonaws.com",
            "kms:EncryptionContext:aws:sqs:arn": queue,
        }
        key = organization.keys[queue]
        for writer in writers:
            intended += [
                Request(writer, "sqs:SendMessage", queue),
                Request(writer, "kms:GenerateDataKey", key, key_context),
            ]
            refused += [Request(writer, "sqs:SendMessage", queue, secure_transport=False)]
            for other in look_alikes(writer):
                refused += [
                    Request(other, "sqs:SendMessage", queue),
                    Request(other, "kms:GenerateDataKey", key, key_context),
                ]
    assert _misjudged(organization, intended, refused) == []
    assert len(intended) == 2 * sum(len(w) for _, w in _ingress_queues(topology, plan))


def test_a_body_bucket_and_its_key_admit_each_copying_relay_under_its_own_prefix_alone(
    organization: Organization, topology: Topology, plan: StackPlan
) -> None:
    """A sending relay writes bodies under ``relay/<its account>/`` of the receiving account's
    bucket, with that bucket's key: not over the account's own bodies, nor another sender's,
    nor with a key the receiving endpoints could not read."""
    intended: list[Request] = []
    refused: list[Request] = []
    for account in topology.accounts:
        name = topology.body_bucket(account.name)
        writers = body_writers(topology, plan, account.name)
        if name is None or not writers:
            continue
        bucket = f"arn:aws:s3:::{name}"
        key = organization.keys[bucket]
        for writer in writers:
            sender = writer.split(":")[4]
            own = organization.bucket_object(bucket, f"relay/{sender}/q/1")
            key_context = {
                "kms:ViaService": f"s3.{account.region}.amazonaws.com",
                "kms:EncryptionContext:aws:s3:arn": bucket,
            }
            intended += [
                Request(writer, "s3:PutObject", own),
                Request(writer, "kms:GenerateDataKey", key, key_context),
            ]
            refused += [
                Request(writer, "s3:PutObject", own, secure_transport=False),
                Request(writer, "s3:PutObject", organization.bucket_object(bucket, "billing/1")),
                Request(
                    writer,
                    "s3:PutObject",
                    organization.bucket_object(bucket, f"relay/{STRANGER}/q/1"),
                ),
                Request(
                    writer,
                    "s3:PutObject",
                    own,
                    {
                        "s3:x-amz-server-side-encryption": "aws:kms",
                        "s3:x-amz-server-side-encryption-aws-kms-key-id": (
                            f"arn:aws:kms:us-east-1:{sender}:key/its-own"
                        ),
                    },
                ),
                Request(writer, "s3:PutObject", own, {"s3:x-amz-server-side-encryption": "AES256"}),
                Request(
                    writer,
                    "kms:GenerateDataKey",
                    key,
                    {**key_context, "kms:EncryptionContext:aws:s3:arn": "arn:aws:s3:::other"},
                ),
            ]
            for other in look_alikes(writer):
                refused += [
                    Request(other, "s3:PutObject", own),
                    Request(other, "kms:GenerateDataKey", key, key_context),
                ]
    assert intended
    assert _misjudged(organization, intended, refused) == []


def test_the_platform_queues_admit_the_accounts_with_arn_aware_endpoints_and_the_inbound_relay(
    organization: Organization, topology: Topology
) -> None:
    """Sales' ARN-aware endpoint sends to ServiceControl's queues by ARN; Billing's released one
    sends by name to its shadows, which its outbound relay forwards: no principal of Billing may
    put a message there directly (a forged failed message would be retried by ServiceControl)."""
    sales, billing = topology.account("Sales").id, topology.account("Billing").id
    inbound = "arn:aws:iam::333333333333:role/messaging-relay-inbound-Ops"
    intended: list[Request] = []
    refused: list[Request] = []
    for queue in topology.platform_queues:
        arn = topology.queue_arn(queue)
        intended += [
            Request(f"arn:aws:iam::{sales}:role/sales-endpoint", "sqs:SendMessage", arn),
            Request(inbound, "sqs:SendMessage", arn),
        ]
        refused += [
            Request(f"arn:aws:iam::{billing}:role/billing-endpoint", "sqs:SendMessage", arn),
            Request(f"arn:aws:iam::{STRANGER}:role/sales-endpoint", "sqs:SendMessage", arn),
            Request(
                f"arn:aws:iam::{sales}:role/sales-endpoint",
                "sqs:SendMessage",
                arn,
                secure_transport=False,
            ),
        ]
    assert _misjudged(organization, intended, refused) == []


def test_a_topic_refuses_every_request_without_tls(
    organization: Organization, topology: Topology
) -> None:
    intended: list[Request] = []
    refused: list[Request] = []
    for topic in topology.topics:
        arn = topology.topic_arn(topic)
        owner = f"arn:aws:iam::{topology.account(topic.account).id}:role/team-administrator"
        for action in ("sns:Publish", "sns:Subscribe", "sns:SetTopicAttributes"):
            intended.append(Request(owner, action, arn))
            refused.append(Request(owner, action, arn, secure_transport=False))
    assert _misjudged(organization, intended, refused) == []


def test_the_report_job_reads_its_own_code_of_the_asset_bucket_and_nothing_else(
    organization: Organization,
) -> None:
    (role,) = [r for r in organization.identity_policies if "ReportJobJobRole" in r]
    assets = [
        resource
        for policy in organization.identity_policies[role]
        for statement in policy["Statement"]
        if statement["Action"] == "s3:GetObject"
        for resource in as_list(statement["Resource"])
        if ":s3:::cdk-" in resource
    ]
    assert len(assets) == 2  # the entry script and the package
    bucket = assets[0].split("/")[0]
    other = f"{bucket}/0123456789abcdef.zip"
    for arn in (*assets, other):
        organization.owners[arn] = role.split(":")[4]
    intended = [Request(role, "s3:GetObject", asset) for asset in assets]
    refused = [Request(role, "s3:GetObject", other), Request(role, "s3:ListBucket", bucket)]
    organization.owners[bucket] = role.split(":")[4]
    assert _misjudged(organization, intended, refused) == []
