"""A pytest plugin for bench/suite.py: the CPU each test file costs, written by every test process.

Loaded with ``-p bench.suite_files`` (xdist passes it on to its workers) with SUITE_FILES_DIR naming
a directory: each process writes there, when its session ends, every file's wall time and the CPU
of the process and of the processes it waited for (the servers, workers and commands its tests
start and stop) while that file's tests ran, setup and teardown included. A process counts once it
has been waited for, against the file running then: a server a file stops and waits for counts
against that file, one left unwaited against the file whose next process start reaps it
(subprocess does), and the servers of processes it never waits for (daemons) against none.
"""

from __future__ import annotations

import json
import os
import resource
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

_files: dict[str, dict[str, float]] = defaultdict(lambda: {"wall_s": 0.0, "cpu_s": 0.0, "tests": 0})


def _cpu() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    cpu, wall = _cpu(), time.monotonic()
    try:
        return (yield)
    finally:
        entry = _files[item.nodeid.split("::", 1)[0]]
        entry["cpu_s"] += _cpu() - cpu
        entry["wall_s"] += time.monotonic() - wall
        entry["tests"] += 1


def pytest_sessionfinish(session: pytest.Session) -> None:
    directory = os.environ.get("SUITE_FILES_DIR")
    if directory and _files:
        name = os.environ.get("PYTEST_XDIST_WORKER", "main")
        Path(directory, f"{name}-{os.getpid()}.json").write_text(json.dumps(_files))
