"""platform-status: health, counts, and the embedding model's state."""

from __future__ import annotations

from typing import Any

from lifecycle.selectors import lifecycle_report
from mcp_api.server import tool
from memories.selectors import memory_status_report
from organizations.principal import Principal


@tool(
    "platform-status",
    title="Platform status",
    description=(
        "Your organization and role, whether the database and search are healthy, how many memories you can "
        "see by status and type, the embedding model's state (loading, ready or error), open consolidation "
        "proposals and the last runs of the lifecycle workers."
    ),
    read_only=True,
)
def platform_status(principal: Principal) -> dict[str, Any]:
    return {**memory_status_report(principal), "lifecycle": lifecycle_report(principal)}
