"""manage.py import_mcp_memory_service FILE --organization SLUG: mcp-memory-service's SQLite memories."""

from __future__ import annotations

from pathlib import Path

from organizations.models import Organization
from transfer.commands import ImportCommand
from transfer.mcp_memory_service import read_mcp_memory_service
from transfer.writes import WriteResult


class Command(ImportCommand):
    help = "Import mcp-memory-service's memories (its sqlite-vec database) into an organization."
    source_help = "Its SQLite database file (sqlite_vec.db), read only."

    def read(self, organization: Organization, source: Path) -> WriteResult:
        return read_mcp_memory_service(organization, source)
