"""A folder of Markdown notes, one memory each, as Obsidian-style vaults and basic-memory keep them:
YAML front matter for the fields, the body for the text.

    ---
    title: Deploys need two approvals
    type: business_rule          # memory_type; "fact" when left out
    scope: repository            # scope_type; "organization" when left out
    repository: payments-api
    tags: [deploys, review]
    importance: 8
    ---
    A pull request to main needs two approvals before it merges.

``write_notes`` writes an organization's memories as such a folder (one subfolder per type);
``read_notes`` reads one, every note checked before anything is written (a folder with one bad note
writes nothing and names it); the notes are then written through the batch service, as agents'
writes are: screened by the organization's write policy, embedded, with an idempotency key per note
so that reading the folder again adds only what is new.
"""

from __future__ import annotations

import functools
import hashlib
import re
from pathlib import Path
from typing import Any

import yaml

from memories.inputs import NewMemory
from memories.models import Memory, Status
from memory_platform.exceptions import DomainError
from organizations.models import Organization
from transfer.writes import SourceProblem, WriteResult, write_checked

MAX_NOTE_BYTES = 1_000_000
# Front matter names (as the tools write them) -> the memory's fields.
FIELDS = {
    "title": "title",
    "type": "memory_type",
    "memory_type": "memory_type",
    "scope": "scope_type",
    "scope_type": "scope_type",
    "repository": "repository",
    "tags": "tags",
    "importance": "importance",
    "status": "status",
}
# Written by write_notes for a reader's sake, and ignored when read back (the platform keeps them).
INFORMATIONAL = {"id", "created", "updated", "version", "permalink", "aliases", "date"}
_FRONT = re.compile(r"\A---\r?\n(.*?)\r?\n---\r?\n?(.*)\Z", re.DOTALL)


class NotesProblem(SourceProblem):
    """Notes that cannot be read; nothing was written."""


def write_notes(organization: Organization, folder: Path) -> int:
    """Every memory of the organization that is not deleted, as a note; how many were written."""
    folder.mkdir(parents=True, exist_ok=True)
    written = 0
    used: set[Path] = set()
    memories = Memory.objects.filter(organization=organization, deleted_at__isnull=True).select_related("repository")
    for memory in memories.order_by("created_at", "pk").iterator():
        path = _free(folder / memory.memory_type / f"{_slug(memory.title or str(memory.pk))}.md", used)
        path.parent.mkdir(parents=True, exist_ok=True)
        front: dict[str, Any] = {
            "id": str(memory.pk),
            "title": memory.title,
            "type": memory.memory_type,
            "scope": memory.scope_type,
            "tags": list(memory.tags or []),
            "importance": memory.importance,
            "status": memory.status,
            "created": memory.created_at.isoformat(),
            "updated": memory.updated_at.isoformat(),
        }
        if memory.repository is not None:
            front["repository"] = memory.repository.slug
        text = yaml.safe_dump(front, sort_keys=False, allow_unicode=True)
        path.write_text(f"---\n{text}---\n{memory.current_content}\n")
        written += 1
    return written


def read_notes(organization: Organization, folder: Path) -> WriteResult:
    """Write the folder's notes as memories of the organization (see the module's docstring)."""
    if not folder.is_dir():
        raise NotesProblem(f"{folder} is not a folder of Markdown notes")
    notes = [(str(path.relative_to(folder)), path) for path in sorted(folder.rglob("*.md"))]
    items = [(name, functools.partial(_entry, name, path)) for name, path in notes]
    return write_checked(organization, items, problem=NotesProblem, empty=f"{folder} holds no .md notes")


def _entry(name: str, path: Path) -> dict[str, Any]:
    if path.stat().st_size > MAX_NOTE_BYTES:
        raise NotesProblem(f"larger than {MAX_NOTE_BYTES:,} bytes")
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise NotesProblem("not UTF-8 text") from None
    front, body = _split(text)
    entry: dict[str, Any] = {"current_content": body.strip()}
    for key, value in front.items():
        if key in INFORMATIONAL:
            continue
        if key not in FIELDS:
            raise NotesProblem(f"unknown front matter key {key!r}; known: {', '.join(sorted(FIELDS))}")
        entry[FIELDS[key]] = value
    if isinstance(entry.get("tags"), str):
        entry["tags"] = [tag.strip() for tag in entry["tags"].split(",") if tag.strip()]
    entry.setdefault("memory_type", "fact")
    entry.setdefault("scope_type", "organization")
    entry.setdefault("status", Status.ACTIVE)
    if not entry["current_content"]:
        raise NotesProblem("the note has no text")
    try:
        NewMemory.parse(entry)
    except DomainError as error:
        raise NotesProblem(error.message) from None
    entry["create_repository"] = "repository" in entry
    # The same note read again is the same memory: its path and text make its key.
    entry["idempotency_key"] = "md-" + hashlib.sha256(f"{name}\n{text}".encode()).hexdigest()[:40]
    return entry


def _split(text: str) -> tuple[dict[str, Any], str]:
    match = _FRONT.match(text)
    if match is None:
        return {}, text
    try:
        front = yaml.safe_load(match.group(1)) or {}
    except yaml.YAMLError as error:
        raise NotesProblem(f"the front matter is not YAML: {str(error).splitlines()[0]}") from None
    if not isinstance(front, dict):
        raise NotesProblem("the front matter must be a mapping of keys to values")
    return front, match.group(2)


def _slug(text: str) -> str:
    slug = re.sub(r"[^\w-]+", "-", text.lower()).strip("-")[:80]
    return slug or "note"


def _free(path: Path, used: set[Path]) -> Path:
    candidate, n = path, 2
    while candidate in used:
        candidate = path.with_name(f"{path.stem}-{n}{path.suffix}")
        n += 1
    used.add(candidate)
    return candidate
