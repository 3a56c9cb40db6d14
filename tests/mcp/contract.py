"""What the binding MCP contract (seed 002) promises, in one place for the tests to compare against."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

SCOPES = ["system", "organization", "repository", "user"]
STATUSES = ["draft", "verified", "locked", "deprecated", "active"]
MEMORY_TYPES = [
    "business_rule",
    "decision_log",
    "preference",
    "system_constraint",
    "documentation",
    "tech_stack",
    "fact",
    "task",
    "architecture",
    "user_context",
    "convention",
    "risk",
]

TOOLS = {
    "memory-write",
    "memory-update",
    "memory-delete",
    "memory-search",
    "memory-vector-search",
    "memory-link",
    "memory-batch-write",
    "memory-get",
    "memory-history",
    "memory-list",
    "memory-invalidate",
    "memory-recall",
    "platform-status",
    "repository-list",
    "repository-create",
}

# The memory-write response schema.
MEMORY_KEYS = {
    "id",
    "organization",
    "repository",
    "scope_type",
    "memory_type",
    "title",
    "current_content",
    "status",
    "importance",
    "metadata",
    "created_at",
    "updated_at",
}

# A memory://index entry: lightweight, never the content.
INDEX_KEYS = {
    "id",
    "title",
    "scope_type",
    "memory_type",
    "importance",
    "status",
    "repository",
    "organization",
    "updated_at",
    "metadata",
}


def assert_memory_shape(memory: dict[str, Any]) -> None:
    """A memory object as the contract describes it (extra keys of ours may follow)."""
    missing = MEMORY_KEYS - memory.keys()
    assert not missing, f"memory object lacks {sorted(missing)}: {memory}"
    uuid.UUID(memory["id"])
    assert memory["scope_type"] in SCOPES
    assert memory["memory_type"] in MEMORY_TYPES
    assert memory["status"] in STATUSES
    assert isinstance(memory["importance"], int)
    assert 1 <= memory["importance"] <= 10
    assert isinstance(memory["title"], str)
    assert memory["title"]
    assert isinstance(memory["current_content"], str)
    assert isinstance(memory["metadata"], dict | list)
    assert memory["repository"] is None or isinstance(memory["repository"], str)
    for stamp in ("created_at", "updated_at"):
        assert datetime.fromisoformat(memory[stamp]).tzinfo is not None, memory[stamp]
