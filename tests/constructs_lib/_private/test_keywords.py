"""Keywords are checked at the constructs' boundary against their own type hints: a wrong kind
of value is a ``TypeError`` naming the keyword, an enum takes its members or their values, a
string is never a list, a policy object takes its JSON form, aws-cdk-lib's refusals name our
keyword, and ``help()`` shows the real signature."""

from __future__ import annotations

import inspect
import pydoc
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pytest
from aws_cdk import App, Duration, Stack
from aws_cdk import aws_kms as kms
from aws_cdk import aws_sqs as sqs
from constructs import Construct

import constructs_lib
from constructs_lib import (
    CrossAccountRelay,
    DeliveryLoggedTopic,
    DeliveryProtocol,
    EndpointQueue,
    EndpointQueueEncryption,
    HttpDeliveryPolicy,
    RelayDirection,
    RelayRoute,
)
from constructs_lib._private.keywords import check_keyword, checked

pytestmark = pytest.mark.synth


@checked
@dataclass(frozen=True)
class _Example:
    names: Sequence[str]
    direction: RelayDirection | None = None
    policy: HttpDeliveryPolicy | None = None
    limits: Mapping[str, Any] | None = None
    count: int = 1


def test_an_enum_takes_its_members_and_their_values_and_nothing_else() -> None:
    assert check_keyword("d", RelayDirection.INBOUND, RelayDirection) is RelayDirection.INBOUND
    assert check_keyword("d", "outbound", RelayDirection) is RelayDirection.OUTBOUND
    with pytest.raises(ValueError, match=r"^d: str 'OUTBOUND' is not a member of RelayDirection"):
        check_keyword("d", "OUTBOUND", RelayDirection)
    with pytest.raises(TypeError, match=r"^d: int 1 is not a member of RelayDirection"):
        check_keyword("d", 1, RelayDirection)


def test_a_string_is_never_a_list() -> None:
    with pytest.raises(TypeError, match=r"^names: expected a list, got the string 'Billing'"):
        _Example(names="Billing")
    with pytest.raises(TypeError, match=r"^names: \[1\]: expected str, got int 7"):
        _Example(names=["Sales", 7])  # type: ignore[list-item]
    assert _Example(names=("Sales",)).names == ("Sales",)


def test_a_list_of_enum_values_becomes_their_members() -> None:
    fitted = check_keyword("p", ["sqs", DeliveryProtocol.LAMBDA], Sequence[DeliveryProtocol])
    assert fitted == (DeliveryProtocol.SQS, DeliveryProtocol.LAMBDA)


def test_a_policy_object_takes_its_json_form_and_its_refusals_name_the_keyword() -> None:
    given: Any = {"healthyRetryPolicy": {"numRetries": 4}}
    policy = _Example(names=[], policy=given).policy
    assert isinstance(policy, HttpDeliveryPolicy)
    assert policy.num_retries == 4
    with pytest.raises(ValueError, match=r"^policy: numRetries \(num_retries\): must be from 0"):
        _Example(names=[], policy={"healthyRetryPolicy": {"numRetries": -1}})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^limits: expected a mapping"):
        _Example(names=[], limits=["a"])  # type: ignore[arg-type]


@pytest.mark.parametrize("value", [True, "10", 10.0, None])
def test_a_whole_number_is_an_int_and_nothing_like_one(value: object) -> None:
    with pytest.raises(TypeError, match=r"^count: expected a whole number"):
        _Example(names=[], count=value)  # type: ignore[arg-type]


def test_aws_cdk_lib_interfaces_take_objects_made_here_or_imported() -> None:
    stack = Stack(App(), "S")
    for key in (
        kms.Key(stack, "K"),
        kms.Key.from_key_arn(stack, "I", "arn:aws:kms:us-east-1:111111111111:key/abc"),
        kms.Alias.from_alias_name(stack, "A", "alias/team"),
    ):
        assert check_keyword("key", key, kms.IKey) is key
    with pytest.raises(
        TypeError, match=r"^key: expected aws_kms.IKey, got a aws_cdk.aws_sqs.Queue"
    ):
        check_keyword("key", sqs.Queue(stack, "Q"), kms.IKey)


def test_a_misspelt_keyword_is_named_with_the_one_meant() -> None:
    with pytest.raises(
        TypeError,
        match=r"unexpected keyword argument 'endpointname' \(did you mean endpoint_name\?\)",
    ):
        EndpointQueue(Stack(App(), "S"), "Q", endpointname="Sales")  # type: ignore[call-arg]


def test_aws_cdk_libs_range_errors_name_our_keyword() -> None:
    stack = Stack(App(), "S")
    # SQS's retention range is checked before aws-cdk-lib sees it, so that the dead-letter
    # queue's is never compared with a queue's retention SQS refuses.
    with pytest.raises(
        ValueError,
        match=r"^dead_letter_retention_period: 15 days is over SQS's maximum of 14 days",
    ):
        EndpointQueue(stack, "A", endpoint_name="A", dead_letter_retention_period=Duration.days(15))
    with pytest.raises(ValueError, match=r"^visibility_timeout: aws-cdk-lib refuses it"):
        EndpointQueue(stack, "B", endpoint_name="B", visibility_timeout=Duration.hours(13))


def test_a_keyword_given_as_its_value_works_as_the_member() -> None:
    stack = Stack(App(), "S")
    queue = EndpointQueue(stack, "Q", endpoint_name="Q", encryption="KMS")  # type: ignore[arg-type]
    assert isinstance(queue.encryption_key, kms.Key)
    sse = EndpointQueue(stack, "S", endpoint_name="S", encryption="SQS_MANAGED")  # type: ignore[arg-type]
    assert sse.encryption_key is None
    assert EndpointQueueEncryption("KMS") is EndpointQueueEncryption.KMS


def test_varargs_refuse_a_list_given_as_one() -> None:
    queue = EndpointQueue(Stack(App(), "S"), "Q", endpoint_name="Q")
    with pytest.raises(TypeError, match=r"^account_ids: give each as its own argument"):
        queue.add_sender_accounts(["222222222222"])  # type: ignore[arg-type]


CONSTRUCTS = [
    getattr(constructs_lib, name)
    for name in constructs_lib.__all__
    if inspect.isclass(getattr(constructs_lib, name))
    and issubclass(getattr(constructs_lib, name), Construct)
]


@pytest.mark.parametrize("cls", CONSTRUCTS, ids=lambda cls: cls.__name__)
def test_help_shows_each_constructs_real_keywords_and_readable_defaults(cls: type) -> None:
    text = pydoc.plain(pydoc.render_doc(cls))
    assert f"{cls.__name__}(scope: Construct, construct_id: str, *," in text
    assert "*args" not in text
    assert " object at 0x" not in text


def test_help_shows_durations_and_enums_as_code_writes_them() -> None:
    signature = str(inspect.signature(EndpointQueue))
    assert "retention_period: Duration = Duration.days(4)" in signature
    assert "removal_policy: RemovalPolicy = RemovalPolicy.RETAIN" in signature
    assert "encryption: EndpointQueueEncryption = EndpointQueueEncryption.KMS" in signature


def test_a_relay_route_checks_its_fields() -> None:
    with pytest.raises(TypeError, match=r"^source: expected"):
        RelayRoute("Billing", "arn:aws:sqs:us-east-1:222222222222:Billing")  # type: ignore[arg-type]
    stack = Stack(App(), "S")
    shadow = EndpointQueue(
        stack, "Shadow", endpoint_name="Billing", visibility_timeout=Duration.minutes(6)
    )
    relay = CrossAccountRelay(
        stack,
        "Relay",
        direction="outbound",  # type: ignore[arg-type]
        routes=[RelayRoute(shadow, "arn:aws:sqs:us-east-1:222222222222:Billing-ingress")],
        local_endpoints=["Sales"],
    )
    assert '"direction":"outbound"' in relay.configuration
    with pytest.raises(TypeError, match=r"^local_endpoints: expected a list, got the string"):
        CrossAccountRelay(
            stack,
            "Other",
            direction=RelayDirection.OUTBOUND,
            routes=[RelayRoute(shadow, "arn:aws:sqs:us-east-1:222222222222:Billing-ingress")],
            local_endpoints="Sales",
        )


def test_a_topics_logged_protocols_take_values() -> None:
    topic = DeliveryLoggedTopic(
        Stack(App(), "S"),
        "T",
        topic_name="T",
        logged_protocols=["sqs"],  # type: ignore[list-item]
    )
    assert topic.topic_name == "T"
