"""manage.py import_mem0 FILE --organization SLUG: mem0's memories (its get_all() as JSON) brought in."""

from __future__ import annotations

from pathlib import Path

from organizations.models import Organization
from transfer.commands import ImportCommand
from transfer.mem0 import read_mem0
from transfer.writes import WriteResult


class Command(ImportCommand):
    help = "Import mem0's memories (the JSON of its get_all()) into an organization, one memory each."
    source_help = 'The JSON file: {"results": [...]} as mem0 returns it.'

    def read(self, organization: Organization, source: Path) -> WriteResult:
        return read_mem0(organization, source)
