"""Staged folders are built apart and published whole: two synths staging the same content at
once (the tests' two workers, a team's parallel builds) both end with the one complete folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from constructs_lib._private.staging import building_folder, publish


def _build(staged: Path, pid: int, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr("os.getpid", lambda: pid)
    building = building_folder(staged)
    (building / "module.py").write_text(f"BUILT_BY = {pid}\n")
    return building


def test_two_processes_building_one_folder_each_build_their_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    staged = tmp_path / "code-0123"
    first, second = _build(staged, 100, monkeypatch), _build(staged, 200, monkeypatch)
    assert first != second
    assert [(first / "module.py").exists(), (second / "module.py").exists()] == [True, True]


def test_the_process_that_publishes_second_keeps_the_first_copy_and_discards_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    staged = tmp_path / "code-0123"
    first, second = _build(staged, 100, monkeypatch), _build(staged, 200, monkeypatch)
    publish(first, staged)
    publish(second, staged)
    assert (staged / "module.py").read_text() == "BUILT_BY = 100\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["code-0123"]


def test_a_failed_publish_with_nothing_in_place_is_raised(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="never-built"):
        publish(tmp_path / "never-built", tmp_path / "code-0123")
