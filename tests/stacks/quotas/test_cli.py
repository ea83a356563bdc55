"""``python -m stacks.quotas`` prints the largest use of each quota and fails on the
crossed ones."""

from __future__ import annotations

from pathlib import Path

import pytest

from stacks.quotas.__main__ import main
from tests.stacks.quotas.assemblies import (
    policy,
    resource,
    resources,
    statement,
    write_assembly,
)


def queue_policy(statements: int) -> dict[str, object]:
    document = policy(*(statement(Sid=f"Grant{i}") for i in range(statements)))
    return resources(Policy=resource("AWS::SQS::QueuePolicy", PolicyDocument=document))


def test_the_largest_use_of_each_quota_is_printed_with_its_share_and_place(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_assembly(tmp_path, {"Small": queue_policy(2), "Large": queue_policy(5)})
    assert main([str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert (
        "SQS queue policy statements: 5 of 20 statements (25%) at Large.template.json: Policy\n"
        in out
    )
    assert "CloudFormation resources per stack: 1 of 500 resources (0%) at " in out


def test_a_crossed_quota_exits_1_with_its_problem_on_standard_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_assembly(tmp_path, {"Stack": queue_policy(21)})
    assert main([str(tmp_path)]) == 1
    assert capsys.readouterr().err.startswith(
        "Stack.template.json: Policy: SQS queue policy statements: 21 > 20 statements; "
    )


def test_a_directory_that_is_no_assembly_exits_2_naming_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([str(tmp_path)]) == 2
    assert capsys.readouterr().err.startswith(f"quota gate: {tmp_path}: not a cloud assembly")
