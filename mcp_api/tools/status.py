"""platform-status: health, counts, and the embedding model's state."""

from __future__ import annotations

from typing import Any

from lifecycle import selectors
from mcp_api.server import tool
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
    return selectors.platform_status(principal)
