"""EndpointQueue: every property and policy statement, read from the synthesized template."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from aws_cdk import App, Duration, Environment, RemovalPolicy, Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk.assertions import Annotations, Match, Template

from constructs_lib import EndpointQueue, EndpointQueueEncryption, MessagingKey, QueueNameError

SALES = "111111111111"
BILLING = "222222222222"
ORG = "o-a1b2c3d4e5"


def synth(build: Callable[[Stack], object]) -> Template:
    stack = Stack(App(), "Test", env=Environment(account=BILLING, region="us-east-1"))
    build(stack)
    return Template.from_stack(stack)


def resources(template: Template, kind: str) -> dict[str, Any]:
    return dict(template.find_resources(kind))


def queue_named(template: Template, name: str) -> dict[str, Any]:
    matches = [
        r
        for r in resources(template, "AWS::SQS::Queue").values()
        if r["Properties"]["QueueName"] == name
    ]
    assert len(matches) == 1, name
    return dict(matches[0])


def statements(template: Template, kind: str, document_key: str) -> list[dict[str, Any]]:
    result: list[dict[str, Any]] = []
    for resource in resources(template, kind).values():
        result.extend(resource["Properties"][document_key]["Statement"])
    return result


def input_queue_grants(template: Template, name: str = "Billing") -> list[dict[str, Any]]:
    """The Allow statements of the policy of the input queue called ``name``."""
    (logical_id,) = [
        key
        for key, queue in resources(template, "AWS::SQS::Queue").items()
        if queue["Properties"]["QueueName"] == name
    ]
    return [
        s
        for s in statements(template, "AWS::SQS::QueuePolicy", "PolicyDocument")
        if s["Effect"] == "Allow" and s["Resource"] == {"Fn::GetAtt": [logical_id, "Arn"]}
    ]


@pytest.fixture(scope="module")
def billing() -> Template:
    return synth(
        lambda s: EndpointQueue(
            s,
            "Billing",
            endpoint_name="Billing",
            sender_accounts=[SALES],
            sender_organization_ids=[ORG],
            max_receive_count=7,
        )
    )


def test_queue_and_dlq_are_named_by_the_nservicebus_rule(billing: Template) -> None:
    queue_named(billing, "Billing")
    queue_named(billing, "Billing-dlq")


def test_the_queue_redrives_to_its_dlq_after_max_receive_count(billing: Template) -> None:
    redrive = queue_named(billing, "Billing")["Properties"]["RedrivePolicy"]
    assert redrive["maxReceiveCount"] == 7
    dlq_id = next(
        k
        for k, v in resources(billing, "AWS::SQS::Queue").items()
        if v["Properties"]["QueueName"] == "Billing-dlq"
    )
    assert redrive["deadLetterTargetArn"] == {"Fn::GetAtt": [dlq_id, "Arn"]}


def test_the_dlq_accepts_redrive_only_from_its_queue(billing: Template) -> None:
    policy = queue_named(billing, "Billing-dlq")["Properties"]["RedriveAllowPolicy"]
    assert policy["redrivePermission"] == "byQueue"
    assert policy["sourceQueueArns"] == [
        {"Fn::Join": ["", ["arn:", {"Ref": "AWS::Partition"}, f":sqs:us-east-1:{BILLING}:Billing"]]}
    ]


def test_both_queues_use_one_customer_managed_key_with_rotation(billing: Template) -> None:
    keys = resources(billing, "AWS::KMS::Key")
    assert len(keys) == 1
    ((key_id, key),) = keys.items()
    assert key["Properties"]["EnableKeyRotation"] is True
    assert key["DeletionPolicy"] == "Retain"
    for name in ("Billing", "Billing-dlq"):
        assert queue_named(billing, name)["Properties"]["KmsMasterKeyId"] == {
            "Fn::GetAtt": [key_id, "Arn"]
        }


def test_retention_defaults_are_explicit_and_queues_are_retained(billing: Template) -> None:
    assert queue_named(billing, "Billing")["Properties"]["MessageRetentionPeriod"] == 4 * 86400
    assert queue_named(billing, "Billing-dlq")["Properties"]["MessageRetentionPeriod"] == 14 * 86400
    for name in ("Billing", "Billing-dlq"):
        assert queue_named(billing, name)["DeletionPolicy"] == "Retain"


SEND_ACTIONS = ["sqs:GetQueueAttributes", "sqs:GetQueueUrl", "sqs:SendMessage"]


def test_the_queue_policy_grants_the_declared_accounts_exactly_send(billing: Template) -> None:
    (by_account,) = [s for s in input_queue_grants(billing) if s["Sid"] == "AllowSendAccounts"]
    assert by_account["Principal"] == {"AWS": "*"}
    assert by_account["Condition"] == {"StringEquals": {"aws:PrincipalAccount": [SALES]}}
    assert sorted(by_account["Action"]) == SEND_ACTIONS


def test_the_queue_policy_grants_the_organization_with_principal_org_id(billing: Template) -> None:
    (by_org,) = [s for s in input_queue_grants(billing) if s["Sid"] == "AllowSendOrganizations"]
    assert by_org["Principal"] == {"AWS": "*"}
    assert by_org["Condition"] == {"StringEquals": {"aws:PrincipalOrgID": [ORG]}}
    assert sorted(by_org["Action"]) == SEND_ACTIONS


def test_every_queue_denies_requests_without_tls(billing: Template) -> None:
    policies = resources(billing, "AWS::SQS::QueuePolicy")
    assert len(policies) == 3  # the queue, its dead-letter queue and its delay queue
    for policy in policies.values():
        document = policy["Properties"]["PolicyDocument"]["Statement"]
        (deny,) = [s for s in document if s["Effect"] == "Deny"]
        assert deny["Action"] == "sqs:*"
        assert deny["Principal"] == {"AWS": "*"}
        assert deny["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}


def test_the_dlq_grants_nobody(billing: Template) -> None:
    dlq_id = next(
        k
        for k, v in resources(billing, "AWS::SQS::Queue").items()
        if v["Properties"]["QueueName"] == "Billing-dlq"
    )
    for policy in resources(billing, "AWS::SQS::QueuePolicy").values():
        if policy["Properties"]["Queues"] == [{"Ref": dlq_id}]:
            effects = {s["Effect"] for s in policy["Properties"]["PolicyDocument"]["Statement"]}
            assert effects == {"Deny"}


def arn_of(name: str) -> dict[str, Any]:
    return {
        "Fn::Join": ["", ["arn:", {"Ref": "AWS::Partition"}, f":sqs:us-east-1:{BILLING}:{name}"]]
    }


def test_senders_may_use_the_key_only_through_sqs_and_for_their_queues(billing: Template) -> None:
    key_statements = statements(billing, "AWS::KMS::Key", "KeyPolicy")
    senders = {s["Sid"]: s for s in key_statements if s.get("Sid", "").startswith("AllowSenders")}
    assert sorted(senders) == ["AllowSendersAccounts", "AllowSendersOrganizations"]
    via_sqs = {"Fn::Join": ["", ["sqs.", {"Ref": "AWS::Region"}, ".", {"Ref": "AWS::URLSuffix"}]]}
    for statement in senders.values():
        assert sorted(statement["Action"]) == ["kms:Decrypt", "kms:GenerateDataKey"]
        assert statement["Principal"] == {"AWS": "*"}
        equal = statement["Condition"]["StringEquals"]
        assert equal["kms:ViaService"] == via_sqs
        # The queue and its delay queue, where ARN-aware senders put long delays.
        assert equal["kms:EncryptionContext:aws:sqs:arn"] == [
            arn_of("Billing"),
            arn_of("Billing-delay.fifo"),
        ]
    assert senders["AllowSendersAccounts"]["Condition"]["StringEquals"]["aws:PrincipalAccount"] == [
        SALES
    ]
    assert senders["AllowSendersOrganizations"]["Condition"]["StringEquals"][
        "aws:PrincipalOrgID"
    ] == [ORG]


def test_a_queue_without_senders_has_no_grant() -> None:
    template = synth(lambda s: EndpointQueue(s, "Q", endpoint_name="Lonely"))
    grants = [
        s
        for s in statements(template, "AWS::SQS::QueuePolicy", "PolicyDocument")
        if s["Effect"] == "Allow"
    ]
    assert grants == []
    assert not [s for s in statements(template, "AWS::KMS::Key", "KeyPolicy") if "Sid" in s]


def test_fifo_endpoints_get_fifo_queue_and_dlq() -> None:
    template = synth(
        lambda s: EndpointQueue(
            s, "Q", endpoint_name="Orders", fifo=True, content_based_deduplication=True
        )
    )
    queue = queue_named(template, "Orders.fifo")["Properties"]
    assert queue["FifoQueue"] is True
    assert queue["ContentBasedDeduplication"] is True
    assert queue_named(template, "Orders-dlq.fifo")["Properties"]["FifoQueue"] is True


def test_the_prefix_is_applied_once() -> None:
    template = synth(
        lambda s: EndpointQueue(s, "Q", endpoint_name="prod-Sales", queue_name_prefix="prod-")
    )
    queue_named(template, "prod-Sales")


def test_sse_sqs_is_an_explicit_option_and_creates_no_key() -> None:
    template = synth(
        lambda s: EndpointQueue(
            s, "Q", endpoint_name="Plain", encryption=EndpointQueueEncryption.SQS_MANAGED
        )
    )
    assert resources(template, "AWS::KMS::Key") == {}
    assert queue_named(template, "Plain")["Properties"]["SqsManagedSseEnabled"] is True


def test_a_given_key_is_used_instead_of_a_new_one() -> None:
    def build(stack: Stack) -> None:
        key = kms.Key(stack, "Shared", enable_key_rotation=True)
        EndpointQueue(stack, "Q", endpoint_name="A", encryption_key=key, sender_accounts=[SALES])

    template = synth(build)
    assert len(resources(template, "AWS::KMS::Key")) == 1


def test_props_tune_retention_visibility_and_removal() -> None:
    template = synth(
        lambda s: EndpointQueue(
            s,
            "Q",
            endpoint_name="Tuned",
            retention_period=Duration.days(7),
            dead_letter_retention_period=Duration.days(10),
            visibility_timeout=Duration.minutes(2),
            removal_policy=RemovalPolicy.DESTROY,
        )
    )
    queue = queue_named(template, "Tuned")
    assert queue["Properties"]["MessageRetentionPeriod"] == 7 * 86400
    assert queue["Properties"]["VisibilityTimeout"] == 120
    assert queue["DeletionPolicy"] == "Delete"
    assert queue_named(template, "Tuned-dlq")["Properties"]["MessageRetentionPeriod"] == 10 * 86400


@pytest.mark.parametrize(
    ("fifo", "retention_days", "dead_letter_days", "refused"),
    [
        (False, 7, 3, True),
        (False, 14, 14, False),
        # A FIFO queue's redrive restarts the clock: its dead-letter queue may be shorter.
        (True, 7, 3, False),
    ],
)
def test_a_standard_queues_dlq_keeps_messages_at_least_as_long_as_the_queue(
    fifo: bool, retention_days: int, dead_letter_days: int, refused: bool
) -> None:
    # SQS counts a standard queue's message's age from its first enqueue, in the DLQ too.
    def build(stack: Stack) -> None:
        EndpointQueue(
            stack,
            "Q",
            endpoint_name="Kept",
            fifo=fifo,
            retention_period=Duration.days(retention_days),
            dead_letter_retention_period=Duration.days(dead_letter_days),
        )

    if refused:
        with pytest.raises(
            ValueError,
            match=r"^dead_letter_retention_period: 3 days is shorter than retention_period "
            r"\(7 days\)",
        ):
            synth(build)
    else:
        dlq = queue_named(synth(build), "Kept-dlq.fifo" if fifo else "Kept-dlq")
        assert dlq["Properties"]["MessageRetentionPeriod"] == dead_letter_days * 86400


def test_grants_follow_aws_sqs_queue() -> None:
    def build(stack: Stack) -> None:
        queue = EndpointQueue(stack, "Q", endpoint_name="Granted")
        role = iam.Role(stack, "Consumer", assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"))
        queue.grant_consume_messages(role)
        queue.grant_send_messages(role)

    template = synth(build)
    (policy,) = resources(template, "AWS::IAM::Policy").values()
    actions = {a for s in policy["Properties"]["PolicyDocument"]["Statement"] for a in s["Action"]}
    assert {"sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:SendMessage", "kms:Decrypt"} <= actions


def test_senders_added_later_extend_the_policy_once() -> None:
    def build(stack: Stack) -> None:
        queue = EndpointQueue(stack, "Q", endpoint_name="Growing", sender_accounts=[SALES])
        queue.add_sender_accounts(SALES, "333333333333")
        assert queue.sender_accounts == (SALES, "333333333333")

    template = synth(build)
    (grant,) = input_queue_grants(template, "Growing")
    assert grant["Condition"]["StringEquals"]["aws:PrincipalAccount"] == [SALES, "333333333333"]


@pytest.mark.parametrize(
    ("props", "message"),
    [
        ({"max_receive_count": 0}, "max_receive_count: must be a whole number from 1 to 1000"),
        ({"sender_accounts": ["1234"]}, "sender_accounts: account ids are exactly 12 digits"),
        (
            {"sender_organization_ids": ["org"]},
            "sender_organization_ids: organization ids look like",
        ),
        ({"content_based_deduplication": True}, "content_based_deduplication: only FIFO queues"),
        ({"queue_name": "has space"}, "SQS queue names hold only"),
        ({"queue_name": "x" * 81}, "at most 80"),
        ({"fifo": True, "queue_name": "NoSuffix"}, "must end with '.fifo'"),
        ({"queue_name_prefix": "DEV."}, "the queue 'DEV-DEV-Sales'"),
        ({"queue_name_prefix": "Dév-"}, "at position 1; SQS queue names hold only ASCII"),
    ],
)
def test_bad_props_fail_naming_the_prop(props: dict[str, Any], message: str) -> None:
    stack = Stack(App(), "Bad")
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        EndpointQueue(stack, "Q", endpoint_name="Bad", **props)


def test_the_aws_managed_sqs_key_is_refused() -> None:
    stack = Stack(App(), "Bad")
    key = kms.Alias.from_alias_name(stack, "AwsSqs", "alias/aws/sqs")
    with pytest.raises(ValueError, match="alias/aws/sqs cannot be used"):
        EndpointQueue(stack, "Q", endpoint_name="Bad", encryption_key=key)


def test_sse_sqs_with_a_key_is_refused() -> None:
    stack = Stack(App(), "Bad")
    key = kms.Key(stack, "K", enable_key_rotation=True)
    with pytest.raises(ValueError, match="encryption_key: SSE-SQS"):
        EndpointQueue(
            stack,
            "Q",
            endpoint_name="Bad",
            encryption=EndpointQueueEncryption.SQS_MANAGED,
            encryption_key=key,
        )


def test_queue_name_errors_are_value_errors() -> None:
    assert issubclass(QueueNameError, ValueError)


def test_the_delay_queue_is_what_the_released_transport_checks_at_start(billing: Template) -> None:
    delay = queue_named(billing, "Billing-delay.fifo")["Properties"]
    assert delay["FifoQueue"] is True
    assert delay["DelaySeconds"] == 900
    assert delay["MessageRetentionPeriod"] >= 345600
    assert "RedrivePolicy" not in delay
    queue = queue_named(billing, "Billing")["Properties"]
    assert delay["KmsMasterKeyId"] == queue["KmsMasterKeyId"]


def test_the_delay_queue_admits_the_queues_senders(billing: Template) -> None:
    principals = [
        (s["Principal"], s.get("Condition"))
        for s in input_queue_grants(billing, "Billing-delay.fifo")
    ]
    assert principals == [(s["Principal"], s.get("Condition")) for s in input_queue_grants(billing)]


def test_a_queue_read_by_a_relay_needs_no_delay_queue() -> None:
    template = synth(
        lambda s: EndpointQueue(s, "Shadow", endpoint_name="Shadow", delayed_delivery=False)
    )
    names = {r["Properties"]["QueueName"] for r in resources(template, "AWS::SQS::Queue").values()}
    assert names == {"Shadow", "Shadow-dlq"}


def test_the_redrive_waits_for_the_endpoints_immediate_retries() -> None:
    template = synth(
        lambda s: EndpointQueue(s, "Retrying", endpoint_name="Retrying", immediate_retries=8)
    )
    policy = queue_named(template, "Retrying")["Properties"]["RedrivePolicy"]
    assert policy["maxReceiveCount"] == 13


def test_a_redrive_before_the_immediate_retries_end_is_refused() -> None:
    with pytest.raises(ValueError, match="max_receive_count: 5 receives end before"):
        synth(lambda s: EndpointQueue(s, "Q", endpoint_name="Q", max_receive_count=5))


def test_a_queue_policy_grows_by_its_kinds_of_sender_not_by_its_senders() -> None:
    """SQS refuses a policy over 20 statements, 8,192 bytes or 50 principals: fifty sender
    accounts, thirty accounts' relay roles and twenty-five topics fit in one statement each."""
    accounts = [f"{n:012d}" for n in range(100000000001, 100000000051)]
    roles = [f"arn:aws:iam::{a}:role/messaging-relay-outbound-A{n}" for n, a in enumerate(accounts)]
    topics = [f"arn:aws:sns:us-east-1:{accounts[n]}:Event{n}" for n in range(25)]

    def build(stack: Stack) -> None:
        queue = EndpointQueue(stack, "Q", endpoint_name="Popular", delayed_delivery=False)
        queue.add_sender_accounts(*accounts)
        queue.add_sender_roles(*roles[:30])
        queue.add_sender_topics(*topics)
        queue.add_sender_organization(ORG)

    template = synth(build)
    (policy,) = [
        p["Properties"]["PolicyDocument"]
        for p in resources(template, "AWS::SQS::QueuePolicy").values()
        if any(s["Effect"] == "Allow" for s in p["Properties"]["PolicyDocument"]["Statement"])
    ]
    sids = [s.get("Sid") for s in policy["Statement"] if s["Effect"] == "Allow"]
    assert sorted(sids) == [
        "AllowSendAccounts",
        "AllowSendOrganizations",
        "AllowSendRoles",
        "AllowSendTopics",
    ]
    assert len(json.dumps(policy, separators=(",", ":"))) < 8192
    (topic_grant,) = [s for s in policy["Statement"] if s.get("Sid") == "AllowSendTopics"]
    assert topic_grant["Principal"] == {"Service": "sns.amazonaws.com"}
    assert topic_grant["Condition"] == {"ArnEquals": {"aws:SourceArn": sorted(topics)}}
    (role_grant,) = [s for s in policy["Statement"] if s.get("Sid") == "AllowSendRoles"]
    assert role_grant["Condition"] == {"ArnEquals": {"aws:PrincipalArn": sorted(roles[:30])}}


def test_an_organization_narrows_every_grant_to_accounts_and_roles() -> None:
    def build(stack: Stack) -> None:
        queue = EndpointQueue(
            stack, "Q", endpoint_name="Org", sender_accounts=[SALES], organization_id=ORG
        )
        queue.add_sender_roles(f"arn:aws:iam::{SALES}:role/messaging-relay-outbound-Sales")

    template = synth(build)
    grants = {s["Sid"]: s for s in input_queue_grants(template, "Org")}
    assert grants["AllowSendAccounts"]["Condition"]["StringEquals"] == {
        "aws:PrincipalAccount": [SALES],
        "aws:PrincipalOrgID": ORG,
    }
    assert grants["AllowSendRoles"]["Condition"]["StringEquals"] == {"aws:PrincipalOrgID": ORG}


@pytest.mark.parametrize(
    ("role", "message"),
    [
        ("arn:aws:iam::*:role/messaging-relay-outbound-Sales", "is a pattern: name each role"),
        ("arn:aws:iam::111111111111:role/messaging-relay-outbound-Sales*", "is a pattern"),
        ("arn:aws:iam::111111111111:role/messaging-relay-outbound-Sale?", "is a pattern"),
        ("arn:aws:iam::111111111111:user/someone", "is not an IAM role ARN"),
        ("arn:aws:iam::1111:role/x", r"role_arns \(account\): account ids are exactly 12"),
    ],
)
def test_sender_roles_are_named_each_by_its_exact_arn(role: str, message: str) -> None:
    queue = EndpointQueue(Stack(App(), "Bad"), "Q", endpoint_name="Bad")
    with pytest.raises(ValueError, match=message):
        queue.add_sender_roles(role)


def test_a_shared_key_and_a_key_of_its_own_are_refused_together() -> None:
    stack = Stack(App(), "Bad")
    shared = MessagingKey(stack, "Shared")
    with pytest.raises(ValueError, match="shared_key: the queue is encrypted with one key"):
        EndpointQueue(stack, "Q", endpoint_name="Bad", shared_key=shared, encryption_key=shared.key)
    with pytest.raises(ValueError, match="shared_key: SSE-SQS uses SQS-owned keys"):
        EndpointQueue(
            stack,
            "P",
            endpoint_name="Bad",
            shared_key=shared,
            encryption=EndpointQueueEncryption.SQS_MANAGED,
        )


def test_an_env_agnostic_stack_warns_that_its_own_account_cannot_be_checked() -> None:
    """Synth cannot tell an env-agnostic stack's account: the grant is written as asked, and
    a warning (``cdk synth --strict`` fails on it) says how to have it checked."""
    stack = Stack(App(), "Agnostic")
    EndpointQueue(stack, "Billing", endpoint_name="Billing", sender_accounts=["222222222222"])
    warnings = Annotations.from_stack(stack).find_warning("*", Match.any_value())
    assert any(
        "sender_accounts: this stack has no account (env-agnostic)" in str(w.entry.data)
        for w in warnings
    )
