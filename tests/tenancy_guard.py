"""Every test that uses the database fails when the platform's code ran a statement joining rows of
two organizations (tests.tenancy_sql): the guarantee that keeps the Citus path open is checked on
everything the suite exercises, not on a sample.

Statements the tests write themselves (setup and assertions) and migrations (run on one server,
before any distribution) are not the platform's requests and are not held to it. Neither is what
``KNOWN`` lists (tests.tenancy_rules), each with why.

The processes the tests start (web servers, workers, stdio servers, commands) are guarded in
themselves (tests.tenancy_child); what they found fails the session at its end.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import pytest
from django.db import connections

from tests import tenancy_child
from tests.tenancy_rules import callers, held_to_it
from tests.tenancy_sql import CrossJoin, cross_organization_join

# TENANCY_SQL_REPORT=path: write what was found there (one line each) instead of failing.
REPORT = os.environ.get("TENANCY_SQL_REPORT")


class Guard:
    """A database execute wrapper keeping the statements the platform ran that join rows of two
    organizations (with their callers), and running every statement."""

    def __init__(self) -> None:
        self.found: list[tuple[CrossJoin, list[str]]] = []

    def __call__(self, execute: Callable[..., Any], sql: str, params: Any, many: bool, context: dict[str, Any]) -> Any:
        if isinstance(sql, str):
            crossing = cross_organization_join(sql, params[0] if many and params else params)
            if crossing is not None:
                found_by = callers(sys._getframe(1))
                if held_to_it(found_by):
                    self.found.append((crossing, found_by))
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


_MADE_HERE = pytest.StashKey[bool]()


def pytest_configure(config: pytest.Config) -> None:
    """The session's directory for what the guarded children find, made before the workers start
    (they take it from the environment, and hand it on to the processes they start)."""
    if not hasattr(config, "workerinput") and tenancy_child.ENV not in os.environ:
        os.environ[tenancy_child.ENV] = tempfile.mkdtemp(prefix="tenancy-guard-")
        config.stash[_MADE_HERE] = True


def pytest_sessionfinish(session: pytest.Session) -> None:
    if hasattr(session.config, "workerinput"):
        return
    directory = Path(os.environ[tenancy_child.ENV])
    found, guarded = tenancy_child.findings(directory)
    if session.config.stash.get(_MADE_HERE, False):  # read: what it held is reported below
        shutil.rmtree(directory, ignore_errors=True)
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None and guarded:
        reporter.write_line(f"tenancy guard: {guarded} processes the tests started were guarded; {len(found)} found")
    if found and REPORT:
        with open(REPORT, "a") as out:
            for finding in found:
                out.write(
                    f"{finding['process']}\t{' < '.join(finding['callers'])}\t{finding['groups']}\t{finding['sql']}\n"
                )
    elif found:
        for finding in found[:5]:
            shown = f"{finding['sql'][:300]}\n  from {' < '.join(finding['callers']) or 'no platform frame'}"
            if reporter is not None:
                reporter.write_line(f"joined rows of organizations in {finding['process']}:\n  {shown}", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
