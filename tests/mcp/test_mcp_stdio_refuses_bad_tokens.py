from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import Tenant
from tests.mcp.stdio import INITIALIZE, send

pytestmark = pytest.mark.django_db(transaction=True)

Spawn = Callable[..., subprocess.Popen[bytes]]
UNKNOWN_TOKEN = "mp_deadbeef_0000000000000000000000000000000000"


def finish(process: subprocess.Popen[bytes]) -> tuple[int, bytes, str]:
    """Close stdin, wait for the exit; return its status, stdout and stderr."""
    stdout, stderr = process.communicate(timeout=60)
    return process.returncode, stdout, stderr.decode()


def test_an_unknown_token_exits_non_zero_with_the_reason_on_stderr(
    acme: Tenant, stdio_env: Callable[..., dict[str, str]], spawn_stdio: Spawn
) -> None:
    process = spawn_stdio(stdio_env(UNKNOWN_TOKEN))
    send(process, INITIALIZE)

    code, stdout, stderr = finish(process)

    assert code != 0
    assert "invalid token" in stderr
    assert "Traceback" not in stderr
    # The handshake is answered before the token is checked (it must come within a second, and
    # checking needs Django and the database); the process then exits with the reason.
    assert len(stdout.splitlines()) <= 1, "nothing but (at most) the handshake answer"


def test_a_malformed_token_without_any_input_writes_nothing_on_stdout(
    stdio_env: Callable[..., dict[str, str]], spawn_stdio: Spawn
) -> None:
    code, stdout, stderr = finish(spawn_stdio(stdio_env("hunter2")))

    assert code != 0
    assert "malformed token" in stderr
    assert "Traceback" not in stderr
    assert stdout == b""


def test_no_token_at_all_is_explained(stdio_env: Callable[..., dict[str, str]], spawn_stdio: Spawn) -> None:
    code, stdout, stderr = finish(spawn_stdio(stdio_env()))

    assert code != 0
    assert "MEMORY_PLATFORM_TOKEN" in stderr
    assert stdout == b""


def test_an_unreadable_token_file_is_explained(
    stdio_env: Callable[..., dict[str, str]], spawn_stdio: Spawn, tmp_path: Path
) -> None:
    code, stdout, stderr = finish(spawn_stdio(stdio_env(), "--token-file", str(tmp_path / "absent")))

    assert code != 0
    assert "--token-file" in stderr
    assert stdout == b""
