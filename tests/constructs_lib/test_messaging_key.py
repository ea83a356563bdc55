"""MessagingKey: one key for an account's queues, each grant still for its own queues."""

from __future__ import annotations

from typing import Any

from aws_cdk import App, Environment, Stack
from aws_cdk.assertions import Template

from constructs_lib import EndpointQueue, MessagingKey

BILLING = "222222222222"
SALES = "111111111111"
SHIPPING = "333333333333"


def arn_of(name: str) -> dict[str, Any]:
    return {
        "Fn::Join": ["", ["arn:", {"Ref": "AWS::Partition"}, f":sqs:us-east-1:{BILLING}:{name}"]]
    }


def shared(senders: dict[str, list[str]]) -> Template:
    """A stack whose endpoints (name -> sender accounts) share one MessagingKey."""
    stack = Stack(App(), "Billing", env=Environment(account=BILLING, region="us-east-1"))
    key = MessagingKey(stack, "QueueKey")
    for name, accounts in senders.items():
        EndpointQueue(
            stack,
            name,
            endpoint_name=name,
            shared_key=key,
            sender_accounts=accounts,
            delayed_delivery=False,
        )
    return Template.from_stack(stack)


def sender_grants(template: Template) -> list[dict[str, Any]]:
    (key,) = template.find_resources("AWS::KMS::Key").values()
    return [
        s
        for s in key["Properties"]["KeyPolicy"]["Statement"]
        if s.get("Sid", "").startswith("AllowSenders")
    ]


def test_every_queue_of_the_account_uses_the_one_key_with_rotation() -> None:
    template = shared({"Billing": [SALES], "Invoicing": [SHIPPING]})
    ((key_id, key),) = template.find_resources("AWS::KMS::Key").items()
    assert key["Properties"]["EnableKeyRotation"] is True
    assert key["DeletionPolicy"] == "Retain"
    queues = template.find_resources("AWS::SQS::Queue").values()
    assert {q["Properties"]["KmsMasterKeyId"]["Fn::GetAtt"][0] for q in queues} == {key_id}
    (alias,) = template.find_resources("AWS::KMS::Alias").values()
    assert alias["Properties"]["AliasName"] == "alias/messaging/queues"


def test_each_sender_may_use_the_key_only_for_the_queues_it_sends_to() -> None:
    grants = sender_grants(shared({"Billing": [SALES], "Invoicing": [SHIPPING]}))
    by_sender = {
        tuple(g["Condition"]["StringEquals"]["aws:PrincipalAccount"]): g["Condition"][
            "StringEquals"
        ]["kms:EncryptionContext:aws:sqs:arn"]
        for g in grants
    }
    assert by_sender == {(SALES,): [arn_of("Billing")], (SHIPPING,): [arn_of("Invoicing")]}


def test_queues_with_the_same_senders_share_one_statement() -> None:
    """The policy grows with the kinds of grantee, not with the queues: KMS allows 32 KiB."""
    grants = sender_grants(
        shared({f"Endpoint{n}": [SALES, SHIPPING] for n in range(100)} | {"Other": [SALES]})
    )
    assert len(grants) == 2
    (many,) = [
        g for g in grants if len(g["Condition"]["StringEquals"]["aws:PrincipalAccount"]) == 2
    ]
    assert len(many["Condition"]["StringEquals"]["kms:EncryptionContext:aws:sqs:arn"]) == 100
