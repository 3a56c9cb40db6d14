"""The previous release's database, with its data, migrated by this release: every memory, version,
link, triple, alias and token is still there and still works (tests/data/upgrade says how the dump
was made)."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import psycopg
import pytest
from django.conf import settings
from django.db import connection

from memory_platform.backups import tool
from tests.conftest import database_url_of_the_test_database
from tests.connections import conninfo

pytestmark = [pytest.mark.django_db, pytest.mark.processes]

DUMP = Path(settings.BASE_DIR) / "tests" / "data" / "upgrade" / "previous-release.sql.gz"
TOKEN = "mp_f7e427f7_1Lqpj-zuYsyP4ry-y30NVJVv0F7ZZT3gSdGc-0imgnk"  # the dump's agent token, for it alone
READ_BACK = """
import json
from django.db.models import F
from memories.models import Memory, MemoryVersion
from memories.search import SearchParams, memory_search
from knowledge.models import MemoryLink, Mention, Triple, EntityAlias
from organizations.tokens import principal_for_token
agent = principal_for_token(TOKEN)
found = memory_search(agent, SearchParams(query="integer cents", mode="keyword"))
print(json.dumps({
    "organization": agent.organization.slug,
    "memories": sorted((m.current_content, m.status, m.version) for m in Memory.objects.all()),
    "versions": MemoryVersion.objects.count(),
    "versions_elsewhere": MemoryVersion.objects.exclude(organization_id=F("memory__organization_id")).count(),
    "links": MemoryLink.objects.count(),
    "triples": list(Triple.objects.values_list("subject__name", "predicate", "object__name")),
    "aliases": sorted(EntityAlias.objects.values_list("alias", flat=True)),
    "mentions": sorted(Mention.objects.values_list("written", "kind")),
    "found": [hit.memory.current_content for hit in found.hits],
}))
"""


def _conninfo(database: str) -> str:
    return conninfo(connection.settings_dict, database)


def _upgrade_database() -> str:
    return f"{connection.settings_dict['NAME']}_upgrade"


def _url_of(name: str) -> str:
    test_name = quote(connection.settings_dict["NAME"], safe="")
    return database_url_of_the_test_database().replace(f"/{test_name}", f"/{name}", 1)


def _drop(*names: str) -> None:
    with psycopg.connect(_conninfo("postgres"), autocommit=True) as admin:
        for name in names:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="module")
def migrated_once(django_db_setup: None, django_db_blocker: Any) -> Iterator[subprocess.CompletedProcess[str]]:
    """The previous release's dump loaded into a database of its own and migrated by this release,
    once for the module (a migration of it costs a process and ten seconds of CPU); each test works
    on a copy of it. What the migration answered."""
    with django_db_blocker.unblock():
        name = f"{_upgrade_database()}_migrated"
        _drop(name)
        with psycopg.connect(_conninfo("postgres"), autocommit=True) as admin:
            admin.execute(f'CREATE DATABASE "{name}"')
        try:
            loaded = subprocess.run(
                [tool("psql"), "--quiet", "--set=ON_ERROR_STOP=1", f"--dbname={_conninfo(name)}"],
                input=gzip.decompress(DUMP.read_bytes()), capture_output=True, check=False, timeout=120,
            )  # fmt: skip
            assert loaded.returncode == 0, loaded.stderr.decode()
            yield _manage(_url_of(name), "migrate", "--no-input")
        finally:
            _drop(name)


@pytest.fixture
def previous_database(migrated_once: subprocess.CompletedProcess[str]) -> Iterator[str]:
    """A database on the test server holding the previous release's data as this release's
    migrations left it (a copy of the module's); its DATABASE_URL."""
    assert migrated_once.returncode == 0, migrated_once.stderr
    name = _upgrade_database()
    _drop(name)
    with psycopg.connect(_conninfo("postgres"), autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}" TEMPLATE "{name}_migrated"')
    try:
        yield _url_of(name)
    finally:
        _drop(name)


def _manage(url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if key not in ("TEST_DATABASE_NAME",)}
    env["DATABASE_URL"] = url
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=settings.BASE_DIR, env=env,
        capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip


def test_the_previous_release_migrates_and_everything_is_still_there(previous_database: str) -> None:
    pending = _manage(previous_database, "migrate", "--check")
    assert pending.returncode == 0, "nothing is left to migrate"

    read = _manage(previous_database, "shell", "-c", READ_BACK.replace("TOKEN", repr(TOKEN)))

    assert read.returncode == 0, read.stderr
    state = json.loads(read.stdout.strip().splitlines()[-1])
    assert state["organization"] == "legacy", "the old token still authenticates"
    assert state["memories"] == [
        ["Deploys need two approvals before merging to the main branch.", "draft", 2],
        ["We store money as integer cents in the payments API.", "locked", 2],
    ]
    assert state["versions"] == 4 and state["links"] == 1
    assert state["versions_elsewhere"] == 0, "each version was given its memory's organization"
    assert state["triples"] == [["payments-api", "owned_by", "Team Atlas"]]
    assert "payments" in state["aliases"]
    assert ["payments", "alias"] in state["mentions"], "memories written before mentions were kept have them"
    assert state["found"] == ["We store money as integer cents in the payments API."]


def _indexes_on(table: str, column: str) -> list[str]:
    with psycopg.connect(_conninfo(_upgrade_database())) as conn:
        rows = conn.execute(
            "SELECT indexname FROM pg_indexes WHERE tablename = %s AND indexdef LIKE %s", [table, f"%({column})"]
        ).fetchall()
    return [row[0] for row in rows]


def test_the_indexes_composites_cover_are_dropped_online_and_come_back_when_unmigrated(previous_database: str) -> None:
    assert _indexes_on("organizations_auditevent", "organization_id") == []

    back = _manage(previous_database, "migrate", "organizations", "0001", "--no-input")

    assert back.returncode == 0, back.stderr
    assert len(_indexes_on("organizations_auditevent", "organization_id")) == 1
    again = _manage(previous_database, "migrate", "--no-input")
    assert again.returncode == 0, again.stderr
    assert _indexes_on("organizations_auditevent", "organization_id") == []


def _primary_key(table: str) -> str:
    with psycopg.connect(_conninfo(_upgrade_database())) as conn:
        (definition,) = conn.execute(
            "SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = %s::regclass AND contype = 'p'",
            [table],
        ).fetchone() or ("",)
        invalid = conn.execute(
            "SELECT count(*) FROM pg_constraint WHERE confrelid = %s::regclass AND NOT convalidated", [table]
        ).fetchone()
    assert invalid == (0,), "every reference to it is validated"
    return str(definition)


def test_the_keys_come_to_name_the_organization_and_go_back_on_the_previous_releases_data(
    previous_database: str,
) -> None:
    assert _primary_key("memories_memory") == "PRIMARY KEY (id, organization_id)"

    back = _manage(previous_database, "migrate", "memories", "0015", "--no-input")

    assert back.returncode == 0, back.stderr
    assert _primary_key("memories_memory") == "PRIMARY KEY (id)"
    again = _manage(previous_database, "migrate", "--no-input")
    assert again.returncode == 0, again.stderr
    assert _primary_key("memories_memory") == "PRIMARY KEY (id, organization_id)"
    read = _manage(previous_database, "shell", "-c", READ_BACK.replace("TOKEN", repr(TOKEN)))
    assert read.returncode == 0, read.stderr
    assert json.loads(read.stdout.strip().splitlines()[-1])["versions"] == 4
