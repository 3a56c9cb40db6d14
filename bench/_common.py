"""Shared plumbing for the benchmarks: a throwaway database, timing, tables, JSON output."""

from __future__ import annotations

import json
import os
import statistics
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))


@contextmanager
def bench_database(name: str, keep: bool = False) -> Iterator[None]:
    """A database of its own for the run (created and migrated, dropped afterwards unless kept).

    It lives on the same server as the platform: the embedded one, or DATABASE_URL's.
    """
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_platform.settings")
    os.environ["TEST_DATABASE_NAME"] = f"bench_{name}"
    import django

    django.setup()
    from django.test.utils import setup_databases, setup_test_environment, teardown_databases

    setup_test_environment(debug=False)
    old_config = setup_databases(verbosity=0, interactive=False, keepdb=keep)
    try:
        yield
    finally:
        teardown_databases(old_config, verbosity=0, keepdb=keep)


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    index = (len(ordered) - 1) * q
    low, high = int(index), min(int(index) + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (index - low)


def summary_ms(values_seconds: list[float]) -> dict[str, float]:
    ms = [v * 1000 for v in values_seconds]
    return {
        "p50": round(percentile(ms, 0.5), 2),
        "p95": round(percentile(ms, 0.95), 2),
        "mean": round(statistics.fmean(ms), 2) if ms else float("nan"),
        "n": len(ms),
    }


def print_table(title: str, header: list[str], rows: list[list[Any]]) -> None:
    cells = [header, *[[f"{c:.3f}" if isinstance(c, float) else str(c) for c in row] for row in rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    print(f"\n{title}")
    for n, row in enumerate(cells):
        print("  " + "  ".join(cell.rjust(widths[i]) for i, cell in enumerate(row)))
        if n == 0:
            print("  " + "  ".join("-" * w for w in widths))


def write_json(path: str | None, payload: dict[str, Any]) -> None:
    if not path:
        return
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(payload, indent=2))
    print(f"\nwrote {path}")
