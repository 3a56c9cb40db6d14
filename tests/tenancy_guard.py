"""Every test that uses the database fails when the platform's code ran a statement joining rows of
two organizations (tests.tenancy_sql): the guarantee that keeps the Citus path open is checked on
everything the suite exercises, not on a sample.

Statements the tests write themselves (setup and assertions) and migrations (run on one server,
before any distribution) are not the platform's requests and are not held to it. Neither is what
``KNOWN`` lists, each with why.
"""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import pytest
from django.db import connections

from tests.tenancy_sql import CrossJoin, cross_organization_join

ROOT = Path(__file__).resolve().parent.parent
_LIBRARIES = (str(ROOT / ".venv"),)
# A statement whose nearest platform frame is one of these is a test's own (or a benchmark's).
_TESTS = ("tests/", "bench/")
# A statement run from one of these is a migration's.
_MIGRATIONS = ("/migrations/", "memory_platform/db/migration_ops.py")

# Statements the platform runs that read two organizations' rows together, by the function that
# runs them ("path function"), and why that is right.
KNOWN = {
    "memories/search/features.py _rows": (
        "a search's session neighbours: the memories are looked up by the ids a CTE found within the"
        " scope (the organization's, or system-scope memories); a lookup by ids, not a join"
    ),
}

# TENANCY_SQL_REPORT=path: write what was found there (one line each) instead of failing.
REPORT = os.environ.get("TENANCY_SQL_REPORT")


def _callers() -> list[str]:
    """The platform's own frames on the stack, innermost first ("path:line function")."""
    root = str(ROOT) + "/"
    return [
        f"{frame.f_code.co_filename.removeprefix(root)}:{line} {frame.f_code.co_name}"
        for frame, line in traceback.walk_stack(sys._getframe(2))
        if frame.f_code.co_filename.startswith(root) and not frame.f_code.co_filename.startswith(_LIBRARIES)
    ]


def _held_to_it(callers: list[str]) -> bool:
    """Whether the platform's code ran it (not a test's own statement, nor a migration), and it is
    not a known exception."""
    if not callers or callers[0].startswith(_TESTS):
        return False
    if any(marker in caller for caller in callers for marker in _MIGRATIONS):
        return False
    path, _, function = callers[0].partition(" ")
    return f"{path.rpartition(':')[0]} {function}" not in KNOWN


class Guard:
    """A database execute wrapper keeping the statements the platform ran that join rows of two
    organizations (with their callers), and running every statement."""

    def __init__(self) -> None:
        self.found: list[tuple[CrossJoin, list[str]]] = []

    def __call__(self, execute: Callable[..., Any], sql: str, params: Any, many: bool, context: dict[str, Any]) -> Any:
        if isinstance(sql, str):
            crossing = cross_organization_join(sql, params[0] if many and params else params)
            if crossing is not None:
                callers = _callers()
                if _held_to_it(callers):
                    self.found.append((crossing, callers))
        return execute(sql, params, many, context)

    @contextmanager
    def installed(self) -> Iterator[Guard]:
        with ExitStack() as stack:
            for alias in connections:
                stack.enter_context(connections[alias].execute_wrapper(self))
            yield self


def _uses_the_database(request: pytest.FixtureRequest) -> bool:
    return request.node.get_closest_marker("django_db") is not None or "_django_db_helper" in request.fixturenames


@pytest.fixture(autouse=True)
def _no_join_across_organizations(request: pytest.FixtureRequest) -> Iterator[None]:
    if not _uses_the_database(request) or request.node.get_closest_marker("joins_across_organizations"):
        yield
        return
    with Guard().installed() as guard:
        yield
    if guard.found and REPORT:
        with open(REPORT, "a") as out:
            for crossing, callers in guard.found:
                out.write(f"{request.node.nodeid}\t{' < '.join(callers[:4])}\t{crossing.groups}\t{crossing.sql}\n")
    elif guard.found:
        shown = "\n".join(f"{crossing}\n  from {' < '.join(callers[:4])}" for crossing, callers in guard.found[:3])
        pytest.fail(f"{len(guard.found)} statement(s) joined rows of organizations:\n{shown}", pytrace=False)
