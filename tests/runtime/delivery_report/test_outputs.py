"""A local output is checked before the JVM starts: a file in the way, overlap, permissions."""

from __future__ import annotations

from pathlib import Path

import pytest

from cross_account_runtime.delivery_report.errors import OutputUnwritableError
from cross_account_runtime.delivery_report.outputs import check_local_output


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "logs" / "day").mkdir(parents=True)
    (tmp_path / "a-file").write_text("in the way")
    return tmp_path


@pytest.mark.parametrize(
    ("output", "inputs", "cause"),
    [
        ("a-file", ["logs"], "is a file, not a directory"),
        ("file:{tmp}/a-file", ["logs"], "is a file, not a directory"),
        ("a-file/out", ["logs"], "is under {tmp}/a-file, which is a file, not a directory"),
        ("logs", ["logs"], "overlaps the input logs"),
        ("logs/day/out", ["{tmp}/logs"], "overlaps the input {tmp}/logs"),
        ("out", ["out/day"], "overlaps the input out/day"),
        ("/proc/delivery-report", ["logs"], "cannot be written: "),
    ],
)
def test_an_output_that_cannot_take_the_report_is_refused(
    output: str, inputs: list[str], cause: str, tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tree)
    with pytest.raises(OutputUnwritableError) as refused:
        check_local_output(
            output.replace("{tmp}", str(tree)), [i.replace("{tmp}", str(tree)) for i in inputs]
        )
    assert refused.value.cause.startswith(cause.replace("{tmp}", str(tree)))


@pytest.mark.parametrize(
    "output", ["new/report", "logs-report", "s3://bucket/reports/", "s3a://bucket/logs"]
)
def test_a_usable_or_remote_output_passes(
    output: str, tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tree)
    check_local_output(output, ["logs", "s3://bucket/logs"])
    assert "://" in output or (tree / output).is_dir()
