"""The ARN header codec and the send and receive steps, example by example."""

from __future__ import annotations

import pytest

from cross_account_runtime.nservicebus.arn_header import (
    ARN_HEADER,
    ArnHeaderError,
    UnencodableEntryError,
    decode,
    encode,
    stamp_outgoing,
    substitute_incoming,
)

REPLY_TO = "NServiceBus.ReplyToAddress"
FAILED_Q = "NServiceBus.FailedQ"
SENDER_ARN = "arn:aws:sqs:us-east-2:111111111111:Sender"


def test_header_name_is_the_one_the_seed_defines() -> None:
    assert ARN_HEADER == "NServiceBus.Transport.Sqs.ARN"


def test_encode_writes_name_equals_value_pairs_separated_by_semicolons() -> None:
    assert encode({"a": "1", "b": "2"}) == "a=1;b=2"


def test_encode_keeps_the_mapping_order() -> None:
    assert encode({"b": "2", "a": "1"}) == "b=2;a=1"


def test_encode_of_no_entries_is_empty_text() -> None:
    assert encode({}) == ""


def test_encode_doubles_equals_and_semicolons_inside_names_and_values() -> None:
    assert encode({"a=b;c": "x;y=z"}) == "a==b;;c=x;;y==z"


def test_encode_allows_empty_names_and_values() -> None:
    assert encode({"": "", "a": ""}) == "=;a="


def test_decode_reads_what_encode_writes() -> None:
    assert decode("a==b;;c=x;;y==z;d=1") == {"a=b;c": "x;y=z", "d": "1"}


def test_decode_keeps_the_text_order() -> None:
    assert list(decode("b=2;a=1")) == ["b", "a"]


def test_decode_of_empty_text_is_no_entries() -> None:
    assert decode("") == {}


@pytest.mark.parametrize(
    ("entries", "text"),
    [
        ({";a": "b"}, ";;a=b"),
        ({"a": "b;"}, "a=b;;"),
        ({"a": "b;", "c": "d"}, None),
        ({"a": "=b"}, None),
        ({"a=": "b"}, None),
        ({"a": "b", ";c": "d"}, None),
    ],
)
def test_a_separator_may_touch_an_escape_only_at_the_ends_of_the_text(
    entries: dict[str, str], text: str | None
) -> None:
    if text is None:
        with pytest.raises(UnencodableEntryError):
            encode(entries)
    else:
        assert encode(entries) == text
        assert decode(text) == entries


def test_encode_refuses_a_value_starting_with_equals_and_says_why() -> None:
    with pytest.raises(UnencodableEntryError, match=r"'a'.*starts with '='") as caught:
        encode({"a": "=b"})
    assert isinstance(caught.value, ValueError)
    assert caught.value.name == "a"


def test_encode_refuses_a_name_ending_with_equals() -> None:
    with pytest.raises(UnencodableEntryError, match="ends with '='"):
        encode({"a=": "b"})


def test_encode_refuses_a_value_ending_with_semicolon_before_another_entry() -> None:
    with pytest.raises(UnencodableEntryError, match=r"'a'.*ends with ';' and another entry"):
        encode({"a": "b;", "c": "d"})


def test_encode_refuses_a_name_starting_with_semicolon_after_another_entry() -> None:
    with pytest.raises(UnencodableEntryError, match=r"';c'.*starts with ';'"):
        encode({"a": "b", ";c": "d"})


def test_encode_refuses_entries_that_are_not_text() -> None:
    with pytest.raises(UnencodableEntryError, match="must be text"):
        encode({"a": 1})  # type: ignore[dict-item]


@pytest.mark.parametrize(
    ("text", "position", "problem"),
    [
        ("abc", 0, "no '='"),
        ("a=b;c", 4, "no '='"),
        ("a=b;", 3, "ends with the separator"),
        ("a=b;;;", 5, "ends with the separator"),
        ("a;b=c", 1, "unescaped ';'"),
        ("a=b=c", 3, "unescaped '='"),
        ("a=b===c", 3, "unescaped '='"),
        ("a===b", 1, "ambiguous run of 3 '='"),
        ("===b", 0, "ambiguous run of 3 '='"),
        ("a=b;;;c=d", 3, "ambiguous run of 3 ';'"),
        ("a=1;b=2;a=3", 8, "appears twice"),
        (";", 0, "unescaped ';'"),
    ],
)
def test_decode_refuses_malformed_text_naming_position_and_problem(
    text: str, position: int, problem: str
) -> None:
    with pytest.raises(ArnHeaderError, match=problem) as caught:
        decode(text)
    assert caught.value.position == position
    assert f"position {position}" in str(caught.value)
    assert isinstance(caught.value, ValueError)


def test_decode_refuses_what_is_not_text() -> None:
    with pytest.raises(ArnHeaderError, match="expected text, got bytes"):
        decode(b"a=b")  # type: ignore[arg-type]


def test_decode_errors_quote_long_fields_shortened() -> None:
    with pytest.raises(ArnHeaderError) as caught:
        decode("x" * 10_000)
    assert len(str(caught.value)) < 400
    assert "10000 characters" in str(caught.value)


def test_stamp_adds_an_entry_for_each_header_carrying_the_local_address() -> None:
    headers = {REPLY_TO: "Sender", FAILED_Q: "Sender", "Other": "x"}
    stamped = stamp_outgoing(headers, "Sender", SENDER_ARN)
    assert stamped[ARN_HEADER] == f"{REPLY_TO}={SENDER_ARN};{FAILED_Q}={SENDER_ARN}"


def test_stamp_leaves_every_existing_header_in_place() -> None:
    headers = {REPLY_TO: "Sender", "Other": "x"}
    stamped = stamp_outgoing(headers, "Sender", SENDER_ARN)
    assert {name: stamped[name] for name in headers} == headers


def test_stamp_adds_no_arn_header_when_nothing_carries_the_local_address() -> None:
    headers = {REPLY_TO: "Someone", "Other": "x"}
    assert stamp_outgoing(headers, "Sender", SENDER_ARN) == headers


def test_stamp_keeps_an_existing_arn_header_untouched_when_nothing_matches() -> None:
    headers = {ARN_HEADER: "whatever is there", REPLY_TO: "Someone"}
    assert stamp_outgoing(headers, "Sender", SENDER_ARN) == headers


def test_stamp_merges_with_the_entries_already_there() -> None:
    other_arn = "arn:aws:sqs:us-east-2:222222222222:Other"
    headers = {ARN_HEADER: f"X={other_arn}", FAILED_Q: "Sender"}
    stamped = stamp_outgoing(headers, "Sender", SENDER_ARN)
    assert stamped[ARN_HEADER] == f"X={other_arn};{FAILED_Q}={SENDER_ARN}"


def test_stamp_replaces_an_older_entry_for_the_same_header() -> None:
    headers = {ARN_HEADER: f"{REPLY_TO}=arn:aws:sqs:us-east-2:1:Old;X=y", REPLY_TO: "Sender"}
    stamped = stamp_outgoing(headers, "Sender", SENDER_ARN)
    assert decode(stamped[ARN_HEADER]) == {REPLY_TO: SENDER_ARN, "X": "y"}


def test_stamp_does_not_modify_its_input() -> None:
    headers = {REPLY_TO: "Sender"}
    stamp_outgoing(headers, "Sender", SENDER_ARN)
    assert headers == {REPLY_TO: "Sender"}


def test_stamp_never_lists_the_arn_header_itself() -> None:
    headers = {ARN_HEADER: "X=y", REPLY_TO: "X=y"}
    stamped = stamp_outgoing(headers, "X=y", SENDER_ARN)
    assert decode(stamped[ARN_HEADER]) == {"X": "y", REPLY_TO: SENDER_ARN}


def test_stamp_refuses_a_malformed_existing_arn_header() -> None:
    with pytest.raises(ArnHeaderError):
        stamp_outgoing({ARN_HEADER: "broken", REPLY_TO: "Sender"}, "Sender", SENDER_ARN)


@pytest.mark.parametrize(("address", "arn"), [("", SENDER_ARN), ("Sender", "")])
def test_stamp_refuses_an_empty_address_or_arn(address: str, arn: str) -> None:
    with pytest.raises(ValueError, match="is empty"):
        stamp_outgoing({REPLY_TO: "Sender"}, address, arn)


def test_substitute_replaces_each_named_header_with_its_arn() -> None:
    headers = {REPLY_TO: "Sender", ARN_HEADER: f"{REPLY_TO}={SENDER_ARN}", "Other": "x"}
    assert substitute_incoming(headers) == {
        REPLY_TO: SENDER_ARN,
        ARN_HEADER: f"{REPLY_TO}={SENDER_ARN}",
        "Other": "x",
    }


def test_substitute_adds_a_named_header_absent_from_the_message() -> None:
    headers = {ARN_HEADER: f"{REPLY_TO}={SENDER_ARN}"}
    assert substitute_incoming(headers)[REPLY_TO] == SENDER_ARN


def test_substitute_without_arn_header_returns_an_equal_copy() -> None:
    headers = {REPLY_TO: "Sender"}
    substituted = substitute_incoming(headers)
    assert substituted == headers
    assert substituted is not headers


def test_substitute_does_not_modify_its_input() -> None:
    headers = {REPLY_TO: "Sender", ARN_HEADER: f"{REPLY_TO}={SENDER_ARN}"}
    substitute_incoming(headers)
    assert headers[REPLY_TO] == "Sender"


def test_substitute_refuses_an_entry_naming_the_arn_header_itself() -> None:
    text = f"{REPLY_TO}={SENDER_ARN};{ARN_HEADER}=x"
    with pytest.raises(ArnHeaderError, match=r"names the .* header itself") as caught:
        substitute_incoming({ARN_HEADER: text})
    assert caught.value.position == text.index(ARN_HEADER)


def test_substitute_refuses_a_malformed_arn_header() -> None:
    with pytest.raises(ArnHeaderError, match="position 0"):
        substitute_incoming({ARN_HEADER: "no separator"})


def test_stamp_matches_by_value_so_any_header_equal_to_the_address_is_stamped() -> None:
    headers = {REPLY_TO: "Sender", "NServiceBus.OriginatingEndpoint": "Sender"}
    stamped = stamp_outgoing(headers, "Sender", SENDER_ARN)
    assert decode(stamped[ARN_HEADER]) == {
        REPLY_TO: SENDER_ARN,
        "NServiceBus.OriginatingEndpoint": SENDER_ARN,
    }
