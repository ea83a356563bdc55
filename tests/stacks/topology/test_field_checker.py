"""The field checker collects every problem with the path of its field, in document order."""

from __future__ import annotations

from stacks.topology.field_checker import FieldChecker


def test_objects_yields_each_object_item_and_names_every_other_item() -> None:
    check = FieldChecker()
    items = list(
        check.objects([{"name": "a"}, 7, {"name": "b", "colour": "red"}], "doc.items", ["name"])
    )
    assert items == [
        ("doc.items[0]", {"name": "a"}),
        ("doc.items[2]", {"name": "b", "colour": "red"}),
    ]
    assert check.problems == [
        ("doc.items[1]", "must be an object, got int"),
        ("doc.items[2].colour", "unknown field; allowed fields: name"),
    ]


def test_objects_of_something_that_is_not_a_list_is_one_problem() -> None:
    check = FieldChecker()
    assert list(check.objects({"name": "a"}, "doc.items")) == []
    assert check.problems == [("doc.items", "must be a list, got dict")]
