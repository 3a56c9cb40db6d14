"""manage.py import_markdown DIR --organization SLUG: Markdown notes (YAML front matter) as memories."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from organizations.models import Organization
from transfer.markdown import NotesProblem, read_notes


class Command(BaseCommand):
    help = "Import a folder of Markdown notes (Obsidian, basic-memory) as memories, one note each."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("folder", type=Path, help="The folder of .md notes (read with its subfolders).")
        parser.add_argument("--organization", required=True, help="The organization to import into.")

    def handle(self, *args: Any, **options: Any) -> None:
        organization = Organization.objects.filter(slug=options["organization"]).first()
        if organization is None:
            raise CommandError(f"no organization '{options['organization']}'; create it first")
        try:
            result = read_notes(organization, options["folder"])
        except NotesProblem as problem:
            raise CommandError(f"{problem}; nothing was imported") from None
        self.stdout.write(
            f"{result.created} memories created, {result.existing} already there, {len(result.refused)} refused"
        )
        for note, why in result.refused:
            self.stderr.write(f"  refused {note}: {why}")
