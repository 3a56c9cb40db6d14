"""The embedded server gets a quarter of the machine's memory as shared_buffers, within 128 MB-1 GB."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_platform import embedded_db


@pytest.mark.parametrize(
    ("memory_mb", "expected"),
    [(256, 128), (1024, 256), (2048, 512), (4096, 1024), (64 * 1024, 1024), (0, 128)],
)
def test_shared_buffers_follow_memory(memory_mb: int, expected: int) -> None:
    assert embedded_db.shared_buffers_mb(memory_mb) == expected


def test_unknown_memory_gets_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embedded_db, "_memory_mb", lambda: None)
    assert embedded_db.shared_buffers_mb() == 128


def test_the_server_is_started_with_them(tmp_path: Path) -> None:
    options = embedded_db.server_options(embedded_db.EmbeddedServer(tmp_path))
    assert f"-c shared_buffers={embedded_db.shared_buffers_mb()}MB" in options
    assert "-c max_connections=200" in options
