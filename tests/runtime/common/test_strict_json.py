"""The JSON object hook the relay's configuration and the SNS endpoint's bodies share: a name
repeated in one object is refused, at any depth, instead of silently keeping the last value."""

from __future__ import annotations

import json

import pytest

from cross_account_runtime.common.strict_json import object_without_duplicates


def test_an_object_without_repeated_names_reads_as_json_reads_it() -> None:
    text = '{"a": 1, "b": {"c": [1, {"d": null}]}, "e": "f"}'
    assert json.loads(text, object_pairs_hook=object_without_duplicates) == json.loads(text)


@pytest.mark.parametrize(
    "text",
    ['{"Type": "Notification", "Type": "SubscriptionConfirmation"}', '{"a": {"b": 1, "b": 1}}'],
    ids=["top-level", "nested-even-with-equal-values"],
)
def test_a_name_repeated_in_one_object_is_refused_with_the_name(text: str) -> None:
    with pytest.raises(ValueError, match=r"the name '(Type|b)' appears twice in one object"):
        json.loads(text, object_pairs_hook=object_without_duplicates)


def test_the_same_name_in_two_objects_is_no_repetition() -> None:
    value = json.loads('[{"a": 1}, {"a": 2}]', object_pairs_hook=object_without_duplicates)
    assert value == [{"a": 1}, {"a": 2}]
