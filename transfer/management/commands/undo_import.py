"""manage.py undo_import RUN --reason TEXT: the rows an import made, taken out again."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError, CommandParser

from memory_platform.commands import PlatformCommand
from memory_platform.exceptions import DomainError
from transfer.undo import import_undo


class Command(PlatformCommand):
    help = (
        "Undo an import (its id is what import_organization printed): remove the rows it made, unless work "
        "made since depends on them. Audited; importing the same file again brings them back."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("run", help="The import's id.")
        parser.add_argument("--reason", required=True, help="Why, for the audit trail.")

    def handle(self, *args: Any, **options: Any) -> None:
        if not options["reason"].strip():
            raise CommandError("--reason must say why the import is undone")
        try:
            removed = import_undo(options["run"], reason=options["reason"])
        except DomainError as error:
            raise CommandError(error.message) from None
        said = ", ".join(f"{n} {kind}" for kind, n in removed.items()) or "nothing"
        self.stdout.write(f"undid import {options['run']}: removed {said}")
