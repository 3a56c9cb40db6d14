"""A real server for tests that need one: the platform's web server (granian, WSGI) serving the
project on the worker's test database, started once per test process (the MCP transport tests, the
isolation matrices, the database-down tests). Its fixtures are made available to every test
directory by tests/conftest.py."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from django.conf import settings

from memory_platform import web
from tests.conftest import database_url_of_the_test_database
from tests.tenancy_child import child_env

SERVER_START_TIMEOUT = 60.0
# What a test's server never takes from the shell: a test that wants Redis or a replica gives its own.
NOT_INHERITED = ("REDIS_URL", "DATABASE_REPLICA_URL", "MEMORY_PLATFORM_TOKEN")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="session")
def server_env(django_db_setup: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Environment for server children: the test database, a private broker, logs unbuffered."""
    env = {key: value for key, value in os.environ.items() if key not in NOT_INHERITED}
    env.update(
        DATABASE_URL=database_url_of_the_test_database(),
        # Backfills a write might schedule must not reach a worker someone else is running.
        CELERY_BROKER_DIR=str(tmp_path_factory.mktemp("broker")),
        PYTHONUNBUFFERED="1",
        LOG_LEVEL="WARNING",
        # The tenancy guard in the child, as in the tests' own processes.
        **child_env(),
    )
    return env


def tail(path: Path, lines: int = 30) -> str:
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


def start_server(env: dict[str, str], log: Path, *, workers: int = 1) -> tuple[subprocess.Popen[bytes], str]:
    """A web server process (``workers`` web processes) serving the project with ``env`` on a free
    port, once it answers /healthz."""
    port = free_port()
    command = web.command("127.0.0.1", port, workers=workers, log_level="info")
    with log.open("wb") as log_file:
        process = subprocess.Popen(command, cwd=settings.BASE_DIR, env=env, stdout=log_file, stderr=subprocess.STDOUT)
    base_url = f"http://127.0.0.1:{port}"
    SERVER_LOGS[base_url] = log
    deadline = time.monotonic() + SERVER_START_TIMEOUT
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"the web server exited with {process.returncode}:\n{tail(log)}")
        try:
            if httpx.get(f"{base_url}/healthz", timeout=2).status_code == 200:
                return process, base_url
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            stop(process)
            within = f"{SERVER_START_TIMEOUT:.0f} s"
            raise RuntimeError(f"the web server did not answer /healthz within {within}:\n{tail(log)}")
        time.sleep(0.1)


def manage(env: dict[str, str], *args: str, timeout: float = 180) -> str:
    """``python manage.py ARGS`` in a process of its own with ``env``; its standard output (it must succeed)."""
    done = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=settings.BASE_DIR, env=env, capture_output=True, text=True,
        check=False, timeout=timeout,
    )  # fmt: skip
    assert done.returncode == 0, f"manage.py {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@pytest.fixture(scope="session")
def mcp_server(server_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Base URL (``http://127.0.0.1:<port>``) of a web server process serving the project."""
    process, base_url = start_server(server_env, tmp_path_factory.mktemp("web") / "server.log")
    try:
        yield base_url
    finally:
        stop(process)


# Where each live server writes its log (tests read it to make sure nothing raised inside).
SERVER_LOGS: dict[str, Path] = {}


@pytest.fixture
def mcp_url(mcp_server: str) -> str:
    return f"{mcp_server}/mcp"


@pytest.fixture
def mcp_server_log(mcp_server: str) -> Path:
    """The live server's log (stdout and stderr)."""
    return SERVER_LOGS[mcp_server]
