"""Memories kept by mcp-memory-service, brought in from its SQLite database (the sqlite-vec backend's
``memories`` table: ``content``, ``content_hash``, comma-separated ``tags``, ``memory_type``, JSON
``metadata``, times, and ``deleted_at`` for what it deleted), read-only.

Each live row becomes an organization memory: its type mapped onto the platform's (a decision and
its subtypes a decision log, a task or plan a task, a document or reference documentation, the
rest facts), its tags kept, its content hash, type and plain metadata in the metadata as ``mms_*``
(five keys at most). Every row is checked before any is written; they are then written as the other
importers write (transfer.writes), the content hash making the idempotency key.
"""

from __future__ import annotations

import functools
import json
import sqlite3
from pathlib import Path
from typing import Any

from organizations.models import Organization
from transfer.writes import SourceProblem, WriteResult, organization_entry, write_checked

METADATA_KEYS = 5
# mcp-memory-service's types (base types and their subtypes) -> the platform's memory types.
TYPES = {
    **dict.fromkeys(("decision", "architecture", "tool_choice", "approach", "configuration"), "decision_log"),
    **dict.fromkeys(("planning", "backlog_item", "sprint_goal", "acceptance_criteria", "task", "todo"), "task"),
    **dict.fromkeys(("document", "reference", "documentation"), "documentation"),
    **dict.fromkeys(("best_practice", "anti_pattern", "gotcha", "design_pattern", "workflow"), "business_rule"),
    "preference": "preference",
}


class McpMemoryServiceProblem(SourceProblem):
    """A file that is not mcp-memory-service's database; nothing was written."""


def read_mcp_memory_service(organization: Organization, source: Path) -> WriteResult:
    if not source.is_file():
        raise McpMemoryServiceProblem(f"{source} is not a file; name mcp-memory-service's sqlite_vec.db")
    try:
        with sqlite3.connect(f"file:{source}?mode=ro", uri=True) as database:
            database.row_factory = sqlite3.Row
            columns = {row["name"] for row in database.execute("PRAGMA table_info(memories)")}
            if not {"content", "content_hash"} <= columns:
                raise McpMemoryServiceProblem("no memories table with content and content_hash: not its database")
            live = "WHERE deleted_at IS NULL" if "deleted_at" in columns else ""
            rows = [dict(row) for row in database.execute(f"SELECT * FROM memories {live} ORDER BY id")]  # noqa: S608
    except sqlite3.DatabaseError as error:
        raise McpMemoryServiceProblem(f"not an SQLite database it wrote: {error}") from None
    named = [(f"row {row.get('id')}", functools.partial(_entry, row)) for row in rows]
    return write_checked(organization, named, problem=McpMemoryServiceProblem, empty="the database holds no memories")


def _entry(row: dict[str, Any]) -> dict[str, Any]:
    content, digest = row.get("content"), row.get("content_hash")
    if not isinstance(content, str) or not content.strip():
        raise McpMemoryServiceProblem("no content")
    if not isinstance(digest, str) or not digest:
        raise McpMemoryServiceProblem("no content_hash")
    kind = str(row.get("memory_type") or "")
    tags = [tag.strip() for tag in str(row.get("tags") or "").split(",") if tag.strip()]
    kept: dict[str, Any] = {"mms_content_hash": digest}
    if kind:
        kept["mms_memory_type"] = kind
    if row.get("created_at_iso"):
        kept["mms_created_at"] = str(row["created_at_iso"])
    for name, value in _metadata(row.get("metadata")).items():
        if len(kept) == METADATA_KEYS:
            break
        if isinstance(value, str | int | float | bool):
            kept.setdefault(f"mms_{name}"[:64], value)
    memory_type = TYPES.get(kind, "fact")
    return organization_entry(memory_type=memory_type, content=content, tags=tags, metadata=kept, key=f"mms-{digest}")


def _metadata(text: Any) -> dict[str, Any]:
    if not isinstance(text, str) or not text:
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
