"""What changed between two versions of a memory: field by field, and word by word in texts."""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass
from typing import Any

# The fields a curator reads a change in, in the order shown (ids and times of the row itself are
# left out: every version has its own).
COMPARED_FIELDS = (
    "title", "current_content", "status", "memory_type", "scope_type", "repository", "importance", "tags",
    "metadata", "source", "valid_from", "valid_until", "superseded_by", "deleted_at", "owner",
)  # fmt: skip
_TOKEN = re.compile(r"\s+|[\w'\u2019-]+|[^\w\s]")


def word_ops(old: str, new: str) -> list[tuple[str, str]]:
    """``new`` as runs of words marked ``equal``, ``insert``, and the runs of ``old`` it dropped as
    ``delete``, in reading order: what a word-level diff shows."""
    before, after = _TOKEN.findall(old or ""), _TOKEN.findall(new or "")
    ops: list[tuple[str, str]] = []
    matcher = difflib.SequenceMatcher(a=before, b=after, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            ops.append(("equal", "".join(after[j1:j2])))
            continue
        if i2 > i1:
            ops.append(("delete", "".join(before[i1:i2])))
        if j2 > j1:
            ops.append(("insert", "".join(after[j1:j2])))
    return ops


def as_text(value: Any) -> str:
    """A snapshot value as a curator reads it."""
    if value is None:
        return ""
    if isinstance(value, list):
        return ", ".join(str(item) for item in value)
    if isinstance(value, dict):
        return json.dumps(value, sort_keys=True, ensure_ascii=False)
    return str(value)


@dataclass(frozen=True)
class FieldChange:
    field: str
    old: str
    new: str
    ops: list[tuple[str, str]]


def snapshot_changes(old: dict[str, Any], new: dict[str, Any]) -> list[FieldChange]:
    """Every compared field whose value differs between two snapshots, with its word diff."""
    changes = []
    for name in COMPARED_FIELDS:
        before, after = as_text(old.get(name)), as_text(new.get(name))
        if before != after:
            changes.append(FieldChange(field=name, old=before, new=after, ops=word_ops(before, after)))
    return changes
