"""manage.py backup --output FILE: the whole database, as pg_dump's custom format (memory_platform.backups)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser
from django.db import connection

from memory_platform.backups import BackupError, backup
from memory_platform.commands import PlatformCommand


class Command(PlatformCommand):
    help = "Back up the whole database (every organization) to a file, with pg_dump's custom format."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--output", required=True, type=Path, help="The backup file to write (a new one).")

    def handle(self, *args: Any, **options: Any) -> None:
        connection.ensure_connection()  # starts the embedded server if it is the database
        started = time.monotonic()
        try:
            backup(connection.settings_dict, options["output"])
        except BackupError as error:
            raise CommandError(str(error)) from error
        size = options["output"].stat().st_size
        self.stdout.write(f"backed up to {options['output']} ({size:,} bytes) in {time.monotonic() - started:.1f} s")
