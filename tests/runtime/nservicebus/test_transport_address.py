"""Transport addresses: forms, ARNs, queue URLs, queue names and per-endpoint locations."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cross_account_runtime.nservicebus.locations import AddressError, Location, partition_of_region
from cross_account_runtime.nservicebus.queue_arn import (
    QueueArn,
    check_queue_name,
    parse_queue_arn,
    queue_arn_from_url,
)
from cross_account_runtime.nservicebus.queue_name_generator import (
    NonIdempotentGeneratorError,
    QueueNaming,
    check_queue_name_prefix,
    default_queue_name,
)
from cross_account_runtime.nservicebus.redrive import dead_letter_queue_problem
from cross_account_runtime.nservicebus.transport_address import (
    ENV_ACCOUNT_ID,
    ENV_DEFAULT_REGION,
    ENV_ENDPOINT_ACCOUNTS,
    ENV_ENDPOINT_REGIONS,
    ENV_QUEUE_NAME_PREFIX,
    ENV_REGION,
    Addressing,
    EndpointLocations,
    address_form,
    addressing_from_environment,
)

ACCOUNT = "111111111111"
ACCOUNT2 = "222222222222"
LOCAL = Location(ACCOUNT, "us-east-2")


# --- address forms -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("address", "form"),
    [
        ("arn:aws:sqs:us-east-2:111111111111:MyQueue", "arn"),
        (":MyQueue", "local"),
        ("MyQueue", "prefixed"),
    ],
)
def test_the_leading_characters_decide_the_address_form(address: str, form: str) -> None:
    assert address_form(address) == form


def test_an_empty_address_has_no_form() -> None:
    with pytest.raises(AddressError, match="empty"):
        address_form("")


def test_an_arn_address_resolves_to_exactly_that_queue_wherever_it_is() -> None:
    addressing = Addressing(LOCAL, naming=QueueNaming("dev-"))
    arn = "arn:aws:sqs:eu-west-1:222222222222:Other"
    assert str(addressing.resolve(arn)) == arn


def test_a_colon_address_is_a_local_queue_taken_without_the_prefix() -> None:
    addressing = Addressing(LOCAL, naming=QueueNaming("dev-"))
    assert str(addressing.resolve(":MyQueue")) == "arn:aws:sqs:us-east-2:111111111111:MyQueue"


def test_a_bare_name_is_a_local_queue_named_by_the_generator_with_the_prefix() -> None:
    addressing = Addressing(LOCAL, naming=QueueNaming("dev-"))
    assert str(addressing.resolve("MyQueue")) == "arn:aws:sqs:us-east-2:111111111111:dev-MyQueue"


def test_a_bare_name_that_already_has_the_prefix_is_not_prefixed_again() -> None:
    addressing = Addressing(LOCAL, naming=QueueNaming("dev-"))
    assert addressing.resolve("dev-MyQueue") == addressing.resolve("MyQueue")


def test_the_colon_form_is_refused_when_read_from_the_wire() -> None:
    with pytest.raises(AddressError, match="never appears in a message header"):
        Addressing(LOCAL).resolve(":MyQueue", on_wire=True)


def test_the_colon_form_needs_a_valid_queue_name() -> None:
    with pytest.raises(AddressError, match=r"'\.' at position 2"):
        Addressing(LOCAL).resolve(":My.Queue")


# --- endpoint locations (UseAccountForEndpoint / UseRegionForEndpoint) ---------------------


def test_an_unmapped_endpoint_lives_in_the_local_account_and_region() -> None:
    arn = Addressing(LOCAL).endpoint_arn("Receiver")
    assert str(arn) == "arn:aws:sqs:us-east-2:111111111111:Receiver"


def test_use_account_for_endpoint_moves_only_that_endpoint() -> None:
    locations = EndpointLocations().use_account_for_endpoint("Receiver", ACCOUNT2)
    addressing = Addressing(LOCAL, locations)
    assert str(addressing.endpoint_arn("Receiver")) == "arn:aws:sqs:us-east-2:222222222222:Receiver"
    assert addressing.endpoint_arn("Other").account == ACCOUNT


def test_use_region_for_endpoint_moves_only_that_endpoint() -> None:
    locations = EndpointLocations().use_region_for_endpoint("Receiver", "eu-west-1")
    arn = Addressing(LOCAL, locations).endpoint_arn("Receiver")
    assert (arn.account, arn.region) == (ACCOUNT, "eu-west-1")


def test_endpoint_arn_applies_the_prefix_through_the_generator() -> None:
    addressing = Addressing(LOCAL, naming=QueueNaming("prod-"))
    assert addressing.endpoint_arn("Sales.Orders").name == "prod-Sales-Orders"


def test_mapping_an_endpoint_gives_new_locations_and_leaves_the_old_ones_alone() -> None:
    empty = EndpointLocations()
    empty.use_account_for_endpoint("Receiver", ACCOUNT2)
    assert empty == EndpointLocations()


def test_an_endpoint_cannot_be_mapped_to_two_accounts() -> None:
    locations = EndpointLocations().use_account_for_endpoint("Receiver", ACCOUNT2)
    with pytest.raises(AddressError, match="already in account '222222222222'"):
        locations.use_account_for_endpoint("Receiver", "333333333333")


def test_mapping_an_endpoint_again_to_the_same_account_is_harmless() -> None:
    locations = EndpointLocations().use_account_for_endpoint("Receiver", ACCOUNT2)
    assert locations.use_account_for_endpoint("Receiver", ACCOUNT2) == locations


@pytest.mark.parametrize("account", ["12345", "abcdefghijkl", "1234567890123", ""])
def test_use_account_for_endpoint_refuses_what_is_not_an_account_id(account: str) -> None:
    with pytest.raises(AddressError, match="12 digits"):
        EndpointLocations().use_account_for_endpoint("Receiver", account)


def test_use_region_for_endpoint_refuses_what_is_not_a_region() -> None:
    with pytest.raises(AddressError, match="like 'us-east-2'"):
        EndpointLocations().use_region_for_endpoint("Receiver", "US East")


def test_an_endpoint_in_another_partition_is_refused() -> None:
    locations = EndpointLocations().use_region_for_endpoint("Receiver", "cn-north-1")
    with pytest.raises(AddressError, match="across partitions"):
        Addressing(LOCAL, locations).endpoint_arn("Receiver")


# --- environment variables -----------------------------------------------------------------

BASE_ENVIRONMENT = {ENV_REGION: "us-east-2", ENV_ACCOUNT_ID: ACCOUNT}


def test_environment_variables_have_the_documented_names() -> None:
    assert (ENV_ENDPOINT_ACCOUNTS, ENV_ENDPOINT_REGIONS, ENV_QUEUE_NAME_PREFIX) == (
        "NSB_SQS_ENDPOINT_ACCOUNTS",
        "NSB_SQS_ENDPOINT_REGIONS",
        "NSB_SQS_QUEUE_NAME_PREFIX",
    )
    assert (ENV_ACCOUNT_ID, ENV_REGION, ENV_DEFAULT_REGION) == (
        "AWS_ACCOUNT_ID",
        "AWS_REGION",
        "AWS_DEFAULT_REGION",
    )


def test_environment_configures_accounts_regions_and_prefix() -> None:
    addressing = addressing_from_environment(
        BASE_ENVIRONMENT
        | {
            ENV_ENDPOINT_ACCOUNTS: "Receiver=222222222222, Billing = 333333333333",
            ENV_ENDPOINT_REGIONS: "Billing=eu-west-1",
            ENV_QUEUE_NAME_PREFIX: "prod-",
        }
    )
    assert str(addressing.endpoint_arn("Receiver")) == (
        "arn:aws:sqs:us-east-2:222222222222:prod-Receiver"
    )
    assert str(addressing.endpoint_arn("Billing")) == (
        "arn:aws:sqs:eu-west-1:333333333333:prod-Billing"
    )


def test_environment_falls_back_to_aws_default_region() -> None:
    addressing = addressing_from_environment(
        {ENV_DEFAULT_REGION: "eu-west-1", ENV_ACCOUNT_ID: ACCOUNT}
    )
    assert addressing.local == Location(ACCOUNT, "eu-west-1")


def test_environment_without_region_is_refused_naming_both_variables() -> None:
    with pytest.raises(AddressError, match="AWS_REGION nor AWS_DEFAULT_REGION"):
        addressing_from_environment({ENV_ACCOUNT_ID: ACCOUNT})


def test_environment_without_account_is_refused_naming_the_variable() -> None:
    with pytest.raises(AddressError, match="AWS_ACCOUNT_ID is not set"):
        addressing_from_environment({ENV_REGION: "us-east-2"})


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("Receiver", "item 1 'Receiver' is not 'Endpoint=value'"),
        ("A=222222222222,,B=222222222222", "item 2"),
        ("A=222222222222,A=222222222222", "appears twice"),
        ("A=2222", "12 digits"),
    ],
)
def test_malformed_endpoint_accounts_are_refused_naming_the_variable(
    value: str, problem: str
) -> None:
    with pytest.raises(AddressError, match=f"^{ENV_ENDPOINT_ACCOUNTS}: .*{problem}"):
        addressing_from_environment(BASE_ENVIRONMENT | {ENV_ENDPOINT_ACCOUNTS: value})


def test_a_bad_prefix_in_the_environment_is_refused_naming_the_variable() -> None:
    with pytest.raises(AddressError, match=f"^{ENV_QUEUE_NAME_PREFIX}: .*position 2"):
        addressing_from_environment(BASE_ENVIRONMENT | {ENV_QUEUE_NAME_PREFIX: "my.app-"})


def test_environment_uses_a_custom_generator_when_given_one() -> None:
    def lower(destination: str, prefix: str) -> str:
        return default_queue_name(destination, prefix).lower()

    addressing = addressing_from_environment(BASE_ENVIRONMENT, lower)
    assert addressing.endpoint_arn("Receiver").name == "receiver"


# --- ARNs and queue URLs --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("arn", "url"),
    [
        (
            "arn:aws:sqs:us-east-2:111111111111:MyQueue",
            "https://sqs.us-east-2.amazonaws.com/111111111111/MyQueue",
        ),
        (
            "arn:aws-cn:sqs:cn-north-1:111111111111:MyQueue.fifo",
            "https://sqs.cn-north-1.amazonaws.com.cn/111111111111/MyQueue.fifo",
        ),
        (
            "arn:aws-us-gov:sqs:us-gov-west-1:111111111111:MyQueue",
            "https://sqs.us-gov-west-1.amazonaws.com/111111111111/MyQueue",
        ),
    ],
)
def test_queue_url_and_arn_convert_into_each_other_in_every_partition(arn: str, url: str) -> None:
    assert parse_queue_arn(arn).url == url
    assert str(queue_arn_from_url(url)) == arn


@pytest.mark.parametrize(
    ("url", "arn"),
    [
        (
            "https://queue.amazonaws.com/111111111111/MyQueue",
            "arn:aws:sqs:us-east-1:111111111111:MyQueue",
        ),
        (
            "https://eu-west-1.queue.amazonaws.com/111111111111/MyQueue",
            "arn:aws:sqs:eu-west-1:111111111111:MyQueue",
        ),
        (
            "http://SQS.us-east-2.AMAZONAWS.com/111111111111/MyQueue",
            "arn:aws:sqs:us-east-2:111111111111:MyQueue",
        ),
    ],
)
def test_legacy_queue_hosts_are_understood(url: str, arn: str) -> None:
    assert str(queue_arn_from_url(url)) == arn


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("sqs.us-east-2.amazonaws.com/111111111111/Q", "not a queue URL"),
        ("ftp://sqs.us-east-2.amazonaws.com/111111111111/Q", "not a queue URL"),
        ("https://sqs.us-east-2.amazonaws.com/111111111111", "must end in"),
        ("https://sqs.us-east-2.amazonaws.com/111111111111/Q/", "must end in"),
        ("https://sqs.us-east-2.amazonaws.com/111111111111/Q?x=1", "must end in"),
        ("https://example.com/111111111111/Q", "not an SQS host"),
        ("https://s3.us-east-2.amazonaws.com/111111111111/Q", "not an SQS host"),
        ("https://sqs.cn-north-1.amazonaws.com/111111111111/Q", "partition 'aws-cn'"),
        ("https://sqs.us-east-2.amazonaws.com/1111/Q", "12 digits"),
        ("https://sqs.us-east-2.amazonaws.com/111111111111/Q.x", r"'\.' at position 1"),
    ],
)
def test_queue_urls_that_are_not_sqs_queues_are_refused(url: str, problem: str) -> None:
    with pytest.raises(AddressError, match=problem):
        queue_arn_from_url(url)


@pytest.mark.parametrize(
    ("arn", "problem"),
    [
        ("arn:aws:sqs:us-east-2:111111111111", "not an SQS queue ARN"),
        ("arn:aws:sns:us-east-2:111111111111:Topic", "service 'sns'"),
        ("arn:aws-cn:sqs:us-east-2:111111111111:Q", "not in partition 'aws-cn'"),
        ("arn:aws-iso:sqs:us-iso-east-1:111111111111:Q", "not supported"),
        ("arn:aws:sqs:useast2:111111111111:Q", "like 'us-east-2'"),
        ("arn:aws:sqs:us-east-2:111111111111:" + "q" * 81, "at most 80"),
    ],
)
def test_arns_that_are_not_sqs_queues_are_refused(arn: str, problem: str) -> None:
    with pytest.raises(AddressError, match=problem):
        parse_queue_arn(arn)


@pytest.mark.parametrize(
    ("region", "partition"),
    [("us-east-1", "aws"), ("cn-northwest-1", "aws-cn"), ("us-gov-east-1", "aws-us-gov")],
)
def test_the_partition_follows_from_the_region(region: str, partition: str) -> None:
    assert partition_of_region(region) == partition


def test_isolated_partitions_are_refused() -> None:
    with pytest.raises(AddressError, match="isolated partition"):
        partition_of_region("us-isob-east-1")


def test_queue_arns_are_values() -> None:
    arn = QueueArn("aws", "us-east-2", ACCOUNT, "Q")
    assert arn == parse_queue_arn(str(arn))
    assert len({arn, parse_queue_arn(str(arn))}) == 1
    with pytest.raises(AttributeError, match="immutable"):
        arn.name = "Other"


# --- queue names ----------------------------------------------------------------------------


def test_default_generator_adds_the_prefix() -> None:
    assert default_queue_name("Orders", "dev-") == "dev-Orders"


def test_default_generator_does_not_add_a_prefix_that_is_already_there() -> None:
    assert default_queue_name("dev-Orders", "dev-") == "dev-Orders"


def test_default_generator_replaces_other_characters_with_hyphens() -> None:
    assert default_queue_name("Sales.Orders@v2", "") == "Sales-Orders-v2"


def test_default_generator_keeps_a_fifo_suffix() -> None:
    assert default_queue_name("Sales.Orders.fifo", "dev-") == "dev-Sales-Orders.fifo"


def test_default_generator_refuses_names_longer_than_80_characters() -> None:
    assert len(default_queue_name("q" * 76, "dev-")) == 80
    with pytest.raises(AddressError, match="81 characters"):
        default_queue_name("q" * 77, "dev-")


def test_default_generator_refuses_an_empty_destination() -> None:
    with pytest.raises(AddressError, match="empty"):
        default_queue_name("  ", "dev-")


def test_default_generator_keeps_non_ascii_letters_which_sqs_refuses_naming_the_position() -> None:
    name = default_queue_name("Zürich", "dev-")
    assert name == "dev-Zürich"
    with pytest.raises(AddressError, match=r"'ü' \(U\+00FC\) at position 5"):
        check_queue_name(name)


def test_a_prefix_the_default_generator_would_rewrite_is_refused_where_names_are_made() -> None:
    assert default_queue_name("Orders", "my.app-") == "my-app-Orders"
    with pytest.raises(NonIdempotentGeneratorError, match="no longer recognise its own names"):
        check_queue_name_prefix("my.app-")
    with pytest.raises(NonIdempotentGeneratorError, match="no longer recognise its own names"):
        QueueNaming("my.app-")


@given(
    st.text(alphabet="abAB09-_.@ :", min_size=1, max_size=30).filter(str.strip),
    st.text(alphabet="abAB09-_", max_size=8),
)
def test_default_generator_is_idempotent(destination: str, prefix: str) -> None:
    name = default_queue_name(destination, prefix)
    assert default_queue_name(name, prefix) == name
    assert check_queue_name(name) == name


def test_a_custom_generator_that_is_not_idempotent_is_refused_when_configured() -> None:
    def always_prefix(destination: str, prefix: str) -> str:
        return prefix + destination

    with pytest.raises(NonIdempotentGeneratorError, match="not idempotent") as caught:
        QueueNaming("dev-", always_prefix)
    assert "'dev-dev-MyEndpoint'" in str(caught.value)


def test_a_custom_generator_is_checked_again_on_every_name_it_makes() -> None:
    def idempotent_except_for_billing(destination: str, prefix: str) -> str:
        if destination.endswith("Billing"):
            return prefix + destination
        return default_queue_name(destination, prefix)

    naming = QueueNaming("dev-", idempotent_except_for_billing)
    with pytest.raises(NonIdempotentGeneratorError):
        naming.queue_name("Billing")


def test_a_custom_generator_is_probed_for_idempotence_only_real_names_must_be_valid() -> None:
    def keep_dots(destination: str, prefix: str) -> str:
        return destination if destination.startswith(prefix) else prefix + destination

    # Upstream's own idempotent generator: the probe "Sales.Orders" keeps its dot, which only
    # a real queue's name would have to lose.
    naming = QueueNaming("dev-", keep_dots)
    assert naming.queue_name("Billing") == "dev-Billing"
    with pytest.raises(AddressError, match=r"generated from 'Sales\.Orders'"):
        naming.queue_name("Sales.Orders")


def test_a_custom_generator_that_returns_no_text_is_refused_naming_what_it_returned() -> None:
    with pytest.raises(AddressError, match="returned NoneType for 'MyEndpoint'"):
        QueueNaming("dev-", lambda _destination, _prefix: None)  # type: ignore[arg-type,return-value]


def test_an_idempotent_custom_generator_is_accepted() -> None:
    def lower(destination: str, prefix: str) -> str:
        return default_queue_name(destination, prefix).lower()

    assert QueueNaming("dev-", lower).queue_name("Sales.Orders") == "dev-sales-orders"


@pytest.mark.parametrize(
    ("queue", "dead_letter", "rule"),
    [
        ("Sales", "arn:aws:sqs:us-east-1:111111111111:Sales-dlq", None),
        ("Sales.fifo", "arn:aws:sqs:us-east-1:111111111111:Sales-dlq.fifo", None),
        ("Sales", "arn:aws:sqs:us-east-2:111111111111:Sales-dlq", "must be in the account"),
        ("Sales", "arn:aws:sqs:us-east-1:222222222222:Sales-dlq", "must be in the account"),
        ("Sales", "arn:aws:sqs:us-east-1:111111111111:Sales-dlq.fifo", "is a FIFO queue but"),
        ("Sales.fifo", "arn:aws:sqs:us-east-1:111111111111:Sales-dlq", "is a standard queue but"),
    ],
)
def test_sqs_redrives_only_within_the_account_region_and_type_of_the_source(
    queue: str, dead_letter: str, rule: str | None
) -> None:
    source = parse_queue_arn(f"arn:aws:sqs:us-east-1:111111111111:{queue}")
    problem = dead_letter_queue_problem(source, parse_queue_arn(dead_letter))
    assert (problem is None) == (rule is None)
    assert rule is None or (problem is not None and rule in problem)
