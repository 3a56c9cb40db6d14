"""manage.py import_markdown DIR --organization SLUG: Markdown notes (YAML front matter) as memories."""

from __future__ import annotations

from pathlib import Path

from organizations.models import Organization
from transfer.commands import ImportCommand
from transfer.markdown import read_notes
from transfer.writes import WriteResult


class Command(ImportCommand):
    help = "Import a folder of Markdown notes (Obsidian, basic-memory) as memories, one note each."
    source_help = "The folder of .md notes (read with its subfolders)."

    def read(self, organization: Organization, source: Path) -> WriteResult:
        return read_notes(organization, source)
