"""manage.py export_organization ORG --output FILE [--embeddings]: an organization as JSON Lines."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser
from tqdm import tqdm

from memory_platform.commands import PlatformCommand
from memory_platform.progress import ProgressStream
from organizations.models import Organization
from transfer.export import export_organization


class Command(PlatformCommand):
    help = "Export an organization's memory (every version, link, entity, triple, proposal and audit event)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("organization", help="The organization's slug.")
        parser.add_argument("--output", required=True, type=Path, help="The file to write (a new one).")
        parser.add_argument(
            "--embeddings", action="store_true", help="Include the vectors (else the importing platform computes them)."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        organization = Organization.objects.filter(slug=options["organization"]).first()
        if organization is None:
            known = ", ".join(Organization.objects.order_by("slug").values_list("slug", flat=True)[:20]) or "none"
            raise CommandError(f"no organization '{options['organization']}' (known: {known})")
        output: Path = options["output"]
        if output.exists():
            raise CommandError(f"{output} exists; name a new file")
        partial = output.with_name(output.name + ".partial")
        started = time.monotonic()
        with tqdm(desc="Exporting", unit=" rows", file=ProgressStream(self.stderr)) as bar, partial.open("w") as out:
            counts = export_organization(
                organization, out, embeddings=options["embeddings"], progress=lambda _kind, n: bar.update(n)
            )
        partial.rename(output)
        total = sum(counts.values())
        self.stdout.write(
            f"exported {total} rows of {organization.slug} to {output} in {time.monotonic() - started:.1f} s"
        )
