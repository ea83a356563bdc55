"""What the bridge writes into address headers: the ARN header's entries outbound, names a
released receiver resolves inbound; nothing but address headers, and only the changes."""

from __future__ import annotations

from cross_account_runtime.nservicebus.arn_header import ARN_HEADER, decode, encode
from cross_account_runtime.relay.addresses import stamp, translate

SALES_ARN = "arn:aws:sqs:us-east-1:111111111111:Sales"
ERROR_ARN = "arn:aws:sqs:us-east-1:333333333333:error"
LOCAL = {"Sales": SALES_ARN}


def test_stamping_lists_each_address_header_naming_a_local_queue_and_changes_only_the_arn_header() -> (
    None
):
    headers = {
        "NServiceBus.ReplyToAddress": "Sales",
        "NServiceBus.FailedQ": "Sales",
        "NServiceBus.OriginatingEndpoint": "Sales",
        "NServiceBus.ProcessingEndpoint": "Sales",
        "Sales.Note": "Sales",
    }
    changes, stamped = stamp(headers, LOCAL)
    assert stamped == ("NServiceBus.ReplyToAddress", "NServiceBus.FailedQ")
    assert list(changes) == [ARN_HEADER]
    assert decode(changes[ARN_HEADER]) == {
        "NServiceBus.ReplyToAddress": SALES_ARN,
        "NServiceBus.FailedQ": SALES_ARN,
    }


def test_stamping_keeps_an_earlier_hops_entries_and_changes_nothing_when_all_are_listed() -> None:
    earlier = encode({"ServiceControl.Retry.AcknowledgementQueue": ERROR_ARN})
    headers = {"NServiceBus.ReplyToAddress": "Sales", ARN_HEADER: earlier}
    changes, _ = stamp(headers, LOCAL)
    assert decode(changes[ARN_HEADER]) == {
        "ServiceControl.Retry.AcknowledgementQueue": ERROR_ARN,
        "NServiceBus.ReplyToAddress": SALES_ARN,
    }
    assert stamp({**headers, **changes}, LOCAL) == ({}, ("NServiceBus.ReplyToAddress",))


def test_stamping_a_message_without_a_local_address_changes_nothing() -> None:
    assert stamp({"NServiceBus.ReplyToAddress": "Billing"}, LOCAL) == ({}, ())


def test_translating_gives_a_reachable_queue_its_name_and_any_other_its_arn() -> None:
    elsewhere = "arn:aws:sqs:us-east-1:444444444444:Sales"
    headers = {
        "NServiceBus.ReplyToAddress": "Sales",
        "NServiceBus.FailedQ": ERROR_ARN,
        "ServiceControl.Retry.AcknowledgementQueue": "error",
        ARN_HEADER: encode(
            {
                "NServiceBus.ReplyToAddress": elsewhere,
                "ServiceControl.Retry.AcknowledgementQueue": ERROR_ARN,
            }
        ),
    }
    changes, unreachable = translate(headers, {ERROR_ARN: "error"})
    # FailedQ held the ARN a forwarding ARN-aware endpoint left: its name leads there.
    # ReplyToAddress names a queue of another account no shadow leads to: "Sales" would
    # resolve to a different queue in the receiver's account, the ARN resolves nowhere.
    assert changes == {"NServiceBus.FailedQ": "error", "NServiceBus.ReplyToAddress": elsewhere}
    assert unreachable == ("NServiceBus.ReplyToAddress",)


def test_translating_leaves_endpoint_names_and_headers_without_an_arn_alone() -> None:
    headers = {
        "NServiceBus.OriginatingEndpoint": SALES_ARN,
        "NServiceBus.ReplyToAddress": "Sales",
    }
    assert translate(headers, {}) == ({}, ())
