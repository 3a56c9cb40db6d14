"""Shared plumbing for the benchmarks: a throwaway database, timing, tables, JSON output."""

from __future__ import annotations

import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
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
        "p99": round(percentile(ms, 0.99), 2),
        "max": round(max(ms), 2) if ms else float("nan"),
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


def recorded() -> dict[str, Any]:
    """When, from which commit and on what machine a result was measured (kept in its JSON)."""
    executable = shutil.which("git")

    def git(*args: str) -> str:
        if executable is None:
            return ""
        try:
            done = subprocess.run([executable, *args], cwd=REPO, capture_output=True, text=True, check=True)
        except (OSError, subprocess.CalledProcessError):
            return ""
        return done.stdout.strip()

    return {
        "at": datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
        "commit": git("rev-parse", "--short=12", "HEAD") or None,
        "uncommitted_changes": bool(git("status", "--porcelain", "--untracked-files=no")),
        "command": " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
    }


def write_json(path: str | None, payload: dict[str, Any]) -> None:
    """Write a result, with ``recorded()`` as its "recorded" key. Results kept in the repository live
    under bench/results/<date>/ (bench/results/README.md)."""
    if not path:
        return
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps({**payload, "recorded": recorded()}, indent=2) + "\n")
    print(f"\nwrote {path}")


_test_environment_ready = False


@contextmanager
def scratch_database(name: str, keep: bool = False) -> Iterator[None]:
    """Like ``bench_database``, for benches that need several databases in one process.

    May be entered once per name (``bench_<name>``), one after the other. It skips Django's
    serialisation of the database contents, which on a kept database of 100k memories would read
    every row back before the run starts.
    """
    global _test_environment_ready  # noqa: PLW0603 - Django's test environment is process state
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_platform.settings")
    import django

    django.setup()
    from django.db import connections
    from django.test.utils import setup_databases, setup_test_environment, teardown_databases

    if not _test_environment_ready:
        setup_test_environment(debug=False)
        _test_environment_ready = True
    connections["default"].settings_dict["TEST"]["NAME"] = f"bench_{name}"
    old_config = setup_databases(verbosity=0, interactive=False, keepdb=keep, serialized_aliases=set())
    try:
        yield
    finally:
        connections["default"].close()
        teardown_databases(old_config, verbosity=0, keepdb=keep)


def _busy_jiffies() -> int:
    fields = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    user, nice, system, _idle, _iowait, irq, softirq, steal = fields[:8]
    return user + nice + system + irq + softirq + steal


def _process_jiffies(pid: int) -> int:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0
    return int(fields[11]) + int(fields[12])  # utime + stime


class CpuMeter:
    """Where the machine's CPU went during a phase: this process, its database backend, the rest.

    The benches run on shared machines; "other" is the CPU that other work took meanwhile, in
    cores (2.0 = two cores fully busy). Linux only; on other systems every figure is 0.
    """

    def __init__(self, backend_pid: int | None = None) -> None:
        self.backend_pid = backend_pid
        self.available = Path("/proc/stat").exists()
        self._tick = os.sysconf("SC_CLK_TCK") if self.available else 100

    def __enter__(self) -> CpuMeter:
        import time

        self._started = time.perf_counter()
        self._load_before = os.getloadavg()[0]
        if self.available:
            self._busy = _busy_jiffies()
            self._own = _process_jiffies(os.getpid())
            self._backend = _process_jiffies(self.backend_pid) if self.backend_pid else 0
        return self

    def __exit__(self, *exc: object) -> None:
        import time

        wall = self.wall = max(time.perf_counter() - self._started, 1e-9)
        self.result: dict[str, float] = {
            "cpus": os.cpu_count() or 1,
            "loadavg_1m_before": round(self._load_before, 2),
            "loadavg_1m_after": round(os.getloadavg()[0], 2),
        }
        if self.available:
            busy = (_busy_jiffies() - self._busy) / self._tick / wall
            own = (_process_jiffies(os.getpid()) - self._own) / self._tick / wall
            backend = (
                (_process_jiffies(self.backend_pid) - self._backend) / self._tick / wall if self.backend_pid else 0.0
            )
            self.result.update(
                {
                    "busy_cores": round(busy, 2),
                    "bench_cores": round(own, 2),
                    "postgres_cores": round(backend, 2),
                    "other_cores": round(max(busy - own - backend, 0.0), 2),
                }
            )


def backend_pid() -> int | None:
    """The PID of the database backend serving this process (for CpuMeter), if it is local."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = int(cursor.fetchone()[0])
    return pid if Path(f"/proc/{pid}").exists() else None


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def database_url() -> str:
    """The URL of the database a bench_database block set up (for a server started on it)."""
    from django.db import connection

    settings = connection.settings_dict
    return f"postgresql://{settings['USER']}@/{settings['NAME']}?host={settings['HOST']}"
