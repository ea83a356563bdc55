"""The relay's configuration: the file in the function's code and the variables beside it,
what the topology passes, and the errors that name the fix."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cross_account_runtime.common.configuration import ConfigurationError
from cross_account_runtime.relay.config import RelayConfig
from cross_account_runtime.relay.config_format import (
    MessageForm,
    ReceiverAddressing,
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
FILE_NAME = "relay-config.json"

Read = Callable[..., RelayConfig]


@pytest.fixture
def task_root(tmp_path: Path) -> Path:
    """The function's code, as Lambda unpacks it (``LAMBDA_TASK_ROOT``)."""
    return tmp_path


@pytest.fixture
def read(task_root: Path) -> Read:
    """Write a valid outbound file with ``members`` replaced (``None`` removes one) into the
    function's code, and read it as the relay does, with ``variables`` beside
    ``RELAY_CONFIGURATION`` and ``LAMBDA_TASK_ROOT``."""

    def read(variables: dict[str, str] | None = None, **members: Any) -> RelayConfig:
        document: dict[str, Any] = {
            "direction": "outbound",
            "routes": ROUTES,
            "localEndpoints": ["Sales"],
        }
        document.update(members)
        (task_root / FILE_NAME).write_text(
            json.dumps({k: v for k, v in document.items() if v is not None}), encoding="utf-8"
        )
        return RelayConfig.from_environment(
            {
                "RELAY_CONFIGURATION": FILE_NAME,
                "LAMBDA_TASK_ROOT": str(task_root),
                **(variables or {}),
            }
        )

    return read


def test_an_outbound_configuration_is_read_from_the_file_in_the_functions_code(
    read: Read,
) -> None:
    config = read()
    assert config.direction == "outbound"
    route = config.routes[BILLING_SHADOW_ARN]
    assert (
        route.destination_url == "https://sqs.us-east-1.amazonaws.com/222222222222/Billing-ingress"
    )
    assert route.dead_letter_url == "https://sqs.us-east-1.amazonaws.com/111111111111/Billing-dlq"
    assert route.fifo is False
    assert config.local_endpoints == {"Sales": SALES_ARN}


def test_queues_named_without_an_arn_are_the_relays_own_account_and_regions(read: Read) -> None:
    """What CloudFormation fills in (the account, the region) stays in RELAY_HOME; the file,
    written at synth, names the queues the construct creates by their names."""
    config = read(
        {"RELAY_HOME": "arn:aws:sqs:us-east-1:111111111111"},
        routes={"Billing": {"destination": BILLING_INGRESS_ARN, "deadLetterQueue": "Billing-dlq"}},
    )
    route = config.routes[BILLING_SHADOW_ARN]
    assert str(route.source) == BILLING_SHADOW_ARN
    assert str(route.dead_letter_queue) == BILLING_SHADOW_DLQ_ARN
    assert config.local_endpoints == {"Sales": SALES_ARN}


def test_a_dead_letter_queue_named_without_an_arn_is_beside_its_source(read: Read) -> None:
    config = read(routes={BILLING_SHADOW_ARN: {**route(), "deadLetterQueue": "Billing-dlq"}})
    assert str(config.routes[BILLING_SHADOW_ARN].dead_letter_queue) == BILLING_SHADOW_DLQ_ARN


def test_a_relative_file_is_read_from_the_functions_code_and_an_absolute_one_as_given(
    read: Read, task_root: Path
) -> None:
    read()
    elsewhere = task_root / "elsewhere"
    elsewhere.mkdir()
    (task_root / FILE_NAME).rename(elsewhere / FILE_NAME)
    config = RelayConfig.from_environment(
        {"RELAY_CONFIGURATION": str(elsewhere / FILE_NAME), "LAMBDA_TASK_ROOT": str(task_root)}
    )
    assert set(config.routes) == {BILLING_SHADOW_ARN}
    with pytest.raises(ConfigurationError, match=f"cannot read {task_root / FILE_NAME} "):
        RelayConfig.from_environment(
            {"RELAY_CONFIGURATION": FILE_NAME, "LAMBDA_TASK_ROOT": str(task_root)}
        )


INBOUND_ROUTES = {
    BILLING_INGRESS_ARN: {
        "destination": BILLING_ARN,
        "deadLetterQueue": BILLING_INGRESS_DLQ_ARN,
        "receiver": "arn",
        "form": "wrapped",
    }
}


def test_an_inbound_configuration_needs_no_local_endpoints(read: Read) -> None:
    config = read(direction="inbound", routes=INBOUND_ROUTES, localEndpoints=None)
    assert config.direction == "inbound"
    assert config.local_endpoints == {}


@pytest.mark.parametrize("direction", list(RelayDirection))
def test_the_direction_is_read_into_a_relay_direction_that_writes_as_its_plain_text(
    read: Read, direction: RelayDirection
) -> None:
    """Log lines and the Relay.Rejection JSON carry the direction exactly as the file."""
    members: dict[str, Any] = {"direction": str(direction.value)}
    if direction is RelayDirection.INBOUND:
        members |= {"routes": INBOUND_ROUTES, "localEndpoints": None}

    config = read(**members)

    assert config.direction is direction
    assert json.dumps({"direction": config.direction}) == f'{{"direction": "{direction.value}"}}'
    assert f"{config.direction}" == direction.value


def test_fifo_routes_are_recognised_by_their_queue_names(read: Read) -> None:
    routes = {
        FIFO_SHADOW_ARN: {"destination": FIFO_INGRESS_ARN, "deadLetterQueue": FIFO_SHADOW_DLQ_ARN}
    }
    assert read(routes=routes).routes[FIFO_SHADOW_ARN].fifo is True


def route(
    destination: str = BILLING_INGRESS_ARN, dead_letter: str = BILLING_SHADOW_DLQ_ARN
) -> dict[str, str]:
    return {"destination": destination, "deadLetterQueue": dead_letter}


@pytest.mark.parametrize(
    ("variables", "expected"),
    [
        (
            {"RELAY_CONFIGURATION": ""},
            "RELAY_CONFIGURATION is not set; set it to the relay's configuration file in the "
            "function's code, as 'relay-config.json'",
        ),
        ({"RELAY_CONFIGURATION": "missing.json"}, "RELAY_CONFIGURATION: cannot read "),
        ({"RELAY_CONFIGURATION": "."}, "RELAY_CONFIGURATION: cannot read "),
    ],
)
def test_a_file_the_relay_cannot_read_names_the_variable_and_the_fix(
    read: Read, variables: dict[str, str], expected: str
) -> None:
    with pytest.raises(ConfigurationError) as raised:
        read(variables)
    assert str(raised.value).startswith(expected)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{not json", "is not valid JSON"),
        ("[]", "holds a JSON list, not an object with the members ['direction', 'routes', "),
        (
            json.dumps({"direction": "outbound", "routes": ROUTES, "localEndpoint": ["Sales"]}),
            "['localEndpoint'] are not members the relay reads",
        ),
        ('{"direction": "outbound", "direction": "inbound"}', "appears twice"),
    ],
)
def test_a_file_that_is_not_a_configuration_names_the_file_and_the_fix(
    task_root: Path, text: str, expected: str
) -> None:
    (task_root / FILE_NAME).write_text(text, encoding="utf-8")
    with pytest.raises(ConfigurationError) as raised:
        RelayConfig.from_environment(
            {"RELAY_CONFIGURATION": FILE_NAME, "LAMBDA_TASK_ROOT": str(task_root)}
        )
    assert str(raised.value).startswith(str(task_root / FILE_NAME))
    assert expected in str(raised.value)


@pytest.mark.parametrize(
    ("members", "expected"),
    [
        ({"direction": None}, "direction is not set"),
        ({"direction": "sideways"}, "direction is 'sideways'; set it to 'outbound'"),
        ({"direction": 1}, "direction is 1; set it to 'outbound'"),
        ({"routes": None}, "routes is not set"),
        ({"routes": []}, "routes is a JSON list, not an object"),
        ({"routes": {}}, "routes lists no queue"),
        (
            {"routes": {"Billing": route()}},
            "routes: source 'Billing' names a queue by name, which needs RELAY_HOME",
        ),
        ({"routes": {"arn:aws:sns:x": route()}}, "routes: source 'arn:aws:sns:x'"),
        (
            {"routes": {BILLING_SHADOW_ARN: BILLING_INGRESS_ARN}},
            "must be an object with the members ['deadLetterQueue', 'destination'] (and "
            "optionally ['bodyBucket', 'delayed', 'forwardUnreadable', 'maxReceiveCount']) for "
            "an outbound relay",
        ),
        (
            {"routes": {BILLING_SHADOW_ARN: {**route(), "retries": 3}}},
            "must be an object with the members",
        ),
        (
            {"routes": {BILLING_SHADOW_ARN: route(destination="https://sqs/Billing")}},
            "destination: 'https://sqs/Billing' is not an SQS queue ARN",
        ),
        (
            {"routes": {BILLING_SHADOW_ARN: route(destination="Billing-ingress")}},
            "destination: 'Billing-ingress' is not an SQS queue ARN",
        ),
        (
            {"routes": {BILLING_SHADOW_ARN: route(dead_letter="queue:Billing-dlq")}},
            "deadLetterQueue: 'queue:Billing-dlq' is neither a queue ARN",
        ),
        (
            {"routes": {BILLING_SHADOW_ARN: route(dead_letter="Billing dlq")}},
            "deadLetterQueue: ",
        ),
        (
            {"routes": {BILLING_SHADOW_ARN: route(destination=BILLING_SHADOW_ARN)}},
            "would loop",
        ),
        (
            {"routes": {BILLING_SHADOW_ARN: route(dead_letter="Billing")}},
            "would loop",
        ),
        (
            {"routes": {BILLING_SHADOW_ARN: route(destination=FIFO_INGRESS_ARN)}},
            "forward FIFO to FIFO",
        ),
        (
            {
                "routes": {
                    BILLING_SHADOW_ARN: route(
                        destination="arn:aws-cn:sqs:cn-north-1:222222222222:Billing"
                    )
                }
            },
            "SQS cannot deliver across partitions",
        ),
        (
            {"routes": {BILLING_SHADOW_ARN: route(dead_letter=BILLING_INGRESS_DLQ_ARN)}},
            "give the source queue's own redrive dead-letter queue",
        ),
        (
            {"routes": {BILLING_SHADOW_ARN: route(dead_letter=FIFO_SHADOW_DLQ_ARN)}},
            "dead-letter queue of the source's type",
        ),
        (
            {
                "routes": {
                    **ROUTES,
                    "arn:aws:sqs:eu-west-1:111111111111:Billing": route(
                        dead_letter="arn:aws:sqs:eu-west-1:111111111111:Billing-dlq"
                    ),
                }
            },
            "deploy one relay per account and region",
        ),
        ({"localEndpoints": None}, "localEndpoints is missing or empty"),
        ({"localEndpoints": []}, "localEndpoints is missing or empty"),
        ({"localEndpoints": {"Sales": SALES_ARN}}, "is a JSON dict, not an array"),
        ({"localEndpoints": [" Sales"]}, "surrounding spaces"),
        ({"localEndpoints": [7]}, "endpoint 7: the address is not text"),
        ({"localEndpoints": [SALES_ARN]}, "give the legacy transport address"),
        ({"localEndpoints": [":Sales"]}, "give the legacy transport address"),
        ({"localEndpoints": ["Sales!"]}, "endpoint 'Sales!'"),
    ],
)
def test_an_unusable_outbound_configuration_names_the_file_the_member_and_the_fix(
    read: Read, task_root: Path, members: dict[str, Any], expected: str
) -> None:
    with pytest.raises(ConfigurationError) as raised:
        read(**members)
    assert str(raised.value).startswith(f"{task_root / FILE_NAME}: ")
    assert expected in str(raised.value)


@pytest.mark.parametrize(
    ("home", "expected"),
    [
        ("111111111111", "RELAY_HOME is '111111111111'; set it to the relay's own account"),
        ("arn:aws:sqs:us-east-1:111111111111:Sales", "RELAY_HOME is 'arn:aws:sqs:us-east-1:"),
        ("arn:aws:sns:us-east-1:111111111111", "RELAY_HOME: "),
        ("arn:aws:sqs:us-east-1:1111", "RELAY_HOME: "),
    ],
)
def test_an_unusable_home_names_the_variable_and_the_fix(
    read: Read, home: str, expected: str
) -> None:
    with pytest.raises(ConfigurationError) as raised:
        read({"RELAY_HOME": home})
    assert expected in str(raised.value)


def test_a_queue_keyed_both_by_name_and_by_arn_is_refused(read: Read) -> None:
    routes = {**ROUTES, "Billing": route()}
    with pytest.raises(ConfigurationError) as raised:
        read({"RELAY_HOME": "arn:aws:sqs:us-east-1:111111111111"}, routes=routes)
    assert (
        f"routes: route for 'Billing': the queue {BILLING_SHADOW_ARN!r} also has the route for "
        f"{BILLING_SHADOW_ARN!r}; give each queue one route"
    ) in str(raised.value)


def inbound_route(destination: str = BILLING_ARN, **members: Any) -> dict[str, Any]:
    return {
        **route(destination, BILLING_INGRESS_DLQ_ARN),
        "receiver": "arn",
        "form": "wrapped",
        **members,
    }


def test_an_inbound_relay_refuses_local_endpoints(read: Read) -> None:
    routes = {BILLING_INGRESS_ARN: inbound_route()}
    with pytest.raises(ConfigurationError, match="stamps nothing: remove it"):
        read(direction="inbound", routes=routes)


def test_an_inbound_relay_delivers_only_within_its_account(read: Read) -> None:
    routes = {BILLING_INGRESS_ARN: inbound_route(SALES_ARN)}
    with pytest.raises(
        ConfigurationError, match="an inbound relay delivers to a local endpoint queue"
    ):
        read(direction="inbound", routes=routes, localEndpoints=None)


BOOKS = {"1": {"arn:aws:sqs:us-east-1:111111111111": ["Sales", "Shipping"]}}


@pytest.fixture
def read_inbound(read: Read) -> Callable[..., RelayConfig]:
    def read_inbound(books: Any = None, **members: Any) -> RelayConfig:
        return read(
            direction="inbound",
            routes={BILLING_INGRESS_ARN: inbound_route(**members)},
            localEndpoints=None,
            addressBooks=books,
        )

    return read_inbound


def test_an_inbound_route_says_how_its_endpoint_reads_addresses(
    read_inbound: Callable[..., RelayConfig],
) -> None:
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
            "which addressBooks does not hold (it has ['1'])",
        ),
        ({"receiver": "name", "addressBook": "1"}, None, "does not hold (it has [])"),
        ({"receiver": "name", "addressBook": "1"}, ["1"], "addressBooks is a JSON list, not an"),
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
            "addressBooks: book '1': 'arn:aws:sqs:us-east-1:111111111111:Sales'",
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
    read: Read, members: dict[str, Any], books: Any, expected: str
) -> None:
    route_members = {k: v for k, v in members.items() if v is not None}
    routes = {
        BILLING_INGRESS_ARN: {
            **{k: v for k, v in inbound_route().items() if k not in members},
            **route_members,
        }
    }
    with pytest.raises(ConfigurationError) as raised:
        read(direction="inbound", routes=routes, localEndpoints=None, addressBooks=books)
    assert expected in str(raised.value)


def test_an_outbound_relay_refuses_address_books(read: Read) -> None:
    with pytest.raises(
        ConfigurationError, match="addressBooks is given but direction is 'outbound'"
    ):
        read(addressBooks=BOOKS)


BILLING_DELAY_SHADOW_ARN = "arn:aws:sqs:us-east-1:111111111111:Billing-delay.fifo"
BILLING_DELAY_SHADOW_DLQ_ARN = "arn:aws:sqs:us-east-1:111111111111:Billing-delay-dlq.fifo"


def test_a_delay_queues_shadow_forwards_from_fifo_to_a_standard_ingress_queue(read: Read) -> None:
    routes = {
        **ROUTES,
        BILLING_DELAY_SHADOW_ARN: {
            "destination": BILLING_INGRESS_ARN,
            "deadLetterQueue": BILLING_DELAY_SHADOW_DLQ_ARN,
            "delayed": True,
        },
    }
    route = read(routes=routes).routes[BILLING_DELAY_SHADOW_ARN]
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
    read: Read, source: str, destination: str, delayed: object, expected: str
) -> None:
    dead_letter = (
        BILLING_DELAY_SHADOW_DLQ_ARN if source.endswith(".fifo") else BILLING_SHADOW_DLQ_ARN
    )
    routes = {
        source: {"destination": destination, "deadLetterQueue": dead_letter, "delayed": delayed}
    }
    with pytest.raises(ConfigurationError) as raised:
        read(routes=routes)
    assert expected in str(raised.value)


# The members of a route that the relay's message semantics need ------------------------------


@pytest.mark.parametrize("form", list(MessageForm))
def test_an_inbound_route_names_the_form_its_endpoint_writes(
    read_inbound: Callable[..., RelayConfig], form: MessageForm
) -> None:
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
    assert message.startswith(f"routes: route for {BILLING_INGRESS_ARN!r}: ")
    assert expected in message
    assert "DoNotWrapOutgoingMessages" in message


def test_an_outbound_route_refuses_a_form(read: Read, task_root: Path) -> None:
    routes = {BILLING_SHADOW_ARN: {**route(), "form": "wrapped"}}
    with pytest.raises(ConfigurationError) as raised:
        read(routes=routes)
    assert str(raised.value) == (
        f"{task_root / FILE_NAME}: routes: route for {BILLING_SHADOW_ARN!r}: form is for inbound "
        "routes; an outbound relay forwards each message in the form its sender wrote, and the "
        "receiving account's inbound relay delivers it in its endpoint's form: remove form"
    )


def test_routes_say_whether_unreadable_messages_go_on_and_their_receive_count(
    read: Read, read_inbound: Callable[..., RelayConfig]
) -> None:
    outbound = read(
        routes={BILLING_SHADOW_ARN: {**route(), "forwardUnreadable": True, "maxReceiveCount": 5}}
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
    read: Read,
    task_root: Path,
    members: dict[str, Any],
    expected: str,
    direction: RelayDirection,
) -> None:
    if direction is RelayDirection.OUTBOUND:
        routes = {BILLING_SHADOW_ARN: {**route(), **members}}
        file_members: dict[str, Any] = {"routes": routes}
    else:
        routes = {BILLING_INGRESS_ARN: inbound_route(**members)}
        file_members = {"direction": "inbound", "routes": routes, "localEndpoints": None}
    with pytest.raises(ConfigurationError) as raised:
        read(**file_members)
    assert str(raised.value).startswith(
        f"{task_root / FILE_NAME}: routes: route for {next(iter(routes))!r}: "
    )
    assert expected in str(raised.value)


def test_an_inbound_route_may_name_its_own_accounts_body_bucket(
    read_inbound: Callable[..., RelayConfig],
) -> None:
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
    assert str(raised.value).startswith("RELAY_BODY_BUCKET is set but direction is 'inbound'")


def test_an_inbound_routes_body_bucket_must_be_a_bucket_name(
    read_inbound: Callable[..., RelayConfig],
) -> None:
    with pytest.raises(ConfigurationError, match="bodyBucket is 'Billing_Bodies', not an S3"):
        read_inbound(bodyBucket="Billing_Bodies")
