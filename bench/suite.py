"""What the test suite costs: its wall time and the CPU it takes, by whom.

Runs ``python -m pytest`` as ``make test`` does (not the lint, types and docs build before it) and
reports the wall time; the CPU of the test processes and of every process they waited for
(workers, web servers, Celery workers, stdio servers, commands); the CPU of the platform's database
server (the embedded one: its backends' CPU comes back to it as they end); and the CPU the whole
machine was busy for meanwhile, which also holds the servers tests start as daemons of their own
(the replica, the production topology) and anything else running: measure on an idle machine. On
two cores the wall time cannot be under half the machine's CPU.

    python bench/suite.py --json bench/results/$(date +%F)/suite.json [--files 30] [-- PYTEST ARGUMENTS]

``--files N`` adds the N test files that cost the most CPU (bench/suite_files.py measures them):
what to make cheaper first.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import REPO, _busy_jiffies, _process_jiffies, print_table, write_json

OUTCOME = re.compile(r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed)")


def _server_jiffies(data_dir: Path) -> int:
    """CPU of the embedded database server: its postmaster and the processes it has waited for."""
    try:
        pid = int((data_dir / "postmaster.pid").read_text().split()[0])
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, ValueError, IndexError):
        return 0
    return sum(int(value) for value in fields[11:15])  # utime, stime, cutime, cstime


def _costliest_files(directory: Path, count: int) -> list[dict[str, Any]]:
    """The ``count`` files of the most CPU, from what every test process wrote (bench/suite_files.py)."""
    files: dict[str, dict[str, float]] = {}
    for path in directory.glob("*.json"):
        for name, entry in json.loads(path.read_text()).items():
            total = files.setdefault(name, {"cpu_s": 0.0, "wall_s": 0.0, "tests": 0})
            for key in total:
                total[key] += entry[key]
    ranked = sorted(files.items(), key=lambda item: item[1]["cpu_s"], reverse=True)[:count]
    return [{"file": name, "cpu_s": round(e["cpu_s"], 1), "wall_s": round(e["wall_s"], 1), "tests": int(e["tests"])}
            for name, e in ranked]  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", help="write the result here (bench/results/<date>/suite.json)")
    parser.add_argument("--data-dir", default=str(REPO / "var" / "postgres"), help="the embedded server's data")
    parser.add_argument("--files", type=int, default=0, help="report the N test files costing the most CPU")
    parser.add_argument("pytest_args", nargs="*", help="after --: what pytest gets besides -q")
    args = parser.parse_args()

    tick = os.sysconf("SC_CLK_TCK")
    data_dir = Path(args.data_dir)
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args.pytest_args]
    env = dict(os.environ)
    files_dir = Path(tempfile.mkdtemp(prefix="suite-files-")) if args.files else None
    if files_dir is not None:
        command[3:3] = ["-p", "bench.suite_files"]
        env["SUITE_FILES_DIR"] = str(files_dir)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    busy, server, own = _busy_jiffies(), _server_jiffies(data_dir), _process_jiffies(os.getpid())
    started = time.monotonic()
    done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, check=False)
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    machine = (_busy_jiffies() - busy - (_process_jiffies(os.getpid()) - own)) / tick
    database = (_server_jiffies(data_dir) - server) / tick

    tests = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    last = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    outcomes = {kind.rstrip("s"): int(count) for count, kind in OUTCOME.findall(last)}
    result = {
        "benchmark": "suite",
        "command": command,
        "exit_status": done.returncode,
        "outcomes": outcomes,
        "wall_s": round(wall, 1),
        "test_processes_cpu_s": round(tests, 1),
        "database_server_cpu_s": round(database, 1),
        "machine_busy_cpu_s": round(machine, 1),
        "cores": len(os.sched_getaffinity(0)),
    }
    print_table(
        "The suite",
        ["wall s", "tests' CPU s", "database CPU s", "machine busy CPU s", "outcome"],
        [[result["wall_s"], result["test_processes_cpu_s"], result["database_server_cpu_s"],
          result["machine_busy_cpu_s"], last]],
    )  # fmt: skip
    if files_dir is not None:
        result["files"] = _costliest_files(files_dir, args.files)
        shutil.rmtree(files_dir)
        print_table(
            f"The {args.files} test files costing the most CPU (with what they started and waited for)",
            ["CPU s", "wall s", "tests", "file"],
            [[row["cpu_s"], row["wall_s"], row["tests"], row["file"]] for row in result["files"]],
        )
    if done.returncode != 0:
        print(done.stdout[-3000:], done.stderr[-2000:], sep="\n")
    write_json(args.json, result)
    sys.exit(done.returncode)


if __name__ == "__main__":
    main()
