"""Connections of the tests' own to the test server, outside Django's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import psycopg
from django.conf import settings

from memory_platform import embedded_db


def connect(database: dict[str, Any], dbname: str) -> psycopg.Connection[Any]:
    """A connection of its own (autocommit) to ``dbname`` on the server ``database`` settings name,
    starting the embedded server first when it is the one (a fresh checkout's first run: nothing
    else has started it yet)."""
    if settings.EMBEDDED_DATABASE:
        embedded_db.ensure_running(Path(settings.DATA_DIR))
    return psycopg.connect(
        host=database["HOST"] or None, port=database["PORT"] or None, user=database["USER"] or None,
        password=database["PASSWORD"] or None, dbname=dbname, autocommit=True,
    )  # fmt: skip
