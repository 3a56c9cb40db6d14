"""manage.py import_mem0 FILE --organization SLUG: mem0's memories (its get_all() as JSON) brought in."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from organizations.models import Organization
from transfer.mem0 import Mem0Problem, read_mem0


class Command(BaseCommand):
    help = "Import mem0's memories (the JSON of its get_all()) into an organization, one memory each."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("source", type=Path, help='The JSON file: {"results": [...]} as mem0 returns it.')
        parser.add_argument("--organization", required=True, help="The organization to import into.")

    def handle(self, *args: Any, **options: Any) -> None:
        organization = Organization.objects.filter(slug=options["organization"]).first()
        if organization is None:
            raise CommandError(f"no organization '{options['organization']}'; create it first")
        try:
            result = read_mem0(organization, options["source"])
        except Mem0Problem as problem:
            raise CommandError(f"{options['source']}: {problem}; nothing was imported") from None
        self.stdout.write(
            f"{result.created} memories created, {result.existing} already there, {len(result.refused)} refused"
        )
        for item, why in result.refused:
            self.stderr.write(f"  refused {item}: {why}")
