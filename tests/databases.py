"""The test databases: made from a migrated template, emptied by DELETE.

**Made from a template.**
Migrating an empty database costs ~10 s of CPU (90 migrations, most of it Django rendering their
states), and each xdist worker makes its own test database. The first worker migrates its database
as usual, then copies it into a template named after the migrations it ran; every other worker, and
every later run while the migrations stay the same, makes its database with ``CREATE DATABASE ...
TEMPLATE`` (Django's own ``TEST["TEMPLATE"]``), after which ``migrate`` finds nothing to apply.

Workers take turns under an advisory lock on the server, so a template is made once and never
copied while it is being made. A template of migrations that changed is dropped when the next one
is made. ``--reuse-db`` keeps working as before: an existing test database is used as it is (and,
holding an earlier run's rows, is never made a template).

**Emptied by DELETE.** After each ``transaction=True`` test Django empties every table (its ``flush``
command), with one ``TRUNCATE`` of all ~50 tables: the server makes every table and index anew, ~0.35 s
of its CPU each time, ~200 times a run, for tables that hold a few rows. Here ``flush`` deletes the
rows instead (~0.01 s): the same rows go, constraints are checked at commit (every foreign key is
deferrable), and a flush that resets sequences or cascades (no test asks) is Django's own.

**Servers of their own start migrated.** A test that starts a database server of its own (the
production topology, the read replica's primary) loads the template into it (``load_migrated_schema``:
a dump restored, ~1 s) before it runs ``migrate`` as a deployment does, which then finds nothing to
apply: ~8 s of CPU less each. Migrating an empty database is what the template's first worker does.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib.util
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import django
import psycopg
import pytest
from django.apps import apps
from django.conf import settings
from django.db import connections
from django.db.backends.base.operations import BaseDatabaseOperations
from django.test.utils import setup_databases, teardown_databases
from psycopg import sql

from memory_platform.backups import tool
from tests.connections import connect, conninfo

TEMPLATE_PREFIX = "test_template_"
LOCK_KEY = 7_244_630_118  # pg_advisory_lock's key for "the test templates", any fixed number


@functools.cache
def migrations_digest() -> str:
    """What the schema is made from: Django's version, every migration file, and the project's
    modules they import (a migration may build its operations with them)."""
    digest = hashlib.sha256(django.get_version().encode())
    used: set[str] = set()
    for app in sorted(apps.get_app_configs(), key=lambda app: app.label):
        folder = Path(app.path) / "migrations"
        for path in sorted(folder.glob("*.py")) if folder.is_dir() else ():
            digest.update(f"{app.label}/{path.name}".encode() + path.read_bytes())
            used.update(_project_imports(path))
    for name in sorted(used):
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.origin:
            digest.update(name.encode() + Path(spec.origin).read_bytes())
    return digest.hexdigest()[:16]


def _project_imports(path: Path) -> set[str]:
    """The modules of this project a Python file imports."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_bytes())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
    return {name for name in names if (Path(settings.BASE_DIR) / name.split(".")[0]).is_dir()}


def _server(database: dict[str, Any]) -> psycopg.Connection[Any]:
    """A connection to the server's maintenance database (CREATE DATABASE cannot run in another's)."""
    return connect(database, "postgres")


def _exists(server: psycopg.Connection[Any], name: str) -> bool:
    return server.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone() is not None


def _make_template(server: psycopg.Connection[Any], source: str, template: str) -> None:
    """``template`` as a copy of the freshly migrated ``source``; templates of other migrations dropped."""
    # No session may be connected to the database copied, pooled ones included.
    connections["default"].close()
    connections["default"].close_pool()  # type: ignore[attr-defined]  # Django's, missing from its stubs
    stale = server.execute(
        "SELECT datname FROM pg_database WHERE datname LIKE %s AND datname <> %s", [f"{TEMPLATE_PREFIX}%", template]
    ).fetchall()
    for (name,) in stale:
        server.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
    server.execute(sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(sql.Identifier(template), sql.Identifier(source)))


@pytest.fixture(scope="session")
def django_db_setup(  # noqa: PLR0917 - fixtures, by name
    request: pytest.FixtureRequest,
    django_test_environment: None,
    django_db_blocker: Any,
    django_db_keepdb: bool,
    django_db_createdb: bool,
    django_db_modify_db_settings: None,
) -> Iterator[None]:
    """pytest-django's fixture of the same name, with the test database copied from the template."""
    keepdb = django_db_keepdb and not django_db_createdb
    database = settings.DATABASES["default"]
    template = TEMPLATE_PREFIX + migrations_digest()
    with django_db_blocker.unblock(), _server(database) as server:
        server.execute("SELECT pg_advisory_lock(%s)", [LOCK_KEY])
        try:
            had_template = _exists(server, template)
            if had_template:
                database.setdefault("TEST", {})["TEMPLATE"] = template
                connections["default"].settings_dict["TEST"]["TEMPLATE"] = template
            names = setup_databases(
                verbosity=request.config.option.verbose, interactive=False, keepdb=keepdb,
                serialized_aliases=(),  # no test asks for serialized rollback
            )  # fmt: skip
            if not had_template and not keepdb:  # a kept database may hold an earlier run's rows
                _make_template(server, connections["default"].settings_dict["NAME"], template)
        finally:
            server.execute("SELECT pg_advisory_unlock(%s)", [LOCK_KEY])
    yield
    if not keepdb:
        with django_db_blocker.unblock():
            teardown_databases(names, verbosity=request.config.option.verbose)


@pytest.fixture(scope="session", autouse=True)
def _flush_deletes() -> Iterator[None]:
    """``flush`` deletes every row instead of truncating every table (see the module's docstring).
    Needs no database: the operations class is patched before any test asks for one."""
    operations = type(connections["default"].ops)
    truncate = operations.sql_flush

    def sql_flush(
        self: BaseDatabaseOperations, style: Any, tables: list[str], *, reset_sequences: bool = False,
        allow_cascade: bool = False,
    ) -> list[str]:  # fmt: skip
        if reset_sequences or allow_cascade or not tables:
            return truncate(self, style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade)
        deletes = [f"DELETE FROM {self.quote_name(table)}" for table in tables]  # noqa: S608 - Django's table names
        return ["; ".join(["SET CONSTRAINTS ALL DEFERRED", *deletes])]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(operations, "sql_flush", sql_flush)
        yield


# The template's dump, made the first time this process loads it into another server.
_template_dumps: dict[str, Path] = {}


def load_migrated_schema(url: str, directory: Path) -> bool:
    """What this run's migrations make, with Django's record of them, restored into the empty
    database at ``url`` (another server's; restored as the URL's user, who owns what it makes): a
    ``migrate`` after finds nothing to apply. False, and nothing done, when there is no template to
    copy (a run on kept databases, ``--reuse-db``, may have none): the caller's ``migrate`` then
    makes it all. The dump is written into ``directory`` once per process."""
    template = TEMPLATE_PREFIX + migrations_digest()
    database = settings.DATABASES["default"]
    with _server(database) as server:
        if not _exists(server, template):
            return False
    dump = _template_dumps.get(template)
    if dump is None:
        dump = directory / f"{template}.dump"
        _run(tool("pg_dump"), "--format=custom", f"--file={dump}", f"--dbname={conninfo(database, template)}")
        _template_dumps[template] = dump
    _run(tool("pg_restore"), "--no-owner", "--exit-on-error", f"--dbname={url}", str(dump))
    return True


def _run(*command: str) -> None:
    done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=120)
    assert done.returncode == 0, f"{command[0]} failed: {done.stderr}"
