"""What the test suite costs: its wall time and the CPU it takes, by whom.

Runs ``python -m pytest`` as ``make test`` does (not the lint, types and docs build before it) and
reports the wall time; the CPU of the test processes and of every process they waited for
(workers, web servers, Celery workers, stdio servers, commands); the CPU of the platform's database
server (the embedded one: its backends' CPU comes back to it as they end); and the CPU the whole
machine was busy for meanwhile, which also holds the servers tests start as daemons of their own
(the replica, the production topology) and anything else running: measure on an idle machine. On
two cores the wall time cannot be under half the machine's CPU.

    python bench/suite.py --json bench/results/$(date +%F)/suite.json [-- PYTEST ARGUMENTS]
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", help="write the result here (bench/results/<date>/suite.json)")
    parser.add_argument("--data-dir", default=str(REPO / "var" / "postgres"), help="the embedded server's data")
    parser.add_argument("pytest_args", nargs="*", help="after --: what pytest gets besides -q")
    args = parser.parse_args()

    tick = os.sysconf("SC_CLK_TCK")
    data_dir = Path(args.data_dir)
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args.pytest_args]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    busy, server, own = _busy_jiffies(), _server_jiffies(data_dir), _process_jiffies(os.getpid())
    started = time.monotonic()
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, check=False)
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
    if done.returncode != 0:
        print(done.stdout[-3000:], done.stderr[-2000:], sep="\n")
    write_json(args.json, result)
    sys.exit(done.returncode)


if __name__ == "__main__":
    main()
