"""The relay's configuration: what the topology passes, and the errors that name the fix."""

from __future__ import annotations

import json
from typing import Any

import pytest

from cross_account_runtime.common.configuration import ConfigurationError
from cross_account_runtime.relay.config import (
    MessageForm,
    ReceiverAddressing,
    RelayConfig,
    RelayDirection,
)
from tests.runtime.relay.conftest import (
    BILLING_ARN,
    BILLING_INGRESS_ARN,
    BILLING_INGRESS_DLQ_ARN,
    BILLING_SHADOW_ARN,
    BILLING_SHADOW_DLQ_ARN,
    FIFO_INGRESS_ARN,
    FIFO_SHADOW_ARN,
    FIFO_SHADOW_DLQ_ARN,
    SALES_ARN,
)

ROUTES = {
    BILLING_SHADOW_ARN: {
        "destination": BILLING_INGRESS_ARN,
        "deadLetterQueue": BILLING_SHADOW_DLQ_ARN,
    }
}


def environment(**variables: Any) -> dict[str, str]:
    """A valid outbound environment with ``variables`` replaced (``None`` removes one)."""
    base: dict[str, Any] = {
        "RELAY_DIRECTION": "outbound",
        "RELAY_ROUTES": ROUTES,
        "RELAY_LOCAL_ENDPOINTS": ["Sales"],
    }
    base.update(variables)
    return {
        name: value if isinstance(value, str) else json.dumps(value)
        for name, value in base.items()
        if value is not None
    }


def test_an_outbound_configuration_is_read_from_the_environment() -> None:
    config = RelayConfig.from_environment(environment())
    assert config.direction == "outbound"
    route = config.routes[BILLING_SHADOW_ARN]
    assert (
        route.destination_url == "https://sqs.us-east-1.amazonaws.com/222222222222/Billing-ingress"
    )
    assert route.dead_letter_url == "https://sqs.us-east-1.amazonaws.com/111111111111/Billing-dlq"
    assert route.fifo is False
    assert config.local_endpoints == {"Sales": SALES_ARN}


INBOUND_ROUTES = {
    BILLING_INGRESS_ARN: {
        "destination": BILLING_ARN,
        "deadLetterQueue": BILLING_INGRESS_DLQ_ARN,
        "receiver": "arn",
        "form": "wrapped",
    }
}


def test_an_inbound_configuration_needs_no_local_endpoints() -> None:
    routes = INBOUND_ROUTES
    config = RelayConfig.from_environment(
        environment(RELAY_DIRECTION=" inbound ", RELAY_ROUTES=routes, RELAY_LOCAL_ENDPOINTS=None)
    )
    assert config.direction == "inbound"
    assert config.local_endpoints == {}


@pytest.mark.parametrize("direction", list(RelayDirection))
def test_the_direction_is_read_into_a_relay_direction_that_writes_as_its_plain_text(
    direction: RelayDirection,
) -> None:
    """Log lines and the Relay.Rejection JSON carry the direction exactly as the variable."""
    routes = INBOUND_ROUTES
    variables: dict[str, Any] = {"RELAY_DIRECTION": str(direction.value)}
    if direction is RelayDirection.INBOUND:
        variables |= {"RELAY_ROUTES": routes, "RELAY_LOCAL_ENDPOINTS": None}

    config = RelayConfig.from_environment(environment(**variables))

    assert config.direction is direction
    assert json.dumps({"direction": config.direction}) == f'{{"direction": "{direction.value}"}}'
    assert f"{config.direction}" == direction.value


def test_fifo_routes_are_recognised_by_their_queue_names() -> None:
    routes = {
        FIFO_SHADOW_ARN: {"destination": FIFO_INGRESS_ARN, "deadLetterQueue": FIFO_SHADOW_DLQ_ARN}
    }
    config = RelayConfig.from_environment(environment(RELAY_ROUTES=routes))
    assert config.routes[FIFO_SHADOW_ARN].fifo is True


def route(
    destination: str = BILLING_INGRESS_ARN, dead_letter: str = BILLING_SHADOW_DLQ_ARN
) -> dict[str, str]:
    return {"destination": destination, "deadLetterQueue": dead_letter}


@pytest.mark.parametrize(
    ("variables", "expected"),
    [
        ({"RELAY_DIRECTION": None}, "RELAY_DIRECTION is not set"),
        ({"RELAY_DIRECTION": "sideways"}, "RELAY_DIRECTION is 'sideways'; set it to 'outbound'"),
        ({"RELAY_ROUTES": None}, "RELAY_ROUTES is not set"),
        ({"RELAY_ROUTES": "{not json"}, "RELAY_ROUTES is not valid JSON"),
        ({"RELAY_ROUTES": "[]"}, "RELAY_ROUTES is a JSON list, not an object"),
        ({"RELAY_ROUTES": {}}, "RELAY_ROUTES lists no queue"),
        (
            {
                "RELAY_ROUTES": f'{{"{BILLING_SHADOW_ARN}": {json.dumps(route())}, "{BILLING_SHADOW_ARN}": {json.dumps(route())}}}'
            },
            "appears twice",
        ),
        ({"RELAY_ROUTES": {"Billing": route()}}, "RELAY_ROUTES: source 'Billing'"),
        (
            {"RELAY_ROUTES": {BILLING_SHADOW_ARN: BILLING_INGRESS_ARN}},
            "must be an object with the members ['deadLetterQueue', 'destination'] (and "
            "optionally ['bodyBucket', 'delayed', 'forwardUnreadable', 'maxReceiveCount']) for "
            "an outbound relay",
        ),
        (
            {"RELAY_ROUTES": {BILLING_SHADOW_ARN: {**route(), "retries": 3}}},
            "must be an object with the members",
        ),
        (
            {"RELAY_ROUTES": {BILLING_SHADOW_ARN: route(destination="https://sqs/Billing")}},
            "destination: 'https://sqs/Billing' is not an SQS queue ARN",
        ),
        (
            {"RELAY_ROUTES": {BILLING_SHADOW_ARN: route(destination=BILLING_SHADOW_ARN)}},
            "would loop",
        ),
        (
            {"RELAY_ROUTES": {BILLING_SHADOW_ARN: route(destination=FIFO_INGRESS_ARN)}},
            "forward FIFO to FIFO",
        ),
        (
            {
                "RELAY_ROUTES": {
                    BILLING_SHADOW_ARN: route(
                        destination="arn:aws-cn:sqs:cn-north-1:222222222222:Billing"
                    )
                }
            },
            "SQS cannot deliver across partitions",
        ),
        (
            {"RELAY_ROUTES": {BILLING_SHADOW_ARN: route(dead_letter=BILLING_INGRESS_DLQ_ARN)}},
            "give the source queue's own redrive dead-letter queue",
        ),
        (
            {"RELAY_ROUTES": {BILLING_SHADOW_ARN: route(dead_letter=FIFO_SHADOW_DLQ_ARN)}},
            "dead-letter queue of the source's type",
        ),
        (
            {
                "RELAY_ROUTES": {
                    **ROUTES,
                    "arn:aws:sqs:eu-west-1:111111111111:Billing": route(
                        dead_letter="arn:aws:sqs:eu-west-1:111111111111:Billing-dlq"
                    ),
                }
            },
            "deploy one relay per account and region",
        ),
        ({"RELAY_LOCAL_ENDPOINTS": None}, "RELAY_LOCAL_ENDPOINTS is not set or empty"),
        ({"RELAY_LOCAL_ENDPOINTS": []}, "RELAY_LOCAL_ENDPOINTS is not set or empty"),
        ({"RELAY_LOCAL_ENDPOINTS": {"Sales": SALES_ARN}}, "is a JSON dict, not an array"),
        ({"RELAY_LOCAL_ENDPOINTS": [" Sales"]}, "surrounding spaces"),
        ({"RELAY_LOCAL_ENDPOINTS": [7]}, "endpoint 7: the address is not text"),
        ({"RELAY_LOCAL_ENDPOINTS": [SALES_ARN]}, "give the legacy transport address"),
        ({"RELAY_LOCAL_ENDPOINTS": [":Sales"]}, "give the legacy transport address"),
        ({"RELAY_LOCAL_ENDPOINTS": ["Sales!"]}, "endpoint 'Sales!'"),
    ],
)
def test_an_unusable_outbound_configuration_names_the_variable_and_the_fix(
    variables: dict[str, Any], expected: str
) -> None:
    with pytest.raises(ConfigurationError, match="RELAY_") as raised:
        RelayConfig.from_environment(environment(**variables))
    assert expected in str(raised.value)


def inbound_route(destination: str = BILLING_ARN, **members: Any) -> dict[str, Any]:
    return {
        **route(destination, BILLING_INGRESS_DLQ_ARN),
        "receiver": "arn",
        "form": "wrapped",
        **members,
    }


def test_an_inbound_relay_refuses_local_endpoints() -> None:
    routes = {BILLING_INGRESS_ARN: inbound_route()}
    with pytest.raises(ConfigurationError, match="stamps nothing: unset it"):
        RelayConfig.from_environment(environment(RELAY_DIRECTION="inbound", RELAY_ROUTES=routes))


def test_an_inbound_relay_delivers_only_within_its_account() -> None:
    routes = {BILLING_INGRESS_ARN: inbound_route(SALES_ARN)}
    with pytest.raises(
        ConfigurationError, match="an inbound relay delivers to a local endpoint queue"
    ):
        RelayConfig.from_environment(
            environment(RELAY_DIRECTION="inbound", RELAY_ROUTES=routes, RELAY_LOCAL_ENDPOINTS=None)
        )


BOOKS = {"1": {"arn:aws:sqs:us-east-1:111111111111": ["Sales", "Shipping"]}}


def read_inbound(books: Any = None, **members: Any) -> RelayConfig:
    routes = {BILLING_INGRESS_ARN: inbound_route(**members)}
    return RelayConfig.from_environment(
        environment(
            RELAY_DIRECTION="inbound",
            RELAY_ROUTES=routes,
            RELAY_LOCAL_ENDPOINTS=None,
            RELAY_ADDRESS_BOOKS=books,
        )
    )


def test_an_inbound_route_says_how_its_endpoint_reads_addresses() -> None:
    arn_aware = read_inbound().routes[BILLING_INGRESS_ARN]
    assert arn_aware.receiver is ReceiverAddressing.ARN
    assert arn_aware.addresses == {}
    released = read_inbound(BOOKS, receiver="name", addressBook="1")
    route = released.routes[BILLING_INGRESS_ARN]
    assert route.receiver is ReceiverAddressing.NAME
    assert route.addresses == {
        SALES_ARN: "Sales",
        "arn:aws:sqs:us-east-1:111111111111:Shipping": "Shipping",
    }


def test_routes_that_name_one_address_book_share_it() -> None:
    second = "arn:aws:sqs:us-east-1:222222222222:Audit-ingress"
    routes = {
        BILLING_INGRESS_ARN: inbound_route(receiver="name", addressBook="1"),
        second: {
            **inbound_route(receiver="name", addressBook="1"),
            "destination": "arn:aws:sqs:us-east-1:222222222222:Audit",
            "deadLetterQueue": "arn:aws:sqs:us-east-1:222222222222:Audit-ingress-dlq",
        },
    }
    config = RelayConfig("inbound", routes, address_books=BOOKS)
    assert config.routes[BILLING_INGRESS_ARN].addresses is config.routes[second].addresses


@pytest.mark.parametrize(
    ("members", "books", "expected"),
    [
        ({"receiver": None}, None, "must be an object with the members"),
        ({"receiver": "names"}, None, "receiver is 'names'; set it to 'arn'"),
        ({"addressBook": "1"}, BOOKS, "only a released endpoint needs addresses"),
        (
            {"receiver": "name", "addressBook": "2"},
            BOOKS,
            "which RELAY_ADDRESS_BOOKS does not hold (it has ['1'])",
        ),
        ({"receiver": "name", "addressBook": "1"}, None, "does not hold (it has [])"),
        ({"receiver": "name", "addressBook": "1"}, {"1": ["Sales"]}, "book '1' must be an object"),
        (
            {"receiver": "name", "addressBook": "1"},
            {"1": {"arn:aws:sqs:us-east-1:111111111111": []}},
            "must list at least one queue name",
        ),
        (
            {"receiver": "name", "addressBook": "1"},
            {"1": {"arn:aws:sqs:us-east-1:111111111111": [7]}},
            "give queue names as text",
        ),
        (
            {"receiver": "name", "addressBook": "1"},
            {"1": {"arn:aws:sqs:us-east-1:111111111111:Sales": ["X"]}},
            "RELAY_ADDRESS_BOOKS: book '1': 'arn:aws:sqs:us-east-1:111111111111:Sales'",
        ),
        (
            {"receiver": "name", "addressBook": "1"},
            {"1": {"arn:aws:sns:us-east-1:111111111111": ["X"]}},
            "book '1'",
        ),
        ({"delayed": True}, None, "for an inbound relay"),
    ],
)
def test_an_unusable_inbound_route_names_the_member_and_the_fix(
    members: dict[str, Any], books: Any, expected: str
) -> None:
    route_members = {k: v for k, v in members.items() if v is not None}
    routes = {
        BILLING_INGRESS_ARN: {
            **{k: v for k, v in inbound_route().items() if k not in members},
            **route_members,
        }
    }
    with pytest.raises(ConfigurationError) as raised:
        RelayConfig.from_environment(
            environment(
                RELAY_DIRECTION="inbound",
                RELAY_ROUTES=routes,
                RELAY_LOCAL_ENDPOINTS=None,
                RELAY_ADDRESS_BOOKS=books,
            )
        )
    assert expected in str(raised.value)


def test_an_outbound_relay_refuses_address_books() -> None:
    with pytest.raises(
        ConfigurationError, match="RELAY_ADDRESS_BOOKS is set but RELAY_DIRECTION is 'outbound'"
    ):
        RelayConfig.from_environment(environment(RELAY_ADDRESS_BOOKS=BOOKS))


BILLING_DELAY_SHADOW_ARN = "arn:aws:sqs:us-east-1:111111111111:Billing-delay.fifo"
BILLING_DELAY_SHADOW_DLQ_ARN = "arn:aws:sqs:us-east-1:111111111111:Billing-delay-dlq.fifo"


def test_a_delay_queues_shadow_forwards_from_fifo_to_a_standard_ingress_queue() -> None:
    routes = {
        **ROUTES,
        BILLING_DELAY_SHADOW_ARN: {
            "destination": BILLING_INGRESS_ARN,
            "deadLetterQueue": BILLING_DELAY_SHADOW_DLQ_ARN,
            "delayed": True,
        },
    }
    route = RelayConfig.from_environment(environment(RELAY_ROUTES=routes)).routes[
        BILLING_DELAY_SHADOW_ARN
    ]
    assert route.delayed is True
    assert route.fifo is True
    assert route.destination_fifo is False


@pytest.mark.parametrize(
    ("source", "destination", "delayed", "expected"),
    [
        (BILLING_SHADOW_ARN, BILLING_INGRESS_ARN, True, "reads the shadow of a delay queue"),
        (BILLING_DELAY_SHADOW_ARN, FIFO_INGRESS_ARN, True, "reads the shadow of a delay queue"),
        (BILLING_DELAY_SHADOW_ARN, BILLING_INGRESS_ARN, False, "forward FIFO to FIFO"),
        (BILLING_SHADOW_ARN, BILLING_INGRESS_ARN, "yes", "delayed must be true or false"),
    ],
)
def test_a_delayed_route_must_read_a_delay_queues_shadow(
    source: str, destination: str, delayed: object, expected: str
) -> None:
    dead_letter = (
        BILLING_DELAY_SHADOW_DLQ_ARN if source.endswith(".fifo") else BILLING_SHADOW_DLQ_ARN
    )
    routes = {
        source: {"destination": destination, "deadLetterQueue": dead_letter, "delayed": delayed}
    }
    with pytest.raises(ConfigurationError) as raised:
        RelayConfig.from_environment(environment(RELAY_ROUTES=routes))
    assert expected in str(raised.value)


# The members of a route that the relay's message semantics need ------------------------------


@pytest.mark.parametrize("form", list(MessageForm))
def test_an_inbound_route_names_the_form_its_endpoint_writes(form: MessageForm) -> None:
    route = read_inbound(form=form.value).routes[BILLING_INGRESS_ARN]
    assert route.form is form
    assert f"{route.form}" == form.value


@pytest.mark.parametrize(
    ("form", "expected"),
    [
        (None, "form is missing; set it to 'wrapped' or 'attribute'"),
        ("unwrapped", "form is 'unwrapped'; set it to 'wrapped' or 'attribute'"),
        (True, "form is True; set it to 'wrapped' or 'attribute'"),
    ],
)
def test_an_inbound_route_without_a_known_form_names_the_route_and_the_fix(
    form: object, expected: str
) -> None:
    members = inbound_route()
    del members["form"]
    if form is not None:
        members["form"] = form
    with pytest.raises(ConfigurationError) as raised:
        RelayConfig("inbound", {BILLING_INGRESS_ARN: members})
    message = str(raised.value)
    assert message.startswith(f"RELAY_ROUTES: route for {BILLING_INGRESS_ARN!r}: ")
    assert expected in message
    assert "DoNotWrapOutgoingMessages" in message


def test_an_outbound_route_refuses_a_form() -> None:
    routes = {BILLING_SHADOW_ARN: {**route(), "form": "wrapped"}}
    with pytest.raises(ConfigurationError) as raised:
        RelayConfig.from_environment(environment(RELAY_ROUTES=routes))
    assert str(raised.value) == (
        f"RELAY_ROUTES: route for {BILLING_SHADOW_ARN!r}: form is for inbound routes; an "
        "outbound relay forwards each message in the form its sender wrote, and the receiving "
        "account's inbound relay delivers it in its endpoint's form: remove form"
    )


def test_routes_say_whether_unreadable_messages_go_on_and_their_receive_count() -> None:
    outbound = RelayConfig.from_environment(
        environment(
            RELAY_ROUTES={
                BILLING_SHADOW_ARN: {**route(), "forwardUnreadable": True, "maxReceiveCount": 5}
            }
        )
    ).routes[BILLING_SHADOW_ARN]
    assert (outbound.forward_unreadable, outbound.max_receive_count, outbound.form) == (
        True,
        5,
        None,
    )
    inbound = read_inbound(forwardUnreadable=False, maxReceiveCount=1000).routes[
        BILLING_INGRESS_ARN
    ]
    assert (inbound.forward_unreadable, inbound.max_receive_count) == (False, 1000)
    plain = read_inbound().routes[BILLING_INGRESS_ARN]
    assert (plain.forward_unreadable, plain.max_receive_count) == (False, None)


@pytest.mark.parametrize(
    ("members", "expected"),
    [
        ({"forwardUnreadable": "yes"}, "forwardUnreadable is 'yes'; set it to true"),
        ({"forwardUnreadable": 1}, "forwardUnreadable is 1; set it to true"),
        ({"maxReceiveCount": 0}, "maxReceiveCount is 0; give the source queue's redrive"),
        ({"maxReceiveCount": 1001}, "an integer from 1 to 1000, or leave it out"),
        ({"maxReceiveCount": "5"}, "maxReceiveCount is '5'"),
        ({"maxReceiveCount": 5.0}, "maxReceiveCount is 5.0"),
        ({"maxReceiveCount": True}, "maxReceiveCount is True"),
    ],
)
@pytest.mark.parametrize("direction", list(RelayDirection))
def test_an_unusable_route_member_names_the_route_and_the_fix(
    members: dict[str, Any], expected: str, direction: RelayDirection
) -> None:
    if direction is RelayDirection.OUTBOUND:
        routes = {BILLING_SHADOW_ARN: {**route(), **members}}
        variables: dict[str, Any] = {"RELAY_ROUTES": routes}
    else:
        routes = {BILLING_INGRESS_ARN: inbound_route(**members)}
        variables = {
            "RELAY_DIRECTION": "inbound",
            "RELAY_ROUTES": routes,
            "RELAY_LOCAL_ENDPOINTS": None,
        }
    with pytest.raises(ConfigurationError) as raised:
        RelayConfig.from_environment(environment(**variables))
    assert str(raised.value).startswith(f"RELAY_ROUTES: route for {next(iter(routes))!r}: ")
    assert expected in str(raised.value)


def test_an_inbound_route_may_name_its_own_accounts_body_bucket() -> None:
    config = read_inbound(bodyBucket="billing-bodies")
    assert config.routes[BILLING_INGRESS_ARN].body_bucket == "billing-bodies"
    assert config.body_bucket is None


def test_an_inbound_relay_still_refuses_the_outbound_copy_source() -> None:
    with pytest.raises(ConfigurationError) as raised:
        RelayConfig(
            "inbound",
            {BILLING_INGRESS_ARN: inbound_route(bodyBucket="billing-bodies")},
            body_bucket="billing-bodies",
        )
    assert str(raised.value).startswith("RELAY_BODY_BUCKET is set but RELAY_DIRECTION is 'inbound'")


def test_an_inbound_routes_body_bucket_must_be_a_bucket_name() -> None:
    with pytest.raises(ConfigurationError, match="bodyBucket is 'Billing_Bodies', not an S3"):
        read_inbound(bodyBucket="Billing_Bodies")
