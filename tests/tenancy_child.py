"""The tenancy guard in the processes the tests start: web servers, workers, stdio servers and
commands run the platform's statements out of reach of the guard in the test processes
(tests.tenancy_guard). With ``child_env()`` in its environment, a Python process runs
tests/child_site/sitecustomize.py at start, which installs ``ChildGuard`` on every database
connection it opens. Each statement joining two organizations' rows that a migration did not run
is written to a file of the session's directory; the session reads them at its end and fails on
any (tests.tenancy_guard). Every statement in such a process is the platform's: one with no
platform frame on the stack (a library's own) is held to the rule too.

Imports no Django and no pytest until a connection opens: a process without Django (a tool the
tests run with the same environment) is left alone.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

from tests.tenancy_rules import ROOT, callers, held_to_it

ENV = "TENANCY_GUARD_DIR"
SITE = ROOT / "tests" / "child_site"


def child_env(directory: str | None = None) -> dict[str, str]:
    """What a child's environment needs for the guard to run in it (``directory``: where it reports;
    default: the session's)."""
    directory = directory or os.environ.get(ENV)
    if not directory:
        return {}
    return {"PYTHONPATH": os.pathsep.join(filter(None, [str(SITE), os.environ.get("PYTHONPATH")])), ENV: directory}


class ChildGuard:
    """A database execute wrapper writing each statement that joins organizations' rows (once per
    statement and caller) to ``<directory>/<pid>.jsonl``."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.seen: set[tuple[str, str]] = set()

    def __call__(self, execute: Callable[..., Any], sql: str, params: Any, many: bool, context: dict[str, Any]) -> Any:
        if isinstance(sql, str):
            from tests.tenancy_sql import cross_organization_join  # Django is set up by now

            crossing = cross_organization_join(sql, params[0] if many and params else params)
            if crossing is not None:
                frame = sys._getframe(1)
                found_by = callers(frame)
                key = (sql, found_by[0] if found_by else "")
                if held_to_it(found_by, platform_only=True) and not _migrating(frame) and key not in self.seen:
                    self.seen.add(key)
                    finding = {
                        "process": " ".join(sys.argv),
                        "callers": found_by[:4],
                        "groups": crossing.groups,
                        "sql": sql,
                    }
                    with (self.directory / f"{os.getpid()}.jsonl").open("a") as out:
                        out.write(json.dumps(finding, default=str) + "\n")
        return execute(sql, params, many, context)


def _migrating(frame: FrameType) -> bool:
    """Whether Django's migration executor runs this statement (a RunSQL's text has no frame of its
    migration's file on the stack, as the guard in the test processes looks for)."""
    return any("/django/db/migrations/" in outer.f_code.co_filename for outer, _ in traceback.walk_stack(frame))


def install() -> None:
    """Guard every database connection this process opens, and say so (``installed-<pid>``)."""
    directory = Path(os.environ[ENV])
    try:
        from django.db.backends.signals import connection_created
    except ImportError:  # not the platform: a tool run with the tests' environment
        return
    guard = ChildGuard(directory)

    def guarded(sender: Any, connection: Any, **kwargs: Any) -> None:
        if guard not in connection.execute_wrappers:
            connection.execute_wrappers.append(guard)
            (directory / f"installed-{os.getpid()}").touch()

    connection_created.connect(guarded, weak=False)


def findings(directory: Path) -> tuple[list[dict[str, Any]], int]:
    """What the children found, and how many of them had the guard on a connection."""
    found = [json.loads(line) for path in sorted(directory.glob("*.jsonl")) for line in path.read_text().splitlines()]
    return found, len(list(directory.glob("installed-*")))
