"""manage.py import_organization FILE --organization SLUG [--create] [--new-ids]: an export brought in."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser
from tqdm import tqdm

from memory_platform.commands import PlatformCommand
from memory_platform.exceptions import DomainError
from memory_platform.progress import ProgressStream
from transfer.importer import ImportProblem, import_organization


class Command(PlatformCommand):
    help = (
        "Import an export (manage.py export_organization) into an organization. The file is checked whole first; "
        "an import cut off goes on from where it stopped when run again."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("source", type=Path, help="The export file.")
        parser.add_argument("--organization", required=True, help="The organization to import into.")
        parser.add_argument("--create", action="store_true", help="Create the organization (it must not exist).")
        parser.add_argument(
            "--new-ids", action="store_true", help="Give every row a new id (to import beside rows the platform holds)."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        source: Path = options["source"]
        if not source.is_file():
            raise CommandError(f"{source} is not a file; name an export made by export_organization")
        started = time.monotonic()
        try:
            with (
                tqdm(desc="Importing", unit=" rows", file=ProgressStream(self.stderr)) as bar,
                source.open("rb") as file,
            ):
                result = import_organization(
                    file,
                    slug=options["organization"],
                    create=options["create"],
                    new_ids=options["new_ids"],
                    progress=lambda _kind, n: bar.update(n),
                )
        except ImportProblem as problem:
            raise CommandError(f"{source}: {problem}; nothing was imported") from None
        except DomainError as error:
            raise CommandError(error.message) from None
        except KeyboardInterrupt:
            raise CommandError(
                "stopped: what was stored stays; run the same command again to go on from where it stopped"
            ) from None
        total = sum(result.counts.values())
        pending = f", {result.pending_embeddings} memories to embed" if result.pending_embeddings else ""
        resumed = f" (went on after line {result.resumed_from})" if result.resumed_from else ""
        self.stdout.write(
            f"imported {total} rows into {result.organization.slug}{pending}{resumed} "
            f"in {time.monotonic() - started:.1f} s (import {result.run.pk}: `manage.py undo_import` takes it back)"
        )
