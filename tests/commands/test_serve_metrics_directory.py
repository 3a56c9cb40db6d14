"""`serve` gives its web processes and worker one metrics directory (PROMETHEUS_MULTIPROC_DIR), emptied
of what an earlier run left there: counts of processes that are gone must not add up again."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memory_platform.management.commands.serve import _metrics_directory


def test_serve_makes_the_directory_under_the_data_directory(
    monkeypatch: pytest.MonkeyPatch, settings: object, tmp_path: Path
) -> None:
    monkeypatch.delenv("PROMETHEUS_MULTIPROC_DIR", raising=False)
    settings.DATA_DIR = tmp_path  # type: ignore[attr-defined]
    stale = tmp_path / "run" / "metrics" / "counter_4242.db"
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"from an earlier run")

    _metrics_directory()

    assert os.environ["PROMETHEUS_MULTIPROC_DIR"] == str(tmp_path / "run" / "metrics")
    assert not stale.exists()


def test_a_directory_the_operator_chose_is_used_and_emptied(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    chosen = tmp_path / "chosen"
    chosen.mkdir()
    (chosen / "histogram_77.db").write_bytes(b"old")
    (chosen / "keep.txt").write_text("not ours")
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(chosen))

    _metrics_directory()

    assert os.environ["PROMETHEUS_MULTIPROC_DIR"] == str(chosen)
    assert sorted(path.name for path in chosen.iterdir()) == ["keep.txt"]
