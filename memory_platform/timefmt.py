"""The one way a time is written in what the platform answers (MCP, REST, status, health): ISO 8601
in UTC with "Z", as DRF writes them, so a client reads the same field the same way everywhere."""

from __future__ import annotations

from datetime import UTC, datetime


def iso(value: datetime | None) -> str | None:
    """``2026-11-26T13:31:07.123456Z``; None stays None."""
    if value is None:
        return None
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")
