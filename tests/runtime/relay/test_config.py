"""The relay's configuration: what the topology passes, and the errors that name the fix."""

from __future__ import annotations

import json
from typing import Any

import pytest

from cross_account_runtime.common.configuration import ConfigurationError
from cross_account_runtime.relay.config import RelayConfig, RelayDirection
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
        "RELAY_LOCAL_ENDPOINTS": {"Sales": SALES_ARN},
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


def test_an_inbound_configuration_needs_no_local_endpoints() -> None:
    routes = {
        BILLING_INGRESS_ARN: {
            "destination": BILLING_ARN,
            "deadLetterQueue": BILLING_INGRESS_DLQ_ARN,
        }
    }
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
    routes = {
        BILLING_INGRESS_ARN: {
            "destination": BILLING_ARN,
            "deadLetterQueue": BILLING_INGRESS_DLQ_ARN,
        }
    }
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
            "must be an object with exactly the members 'destination' and 'deadLetterQueue'",
        ),
        (
            {"RELAY_ROUTES": {BILLING_SHADOW_ARN: {**route(), "retries": 3}}},
            "exactly the members",
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
        ({"RELAY_LOCAL_ENDPOINTS": {}}, "RELAY_LOCAL_ENDPOINTS is not set or empty"),
        ({"RELAY_LOCAL_ENDPOINTS": {" Sales": SALES_ARN}}, "surrounding spaces"),
        ({"RELAY_LOCAL_ENDPOINTS": {SALES_ARN: SALES_ARN}}, "must be the legacy transport address"),
        ({"RELAY_LOCAL_ENDPOINTS": {":Sales": SALES_ARN}}, "must be the legacy transport address"),
        (
            {"RELAY_LOCAL_ENDPOINTS": {"Sales": "Sales"}},
            "endpoint 'Sales': 'Sales' is not an SQS queue ARN",
        ),
        ({"RELAY_LOCAL_ENDPOINTS": {"Sales": 7}}, "expected a queue ARN as text, got int"),
        ({"RELAY_LOCAL_ENDPOINTS": {"Sales": BILLING_ARN}}, "is not in this relay's account"),
    ],
)
def test_an_unusable_outbound_configuration_names_the_variable_and_the_fix(
    variables: dict[str, Any], expected: str
) -> None:
    with pytest.raises(ConfigurationError, match="RELAY_") as raised:
        RelayConfig.from_environment(environment(**variables))
    assert expected in str(raised.value)


def test_an_inbound_relay_refuses_local_endpoints() -> None:
    routes = {BILLING_INGRESS_ARN: route(BILLING_ARN, BILLING_INGRESS_DLQ_ARN)}
    with pytest.raises(ConfigurationError, match="stamps nothing: unset it"):
        RelayConfig.from_environment(environment(RELAY_DIRECTION="inbound", RELAY_ROUTES=routes))


def test_an_inbound_relay_delivers_only_within_its_account() -> None:
    routes = {BILLING_INGRESS_ARN: route(SALES_ARN, BILLING_INGRESS_DLQ_ARN)}
    with pytest.raises(
        ConfigurationError, match="an inbound relay delivers to a local endpoint queue"
    ):
        RelayConfig.from_environment(
            environment(RELAY_DIRECTION="inbound", RELAY_ROUTES=routes, RELAY_LOCAL_ENDPOINTS=None)
        )
