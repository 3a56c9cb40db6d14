"""A whole database backed up and restored with PostgreSQL's own tools (``manage.py backup`` and
``manage.py restore``): pg_dump's custom format, then pg_restore into an empty database.

The binaries are the embedded PostgreSQL's (version 18, whose pg_dump reads servers from 9.2 on),
else the ones on PATH. This is the tool for a machine's disaster: everything, every organization,
exactly as it was.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from psycopg.conninfo import make_conninfo

from memory_platform import embedded_db

# Tables a restore must find empty (or absent): restoring over memories would mix two platforms.
_MUST_BE_EMPTY = ("memories_memory", "organizations_organization")


class BackupError(RuntimeError):
    """A backup or restore could not be made; the message says why and what to do."""


def tool(name: str) -> str:
    """The embedded PostgreSQL's ``name`` (pg_dump, pg_restore), else the one on PATH."""
    try:
        embedded = Path(embedded_db._bin(name))
    except embedded_db.EmbeddedDatabaseError:
        embedded = None
    if embedded is not None and embedded.is_file():
        return str(embedded)
    found = shutil.which(name)
    if found is None:
        raise BackupError(
            f"{name} was found neither in the embedded PostgreSQL nor on PATH; install PostgreSQL's client"
        )
    return found


def _conninfo(settings_dict: dict[str, Any]) -> tuple[str, dict[str, str]]:
    """A libpq connection string for Django's database settings, and the environment with its password."""
    parameters = {
        "dbname": settings_dict["NAME"],
        "user": settings_dict.get("USER") or None,
        "host": settings_dict.get("HOST") or None,
        "port": str(settings_dict["PORT"]) if settings_dict.get("PORT") else None,
    }
    options = settings_dict.get("OPTIONS") or {}
    parameters.update({key: str(value) for key, value in options.items() if key in ("sslmode", "sslrootcert")})
    env = dict(os.environ)
    if settings_dict.get("PASSWORD"):
        env["PGPASSWORD"] = str(settings_dict["PASSWORD"])
    return make_conninfo(**{key: value for key, value in parameters.items() if value is not None}), env


def _run(command: list[str], env: dict[str, str]) -> None:
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0:
        raise BackupError(f"{Path(command[0]).name} failed: {done.stderr.strip() or done.stdout.strip()}")


def backup(settings_dict: dict[str, Any], output: Path) -> None:
    """Write the whole database to ``output`` (pg_dump, custom format: compressed, restorable by table)."""
    if output.exists():
        raise BackupError(f"{output} exists; name a new file (a backup never overwrites another)")
    output.parent.mkdir(parents=True, exist_ok=True)
    conninfo, env = _conninfo(settings_dict)
    partial = output.with_name(output.name + ".partial")
    try:
        _run([tool("pg_dump"), "--format=custom", "--no-owner", f"--file={partial}", f"--dbname={conninfo}"], env)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    partial.rename(output)


def restore(settings_dict: dict[str, Any], source: Path, *, cursor: Any) -> None:
    """Restore ``source`` into the configured database, which must hold no memories or organizations."""
    if not source.is_file():
        raise BackupError(f"{source} is not a file; name a backup made by `manage.py backup`")
    for table in _MUST_BE_EMPTY:
        cursor.execute("SELECT to_regclass(%s) IS NOT NULL", [table])
        if cursor.fetchone()[0]:
            cursor.execute(f'SELECT EXISTS (SELECT 1 FROM "{table}")')  # noqa: S608 - our table names
            if cursor.fetchone()[0]:
                raise BackupError(
                    f"the database {settings_dict['NAME']} already holds data ({table} is not empty); restore into "
                    "an empty one: a new MEMORY_PLATFORM_DATA_DIR, or a new database in DATABASE_URL"
                )
    conninfo, env = _conninfo(settings_dict)
    # --clean --if-exists: drop what an empty, migrated database already has (tables without rows)
    # before creating it as the backup has it; one transaction, so a failure leaves nothing half-done.
    command = [tool("pg_restore"), "--clean", "--if-exists", "--no-owner", "--single-transaction", "--exit-on-error"]
    _run([*command, f"--dbname={conninfo}", str(source)], env)
