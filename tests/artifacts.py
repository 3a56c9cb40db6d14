"""Figures tests leave for people to read (how many requests a matrix sent, how many fuzzed inputs
each transport answered): merged into test-artifacts/<name>.json, git-ignored like the screenshots."""

from __future__ import annotations

import fcntl
import json
from pathlib import Path
from typing import Any

from django.conf import settings


def record(name: str, key: str, value: Any) -> None:
    """Set ``key`` in test-artifacts/``name``.json (xdist workers write it in turns)."""
    path = Path(settings.BASE_DIR) / "test-artifacts" / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.with_suffix(".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        recorded = json.loads(path.read_text()) if path.exists() else {}
        recorded[key] = value
        path.write_text(json.dumps(recorded, indent=2, sort_keys=True) + "\n")
