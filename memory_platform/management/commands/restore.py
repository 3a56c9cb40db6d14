"""manage.py restore FILE: a backup of `manage.py backup` into an empty database (memory_platform.backups)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser
from django.db import connection

from memory_platform.backups import BackupError, restore
from memory_platform.commands import PlatformCommand


class Command(PlatformCommand):
    help = "Restore a backup made by `manage.py backup` into this platform's database, which must be empty."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("source", type=Path, help="The backup file.")

    def handle(self, *args: Any, **options: Any) -> None:
        started = time.monotonic()
        try:
            with connection.cursor() as cursor:
                restore(connection.settings_dict, options["source"], cursor=cursor)
        except BackupError as error:
            raise CommandError(str(error)) from error
        connection.close()
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM memories_memory")
            (memories,) = cursor.fetchone()
        self.stdout.write(f"restored {options['source']}: {memories} memories, in {time.monotonic() - started:.1f} s")
