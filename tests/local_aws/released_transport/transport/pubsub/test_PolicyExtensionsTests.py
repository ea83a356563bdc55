# ruff: noqa: N802, N999 -- module and test names are the upstream test's, for traceability
"""NServiceBus.AmazonSQS 9.1.1 ``src/NServiceBus.Transport.SQS.Tests/PolicyExtensionsTests.cs``:
all 23 vectors. The ``Update_*`` results are compared with the approval files (copied verbatim
into ``approvals/``) after the upstream ``PolicyScrubber`` (statement ids removed, blank lines
dropped, line ends trimmed) — so the JSON is the SDK's, byte for byte, but for the ids. The two
``ExtractsPolicy_*`` approvals are the policy object as the approver serializes it (id, version,
statements). Then: a written policy reads back to itself, and the reader's rules."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from local_aws.released_transport.transport.pubsub.access_policy import (
    ANONYMOUS,
    Condition,
    Policy,
    Principal,
    policy_from_json,
)
from local_aws.released_transport.transport.pubsub.queue_policy import (
    PolicySettings,
    PolicySettingsError,
    PolicyStatement,
    extract_policy,
    permission_statement,
    queue_matching_statement,
    update_policy,
)

APPROVALS = Path(__file__).parent / "approvals"
ACCOUNT = "arn:aws:sns:us-west-2:123456789012"
QUEUE = "arn:fakeQueue"
TESTS = "NServiceBus-Transport-SQS-Tests-SubscriptionManagerTests"


def _scrubbed(policy_json: str) -> str:
    """``PolicyScrubber.ScrubPolicy``."""
    without_ids = re.sub(r'"Sid": "(.*)",', "", policy_json)
    return "\n".join(line.rstrip() for line in without_ids.split("\n") if line.strip())


def _approved(test_name: str) -> str:
    return (APPROVALS / f"PolicyExtensionsTests.{test_name}.approved.txt").read_text()


def _adds(*events: str, prefix: str = "") -> list[PolicyStatement]:
    return [
        PolicyStatement(f"{prefix}{TESTS}-{e}", f"{ACCOUNT}:{prefix}{TESTS}-{e}", QUEUE)
        for e in events
    ]


def _update(
    policy: Policy,
    adds: list[PolicyStatement],
    *,
    account: bool = False,
    prefix_condition: bool = False,
    namespaces: tuple[str, ...] = (),
    prefix: str = "",
) -> bool:
    return update_policy(
        policy,
        adds,
        account_condition=account,
        topic_name_prefix_condition=prefix_condition,
        namespace_conditions=namespaces,
        topic_name_prefix=prefix,
        queue_arn=QUEUE,
    )


def _verify(test_name: str, policy: Policy) -> None:
    assert _scrubbed(policy.to_json()) == _approved(test_name)


def _with(*statements_patterns: list[str]) -> Policy:
    return Policy(statements=[queue_matching_statement(QUEUE, p) for p in statements_patterns])


def _legacy(*topic_arns: str) -> Policy:
    return Policy(statements=[permission_statement(QUEUE, arn) for arn in topic_arns])


def test_ExtractsPolicy_if_not_empty() -> None:
    policy = extract_policy({"Policy": Policy(id="CustomPolicy").to_json()})

    assert (policy.id, policy.version, policy.statements) == ("CustomPolicy", "2012-10-17", [])


def test_ExtractsPolicy_returns_empty_policy_if_empty() -> None:
    policy = extract_policy({})

    assert (policy.id, policy.version, policy.statements) == (None, "2012-10-17", [])


def test_Update_with_empty_add_statements_doesnt_update_policy() -> None:
    policy = Policy()

    assert not _update(policy, [])
    _verify("Update_with_empty_add_statements_doesnt_update_policy", policy)


def test_Update_sets_full_policy() -> None:
    policy = Policy()

    assert _update(policy, _adds("Event", "AnotherEvent"))
    _verify("Update_sets_full_policy", policy)


def test_Update_with_account_condition_sets_full_policy() -> None:
    policy = Policy()

    assert _update(policy, _adds("Event", "AnotherEvent"), account=True)
    _verify("Update_with_account_condition_sets_full_policy", policy)


def test_Update_with_topic_name_prefix_sets_full_policy() -> None:
    policy = Policy()

    assert _update(
        policy, _adds("Event", "AnotherEvent", prefix="DEV-"), prefix_condition=True, prefix="DEV-"
    )
    _verify("Update_with_topic_name_prefix_sets_full_policy", policy)


NAMESPACES = ("Shipping.", "Sales.HighValueOrders.")


def test_Update_with_namespace_conditions_sets_full_policy() -> None:
    policy = Policy()

    assert _update(policy, _adds("Event", "AnotherEvent"), namespaces=NAMESPACES)
    _verify("Update_with_namespace_conditions_sets_full_policy", policy)


def test_Update_with_namespace_conditions_and_topic_name_prefix_sets_full_policy() -> None:
    policy = Policy()

    assert _update(
        policy, _adds("Event", "AnotherEvent", prefix="DEV-"), namespaces=NAMESPACES, prefix="DEV-"
    )
    _verify("Update_with_namespace_conditions_and_topic_name_prefix_sets_full_policy", policy)


def test_Update_with_all_conditions_sets_full_policy() -> None:
    policy = Policy()

    assert _update(
        policy,
        _adds("Event", "AnotherEvent", prefix="DEV-"),
        account=True,
        prefix_condition=True,
        namespaces=NAMESPACES,
        prefix="DEV-",
    )
    _verify("Update_with_all_conditions_sets_full_policy", policy)


def test_Update_with_all_conditions_sets_full_policy_with_replaced_wildcard() -> None:
    policy = _with([f"{ACCOUNT}:DEV-*", f"{ACCOUNT}:{TESTS}-*"])

    assert _update(
        policy, _adds("Event", "AnotherEvent", prefix="DEV-"), account=True, prefix="DEV-"
    )
    _verify("Update_with_all_conditions_sets_full_policy_with_replaced_wildcard", policy)


def test_Update_with_existing_policy_does_extend_policy() -> None:
    policy = _with([f"{ACCOUNT}:{TESTS}-Event"])

    assert _update(policy, _adds("Event", "AnotherEvent"))
    _verify("Update_with_existing_policy_does_extend_policy", policy)


NAMESPACE = ("NServiceBus.Transport.SQS.Tests.SubscriptionManagerTests.",)


def test_Update_with_existing_policy_switched_to_wildcard() -> None:
    policy = _with([f"{ACCOUNT}:DEV-{TESTS}-Event", f"{ACCOUNT}:DEV-{TESTS}-AnotherEvent"])

    assert _update(
        policy,
        _adds("Event", "AnotherEvent", prefix="DEV-"),
        account=True,
        prefix_condition=True,
        namespaces=NAMESPACE,
        prefix="DEV-",
    )
    _verify("Update_with_existing_policy_switched_to_wildcard", policy)


def test_Update_with_existing_wildcard_policy_switched_to_events_will_replace_wildcards() -> None:
    policy = _with([f"{ACCOUNT}:*", f"{ACCOUNT}:DEV-*", f"{ACCOUNT}:DEV-{TESTS}-*"])

    assert _update(policy, _adds("Event", "AnotherEvent"))
    _verify(
        "Update_with_existing_wildcard_policy_switched_to_events_will_replace_wildcards", policy
    )


def test_Update_with_nothing_to_subscribe_doesnt_override_existing_policy() -> None:
    policy = _with([f"{ACCOUNT}:{TESTS}-Event", f"{ACCOUNT}:{TESTS}-AnotherEvent"])

    assert not _update(policy, [])
    _verify("Update_with_nothing_to_subscribe_doesnt_override_existing_policy", policy)


def test_Update_with_existing_policy_matching_doesnt_override_policy() -> None:
    policy = _with([f"{ACCOUNT}:{TESTS}-Event", f"{ACCOUNT}:{TESTS}-AnotherEvent"])

    assert not _update(policy, _adds("Event", "AnotherEvent"))
    _verify("Update_with_existing_policy_matching_doesnt_override_policy", policy)


def test_Update_with_existing_policy_matching_but_different_order_doesnt_override_policy() -> None:
    events = ("YetAnotherEvent", "Event", "YetYetAnotherEvent", "AnotherEvent")
    policy = _with([f"{ACCOUNT}:{TESTS}-{e}" for e in events])

    assert not _update(
        policy, _adds("Event", "AnotherEvent", "YetAnotherEvent", "YetYetAnotherEvent")
    )
    _verify(
        "Update_with_existing_policy_matching_but_different_order_doesnt_override_policy", policy
    )


def test_Update_with_existing_legacy_policy_does_migrate_policy() -> None:
    policy = _legacy(f"{ACCOUNT}:{TESTS}-Event", f"{ACCOUNT}:{TESTS}-AnotherEvent")

    assert _update(policy, _adds("Event", "AnotherEvent"))
    _verify("Update_with_existing_legacy_policy_does_migrate_policy", policy)


def test_Update_with_existing_partial_legacy_policy_does_migrate_policy() -> None:
    policy = _legacy(f"{ACCOUNT}:{TESTS}-AnotherEvent")

    assert _update(policy, _adds("Event", "AnotherEvent"))
    _verify("Update_with_existing_partial_legacy_policy_does_migrate_policy", policy)


def test_Update_with_existing_legacy_policy_with_conditions_does_migrate_to_wildcard_policy() -> (
    None
):
    policy = _legacy(f"{ACCOUNT}:DEV-{TESTS}-Event", f"{ACCOUNT}:DEV-{TESTS}-AnotherEvent")

    assert _update(
        policy,
        _adds("Event", "AnotherEvent", prefix="DEV-"),
        account=True,
        prefix_condition=True,
        namespaces=NAMESPACE,
        prefix="DEV-",
    )
    _verify(
        "Update_with_existing_legacy_policy_with_conditions_does_migrate_to_wildcard_policy",
        policy,
    )


def test_Update_with_existing_partial_legacy_policy_with_conditions_does_migrate_to_wildcard_policy() -> (
    None
):
    policy = _legacy(f"{ACCOUNT}:DEV-{TESTS}-AnotherEvent")

    assert _update(
        policy,
        _adds("Event", "AnotherEvent", prefix="DEV-"),
        account=True,
        prefix_condition=True,
        namespaces=NAMESPACE,
        prefix="DEV-",
    )
    _verify(
        "Update_with_existing_partial_legacy_policy_with_conditions_does_migrate_to_wildcard_policy",
        policy,
    )


def test_Update_with_existing_partial_legacy_policy_migration_leaves_unrelated_permissions() -> (
    None
):
    policy = _legacy(f"{ACCOUNT}:UnrelatedEvent", f"{ACCOUNT}:{TESTS}-AnotherEvent")

    assert _update(policy, _adds("Event", "AnotherEvent"))
    _verify(
        "Update_with_existing_partial_legacy_policy_migration_leaves_unrelated_permissions", policy
    )


def test_Update_with_existing_partial_legacy_policy_with_condition_migration_leaves_unrelated_permissions() -> (
    None
):
    policy = _legacy(f"{ACCOUNT}:DEV-UnrelatedEvent", f"{ACCOUNT}:DEV-{TESTS}-AnotherEvent")

    assert _update(
        policy,
        _adds("Event", "AnotherEvent", prefix="DEV-"),
        account=True,
        prefix_condition=True,
        namespaces=NAMESPACE,
        prefix="DEV-",
    )
    _verify(
        "Update_with_existing_partial_legacy_policy_with_condition_migration_leaves_unrelated_permissions",
        policy,
    )


def test_Update_with_existing_partial_policy_migration_leaves_unrelated_permissions() -> None:
    policy = _legacy(f"{ACCOUNT}:UnrelatedEvent")
    policy.statements.append(
        queue_matching_statement(
            QUEUE, [f"{ACCOUNT}:{TESTS}-Event", f"{ACCOUNT}:{TESTS}-AnotherEvent"]
        )
    )

    assert _update(policy, _adds("Event", "AnotherEvent", "YetAnotherEvent"))
    _verify("Update_with_existing_partial_policy_migration_leaves_unrelated_permissions", policy)


def test_a_written_policy_reads_back_to_itself_ids_included() -> None:
    policy = Policy()
    _update(policy, _adds("Event", "AnotherEvent"), account=True)
    policy.statements.append(permission_statement(QUEUE, f"{ACCOUNT}:Other"))

    assert policy_from_json(policy.to_json()) == policy


def test_the_reader_takes_what_the_service_may_answer() -> None:
    text = (
        '{"Version":"2008-10-17","Id":"p","Statement":[{"Effect":"Allow","Principal":"*",'
        '"Action":["sqs:SendMessage","sqs:ReceiveMessage"],"Resource":["q1","q2"],'
        '"Condition":{"ArnLike":{"aws:SourceArn":"t"},"StringEquals":{"k":5}}},'
        '{"Effect":"Deny","Principal":{"AWS":"1234-5678-9012","Service":["a-b","c"]}},'
        '{"Sid":"no effect"}]}'
    )

    policy = policy_from_json(text)

    assert policy.id == "p"
    assert policy.version == "2012-10-17"
    allow, deny = policy.statements
    assert allow.principals == [ANONYMOUS]
    assert allow.actions == ["sqs:SendMessage", "sqs:ReceiveMessage"]
    assert allow.resources == ["q1", "q2"]
    assert allow.conditions == [
        Condition("ArnLike", "aws:SourceArn", ("t",)),
        Condition("StringEquals", "k", ()),
    ]
    assert deny.effect == "Deny"
    assert deny.principals == [
        Principal("123456789012"),
        Principal("a-b", "Service"),
        Principal("c", "Service"),
    ]


def test_the_policy_settings_refuse_contradictions_with_the_transports_messages() -> None:
    settings = PolicySettings()
    settings.account_condition = True
    with pytest.raises(PolicySettingsError, match="Cannot disable policy setup if policy creation"):
        settings.setup_topic_policies_when_subscribing = False

    settings = PolicySettings()
    settings.setup_topic_policies_when_subscribing = False
    with pytest.raises(
        PolicySettingsError, match="Cannot configure policy creation if policy setup"
    ):
        settings.topic_name_prefix_condition = False
    settings.topic_namespace_conditions.append("Sales.")
    assert settings.topic_namespace_conditions == ["Sales."]


def test_an_existing_statement_lists_its_topics_in_any_order() -> None:
    policy = _with([])
    topics = tuple(f"{ACCOUNT}:{TESTS}-{e}" for e in ("Event", "AnotherEvent"))
    policy.statements[0].conditions = [Condition("ArnLike", "aws:SourceArn", topics)]

    assert not _update(policy, _adds("AnotherEvent", "Event"))
