"""Memories kept by mem0, brought in: what its ``Memory.get_all(...)`` returns, saved as JSON
(``{"results": [...]}``, or the list alone), each item ``{"id", "memory", "hash", "metadata",
"created_at", "updated_at"}`` with the ``user_id``, ``agent_id``, ``run_id`` it was kept for.

Each item becomes an organization memory (mem0 types nothing: a fact), its mem0 categories its tags,
and what mem0 knew of it (its id, hash, whom it was kept for, its times and plain metadata) the
memory's metadata, each key prefixed ``mem0_`` (five at most, mem0's id first). Every item is
checked before any is written; they are then written as the other importers write
(transfer.writes), mem0's id making the idempotency key.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from memory_platform import json_input
from memory_platform.json_input import JsonInputError
from organizations.models import Organization
from transfer.writes import SourceProblem, WriteResult, organization_entry, write_checked

MAX_FILE_BYTES = 200_000_000
PRIORITY = ("user_id", "agent_id", "run_id", "created_at", "hash", "actor_id", "role", "updated_at")
METADATA_KEYS = 5


class Mem0Problem(SourceProblem):
    """A file that is not mem0's memories; nothing was written."""


def read_mem0(organization: Organization, source: Path) -> WriteResult:
    if not source.is_file():
        raise Mem0Problem(f"{source} is not a file; save mem0's get_all() as JSON")
    if source.stat().st_size > MAX_FILE_BYTES:
        raise Mem0Problem(f"{source} is larger than {MAX_FILE_BYTES:,} bytes; split it")
    try:
        loaded = json_input.loads(source.read_bytes())
    except JsonInputError as error:
        raise Mem0Problem(f"not JSON: {error.message}") from None
    items = loaded.get("results") if isinstance(loaded, dict) else loaded
    if not isinstance(items, list):
        raise Mem0Problem('expected mem0\'s get_all() output: {"results": [...]} or a list of memories')
    named = [(f"item {index} ({_id(item)})", functools.partial(_entry, item)) for index, item in enumerate(items)]
    return write_checked(organization, named, problem=Mem0Problem, empty="the file holds no memories")


def _id(item: Any) -> str:
    return str(item.get("id")) if isinstance(item, dict) else "?"


def _entry(item: Any) -> dict[str, Any]:
    if not isinstance(item, dict):
        raise Mem0Problem("each memory must be an object")
    text, key = item.get("memory"), item.get("id")
    if not isinstance(text, str) or not text.strip():
        raise Mem0Problem('no text in "memory"')
    if not isinstance(key, str | int) or isinstance(key, bool) or not str(key):
        raise Mem0Problem('no "id"')
    given = item.get("metadata")
    metadata: dict[str, Any] = given if isinstance(given, dict) else {}
    categories = item.get("categories") or metadata.get("categories") or []
    # What mem0 knew of it, flat (metadata holds plain values, at most five): mem0_id first, then
    # whom it was kept for, when, its hash; mem0's own plain metadata if room is left.
    known = {name: item.get(name) for name in PRIORITY} | {name: value for name, value in metadata.items()}
    kept: dict[str, Any] = {"mem0_id": str(key)}
    for name, value in known.items():
        if len(kept) == METADATA_KEYS:
            break
        if name != "categories" and isinstance(value, str | int | float) and not isinstance(value, bool):
            kept.setdefault(f"mem0_{name}"[:64], value)
    tags = [str(tag) for tag in categories if isinstance(tag, str | int)]
    return organization_entry(memory_type="fact", content=text, tags=tags, metadata=kept, key=f"mem0-{key}")
