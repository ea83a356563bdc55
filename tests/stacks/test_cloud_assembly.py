"""The cloud assembly's stacks as every report reads them: each with its account and region, and
a folder that is no assembly or a stack without a concrete environment refused with the reader's
own error and reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from stacks.cloud_assembly import read_cloud_assembly


class ReaderError(ValueError):
    """A reader's own error."""


def test_the_stacks_come_with_their_account_and_region(example_assembly: Path) -> None:
    assembly = read_cloud_assembly(example_assembly, ReaderError, "the reader needs them")
    assert {(s.name, s.account, s.region) for s in assembly.stacks} >= {
        ("Messaging-Sales", "111111111111", "us-east-1"),
        ("Messaging-Ops", "333333333333", "us-east-1"),
    }
    for stack in assembly.stacks:
        assert (assembly.root / stack.template_file).is_file()


def test_a_folder_without_a_manifest_is_refused_with_the_readers_error(tmp_path: Path) -> None:
    with pytest.raises(ReaderError, match=r"not a cloud assembly .*; run the synth first"):
        read_cloud_assembly(tmp_path, ReaderError, "the reader needs them")


@pytest.mark.parametrize(
    "environment",
    ["aws://unknown-account/unknown-region", "aws://111111111111/unknown-region", "aws://1"],
)
def test_a_stack_without_a_concrete_environment_is_refused_saying_why(
    tmp_path: Path, environment: str
) -> None:
    (tmp_path / "manifest.json").write_text(
        '{"artifacts": {"Agnostic": {"type": "aws:cloudformation:stack", "environment": "'
        + environment
        + '", "properties": {"templateFile": "Agnostic.template.json"}}}}'
    )
    with pytest.raises(
        ReaderError, match=r"^Agnostic: environment .* is not concrete; the reader needs them$"
    ):
        read_cloud_assembly(tmp_path, ReaderError, "the reader needs them")
