"""`serve` gives its web processes and worker one metrics directory (PROMETHEUS_MULTIPROC_DIR), cleared
of what this machine's ended processes left there (their counts must not add up again), while the
files of live processes, and of other machines' replicas sharing the directory, stay."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memory_platform.management.commands.serve import _metrics_directory
from memory_platform.metrics import HOST, process_identifier

ENDED = 4194303  # above Linux's pid_max: no process has it


def test_serve_makes_the_directory_under_the_data_directory(
    monkeypatch: pytest.MonkeyPatch, settings: object, tmp_path: Path
) -> None:
    monkeypatch.delenv("PROMETHEUS_MULTIPROC_DIR", raising=False)
    settings.DATA_DIR = tmp_path  # type: ignore[attr-defined]
    stale = tmp_path / "run" / "metrics" / f"counter_{ENDED}.db"
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"from an earlier run")

    _metrics_directory()

    assert os.environ["PROMETHEUS_MULTIPROC_DIR"] == str(tmp_path / "run" / "metrics")
    assert not stale.exists()


def test_only_the_files_of_this_machines_ended_processes_are_removed(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    chosen = tmp_path / "chosen"
    chosen.mkdir()
    names = {
        "ended here": f"histogram_{HOST}-{ENDED}.db",
        "ended here, default name": f"counter_{ENDED}.db",
        "alive here": f"counter_{process_identifier()}.db",
        "another replica's": f"gauge_livesum_other-host-{ENDED}.db",
        "not ours": "keep.txt",
    }
    for name in names.values():
        (chosen / name).write_bytes(b"")
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(chosen))

    _metrics_directory()

    assert os.environ["PROMETHEUS_MULTIPROC_DIR"] == str(chosen)
    kept = {name for name in os.listdir(chosen)}
    assert kept == {names["alive here"], names["another replica's"], names["not ours"]}
