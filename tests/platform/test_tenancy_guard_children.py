"""The tenancy guard reaches the processes the tests start (tests.tenancy_child): a statement one of
them runs that joins two organizations' rows is reported, one tied to an organization is not."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings

from tests.tenancy_child import ENV, findings

pytestmark = pytest.mark.django_db(transaction=True)

_RUN = """
import django
django.setup()
from django.db import connection
with connection.cursor() as cursor:
    cursor.execute({sql!r})
"""
_UNTIED = "SELECT count(*) FROM memories_memory m JOIN memories_memoryversion v ON v.memory_id = m.id"
_TIED = (
    "SELECT count(*) FROM memories_memory m JOIN memories_memoryversion v ON v.memory_id = m.id"
    " AND v.organization_id = m.organization_id WHERE m.organization_id = 1"
)


def _run(server_env: dict[str, str], directory: Path, sql: str) -> None:
    # The servers' environment as it is (it carries the guard), reporting here instead of to the session.
    env = server_env | {ENV: str(directory)}
    done = subprocess.run(
        [sys.executable, "-c", _RUN.format(sql=sql)], cwd=settings.BASE_DIR, env=env, capture_output=True, text=True,
        check=False, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "sitecustomize" not in done.stderr, done.stderr


def test_a_child_joining_two_organizations_rows_is_reported(server_env: dict[str, str], tmp_path: Path) -> None:
    _run(server_env, tmp_path, _UNTIED)

    found, guarded = findings(tmp_path)
    assert guarded == 1
    assert [finding["sql"] for finding in found] == [_UNTIED]
    assert found[0]["callers"] == []  # run by no platform frame: held to the rule all the same in a child


def test_a_child_tied_to_one_organization_is_not(server_env: dict[str, str], tmp_path: Path) -> None:
    _run(server_env, tmp_path, _TIED)

    assert findings(tmp_path) == ([], 1)
