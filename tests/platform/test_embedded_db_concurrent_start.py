"""Several processes starting the embedded server at once end up sharing one healthy server."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from memory_platform import embedded_db

pytestmark = pytest.mark.processes

REPO = Path(__file__).resolve().parents[2]

START = """
import sys
from pathlib import Path
from memory_platform import embedded_db
server = embedded_db.ensure_running(Path(sys.argv[1]))
print(server.uri())
"""


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "var"
    yield directory
    embedded_db.stop(directory)


def _postmasters(pgdata: Path) -> list[str]:
    out = subprocess.run(["ps", "-ww", "-eo", "args"], capture_output=True, text=True, check=True).stdout  # noqa: S607
    return [line for line in out.splitlines() if "postgres" in line and f"-D {pgdata}" in line]


def test_racing_processes_start_one_server_and_data_survives_restart(data_dir: Path) -> None:
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", START, str(data_dir)],
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    results = [process.communicate(timeout=120) for process in processes]
    assert [process.returncode for process in processes] == [0, 0, 0, 0], [err for _, err in results]
    uris = {out.strip() for out, _ in results}
    assert len(uris) == 1

    server = embedded_db.EmbeddedServer(data_dir.resolve())
    assert len(_postmasters(server.pgdata)) == 1
    with psycopg.connect(server.uri(), autocommit=True) as conn:
        conn.execute("CREATE TABLE kept (value text)")
        conn.execute("INSERT INTO kept VALUES ('survives')")

    assert embedded_db.stop(data_dir) is True
    assert not embedded_db.is_running(server)
    embedded_db._ensured.clear()  # this process forgets it started the server, like a new process

    embedded_db.ensure_running(data_dir)
    with psycopg.connect(server.uri(), autocommit=True) as conn:
        assert conn.execute("SELECT value FROM kept").fetchone() == ("survives",)
