"""mcp-memory-service's memories come in from its SQLite database (the table as its sqlite-vec
backend creates and fills it, v10.59): live rows only, types mapped, tags kept; a second import adds
nothing; a file that is not its database writes nothing."""

from __future__ import annotations

import hashlib
import io
import json
import sqlite3
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from memories.models import Memory
from tests.conftest import Tenant

pytestmark = pytest.mark.django_db

# As mcp_memory_service/storage/sqlite_vec.py creates it.
SCHEMA = """
CREATE TABLE IF NOT EXISTS memories (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    content_hash TEXT UNIQUE NOT NULL,
    content TEXT NOT NULL,
    tags TEXT,
    memory_type TEXT,
    metadata TEXT,
    created_at REAL,
    updated_at REAL,
    created_at_iso TEXT,
    updated_at_iso TEXT,
    deleted_at REAL DEFAULT NULL
)
"""


def _database(path: Path, memories: list[tuple[str, list[str], str | None, dict[str, object], bool]]) -> Path:
    """Rows as its store() writes them: sha256 content hash, tags joined with commas, JSON metadata."""
    with sqlite3.connect(path) as database:
        database.execute(SCHEMA)
        for content, tags, kind, metadata, deleted in memories:
            now = time.time()
            iso = datetime.fromtimestamp(now, UTC).isoformat()
            database.execute(
                "INSERT INTO memories (content_hash, content, tags, memory_type, metadata, created_at, updated_at,"
                " created_at_iso, updated_at_iso, deleted_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (hashlib.sha256(content.encode()).hexdigest(), content, ",".join(tags), kind, json.dumps(metadata),
                 now, now, iso, iso, now if deleted else None),
            )  # fmt: skip
    return path


def _import(path: Path) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("import_mcp_memory_service", str(path), "--organization", "acme", stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_its_live_memories_come_in_once(acme: Tenant, tmp_path: Path) -> None:
    source = _database(tmp_path / "sqlite_vec.db", [
        ("We chose PostgreSQL for the shared memory.", ["architecture", "db"], "architecture", {"project": "x"}, False),
        ("The CI runs on two cores.", ["ci"], "observation", {}, False),
        ("An old note that was deleted.", [], "note", {}, True),
    ])  # fmt: skip

    said, _ = _import(source)

    assert "2 memories created, 0 already there, 0 refused" in said
    chosen = Memory.objects.get(organization=acme.organization, current_content__startswith="We chose PostgreSQL")
    assert chosen.memory_type == "decision_log" and chosen.tags == ["architecture", "db"]
    assert chosen.metadata["mms_memory_type"] == "architecture" and chosen.metadata["mms_project"] == "x"
    assert len(chosen.metadata["mms_content_hash"]) == 64
    assert (
        Memory.objects.get(organization=acme.organization, current_content="The CI runs on two cores.").memory_type
        == "fact"
    )
    assert not Memory.objects.filter(current_content__contains="deleted").exists()
    assert "0 memories created, 2 already there" in _import(source)[0]


def test_a_file_that_is_not_its_database_writes_nothing(acme: Tenant, tmp_path: Path) -> None:
    before = Memory.objects.count()
    text = tmp_path / "notes.db"
    text.write_text("not sqlite at all")
    with pytest.raises(CommandError, match="not an SQLite database it wrote"):
        _import(text)
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as database:
        database.execute("CREATE TABLE notes (body TEXT)")
    with pytest.raises(CommandError, match="no memories table"):
        _import(other)
    empty_content = _database(tmp_path / "bad.db", [("   ", [], None, {}, False)])
    with pytest.raises(CommandError, match="row 1: no content; nothing was imported"):
        _import(empty_content)
    assert Memory.objects.count() == before
