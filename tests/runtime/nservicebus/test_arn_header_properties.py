"""Properties of the ARN header codec over generated input (hypothesis)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from cross_account_runtime.nservicebus.arn_header import (
    ARN_HEADER,
    ArnHeaderError,
    UnencodableEntryError,
    decode,
    encode,
    stamp_outgoing,
    substitute_incoming,
)

# Text rich in the two special characters finds the escaping's corner cases quickly; general
# text covers everything else.
tricky_text = st.text(alphabet="=;a", max_size=6) | st.text(max_size=12)
mappings = st.dictionaries(tricky_text, tricky_text, max_size=5)


def _touches_a_separator(entries: dict[str, str]) -> bool:
    """The rule: does some separator touch an escaped copy of itself?"""
    items = list(entries.items())
    for index, (name, value) in enumerate(items):
        if name.endswith("=") or value.startswith("="):
            return True
        if index and name.startswith(";"):
            return True
        if index < len(items) - 1 and value.endswith(";"):
            return True
    return False


def _unchecked_encoding(entries: dict[str, str]) -> str:
    """The seed's format applied without refusing anything."""
    escape = {ord("="): "==", ord(";"): ";;"}
    return ";".join(f"{n.translate(escape)}={v.translate(escape)}" for n, v in entries.items())


@given(mappings)
def test_every_accepted_mapping_round_trips(entries: dict[str, str]) -> None:
    try:
        text = encode(entries)
    except UnencodableEntryError:
        return
    decoded = decode(text)
    assert decoded == entries
    assert list(decoded) == list(entries)


@given(mappings)
def test_encode_refuses_exactly_the_mappings_whose_separators_touch_an_escape(
    entries: dict[str, str],
) -> None:
    try:
        encode(entries)
    except UnencodableEntryError:
        refused = True
    else:
        refused = False
    assert refused == _touches_a_separator(entries)


@given(mappings)
def test_refused_mappings_have_text_that_decode_refuses_as_well(entries: dict[str, str]) -> None:
    if not _touches_a_separator(entries):
        return
    try:
        decoded = decode(_unchecked_encoding(entries))
    except ArnHeaderError:
        return
    raise AssertionError(f"ambiguous text read as {decoded!r}")


@given(st.text(alphabet="=;ab", max_size=12) | st.text())
def test_decode_of_any_text_returns_or_raises_arn_header_error(text: str) -> None:
    try:
        decode(text)
    except ArnHeaderError as error:
        position = error.position
    else:
        return
    assert 0 <= position <= len(text)


@given(st.text(alphabet="=;ab", max_size=12))
def test_decoded_text_is_the_only_spelling_of_its_entries(text: str) -> None:
    try:
        entries = decode(text)
    except ArnHeaderError:
        return
    assert encode(entries) == text


header_names = st.text(min_size=1, max_size=10).filter(
    lambda name: name != ARN_HEADER and not name.startswith(";") and not name.endswith("=")
)
header_values = st.sampled_from(["MyEndpoint", "Other", ""]) | st.text(max_size=10)
addresses = st.text(min_size=1, max_size=10)
arns = st.text(alphabet="=;:a", min_size=1, max_size=8).filter(
    lambda arn: not arn.startswith("=") and not arn.endswith(";")
)


@given(st.dictionaries(header_names, header_values, max_size=8), addresses, arns)
def test_stamp_then_substitute_gives_the_arn_to_exactly_the_headers_with_the_address(
    headers: dict[str, str], local_address: str, local_arn: str
) -> None:
    received = substitute_incoming(stamp_outgoing(headers, local_address, local_arn))
    received.pop(ARN_HEADER, None)
    expected = {
        name: local_arn if value == local_address else value for name, value in headers.items()
    }
    assert received == expected


@given(st.dictionaries(header_names, header_values, max_size=8), addresses, arns)
def test_stamp_adds_the_arn_header_only_when_a_header_carries_the_address(
    headers: dict[str, str], local_address: str, local_arn: str
) -> None:
    stamped = stamp_outgoing(headers, local_address, local_arn)
    assert (ARN_HEADER in stamped) == (local_address in headers.values())
