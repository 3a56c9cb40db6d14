"""Connections of the tests' own to the test server, outside Django's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import psycopg
from django.conf import settings
from psycopg.conninfo import make_conninfo

from memory_platform import embedded_db


def conninfo(database: dict[str, Any], dbname: str) -> str:
    """A libpq connection string to ``dbname`` on the server ``database`` settings name (for
    psycopg, and for the command-line tools: pg_dump, pg_restore, psql)."""
    given = {"host": database["HOST"], "port": database["PORT"], "user": database["USER"],
             "password": database["PASSWORD"]}  # fmt: skip
    return make_conninfo(dbname=dbname, **{key: str(value) for key, value in given.items() if value})


def connect(database: dict[str, Any], dbname: str) -> psycopg.Connection[Any]:
    """A connection of its own (autocommit) to ``dbname`` on the server ``database`` settings name,
    starting the embedded server first when it is the one (a fresh checkout's first run: nothing
    else has started it yet)."""
    if settings.EMBEDDED_DATABASE:
        embedded_db.ensure_running(Path(settings.DATA_DIR))
    return psycopg.connect(conninfo(database, dbname), autocommit=True)
