"""manage.py export_markdown ORG --output DIR: an organization's memories as Markdown notes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser

from memory_platform.commands import PlatformCommand
from organizations.models import Organization
from transfer.markdown import write_notes


class Command(PlatformCommand):
    help = "Write an organization's memories as a folder of Markdown notes with YAML front matter."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("organization", help="The organization's slug.")
        parser.add_argument("--output", required=True, type=Path, help="The folder to write (empty or new).")

    def handle(self, *args: Any, **options: Any) -> None:
        organization = Organization.objects.filter(slug=options["organization"]).first()
        if organization is None:
            raise CommandError(f"no organization '{options['organization']}'")
        folder: Path = options["output"]
        if folder.exists() and any(folder.iterdir()):
            raise CommandError(f"{folder} is not empty; name a new folder (nothing is written over)")
        written = write_notes(organization, folder)
        self.stdout.write(f"wrote {written} notes of {organization.slug} to {folder}")
