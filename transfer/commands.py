"""What the commands that bring in other tools' memories share: the organization, the summary, and
each refused item named on stderr."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser

from memory_platform.commands import PlatformCommand
from organizations.models import Organization
from transfer.writes import SourceProblem, WriteResult


class ImportCommand(PlatformCommand):
    source_help = "What to import."

    def read(self, organization: Organization, source: Path) -> WriteResult:
        raise NotImplementedError

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("source", type=Path, help=self.source_help)
        parser.add_argument("--organization", required=True, help="The organization to import into.")

    def handle(self, *args: Any, **options: Any) -> None:
        organization = Organization.objects.filter(slug=options["organization"]).first()
        if organization is None:
            raise CommandError(f"no organization '{options['organization']}'; create it first")
        try:
            result = self.read(organization, options["source"])
        except SourceProblem as problem:
            raise CommandError(f"{options['source']}: {problem}; nothing was imported") from None
        self.stdout.write(
            f"{result.created} memories created, {result.existing} already there, {len(result.refused)} refused"
        )
        for item, why in result.refused:
            self.stderr.write(f"  refused {item}: {why}")
