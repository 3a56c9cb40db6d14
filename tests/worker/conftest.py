"""Fixtures for background work: an unreachable embedding endpoint, a private file broker, and
the environment a worker (or serve) subprocess needs to use the test database and that broker."""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from memories.embeddings import EmbeddingProvider, get_provider, reset_provider
from memories.embeddings.http import OpenAICompatibleProvider
from memory_platform.celery import app
from memory_platform.worker import BackgroundWorker
from tests.conftest import database_url_of_the_test_database
from tests.live_server import NOT_INHERITED
from tests.tenancy_child import child_env


@pytest.fixture
def real_provider() -> Iterator[EmbeddingProvider]:
    """The configured (local, offline) provider; whatever a test installs is undone afterwards."""
    provider = get_provider()
    yield provider
    reset_provider(provider)


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def provider_down(real_provider: EmbeddingProvider) -> OpenAICompatibleProvider:
    """A real HTTP provider whose endpoint refuses connections: an embedding service that is down."""
    unreachable = OpenAICompatibleProvider(
        base_url=f"http://127.0.0.1:{closed_port()}/v1",
        model="unreachable-model",
        api_key="",
        dimensions=real_provider.dimensions,
        timeout=2,
    )
    reset_provider(unreachable)
    return unreachable


@pytest.fixture
def backfills(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """Collects the backfills writes schedule (on commit) instead of sending them to a broker."""
    scheduled: list[list[str]] = []
    monkeypatch.setattr("memories.embedding_pipeline.schedule_backfill", scheduled.append)
    return scheduled


def _reset_broker_pools() -> None:
    # The app caches broker connections and producers; new transport options need new ones.
    app._pool = None
    app.amqp._producer_pool = None


@pytest.fixture
def broker_dir(tmp_path: Path) -> Iterator[Path]:
    """A file broker of this test's own: tasks sent from this process land in it."""
    folder = tmp_path / "broker"
    (folder / "processed").mkdir(parents=True)
    saved = app.conf.broker_url, app.conf.broker_transport_options
    app.conf.broker_url = "filesystem://localhost//"
    app.conf.broker_transport_options = {
        "data_folder_in": str(folder),
        "data_folder_out": str(folder),
        "processed_folder": str(folder / "processed"),
        "control_folder": str(folder / "control"),
        "store_processed": False,
    }
    _reset_broker_pools()
    yield folder
    app.conf.broker_url, app.conf.broker_transport_options = saved
    _reset_broker_pools()


@pytest.fixture
def subprocess_env(broker_dir: Path) -> dict[str, str]:
    """Environment for a worker or serve child: the test database and this test's broker."""
    env = {key: value for key, value in os.environ.items() if key not in (*NOT_INHERITED, "CELERY_BROKER_URL")}
    env.update(
        DATABASE_URL=database_url_of_the_test_database(), CELERY_BROKER_DIR=str(broker_dir), PYTHONUNBUFFERED="1",
        **child_env(),  # the tenancy guard in the child (tests.tenancy_child)
    )  # fmt: skip
    return env


def worker_on(broker_dir: Path, env: dict[str, str]) -> BackgroundWorker:
    """serve's supervised worker (with beat) taking this test's broker, its log and beat's schedule
    beside it; started by the caller."""
    here = broker_dir.parent
    return BackgroundWorker(log_file=here / "worker.log", schedule_file=here / "celerybeat-schedule", env=env)


def wait_for(condition: Callable[[], Any], timeout: float, what: str, poll: float = 0.2) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = condition()
        if result:
            return result
        time.sleep(poll)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


def process_gone(pid: int) -> bool:
    """True when no process has this pid any more (or only its zombie, waiting to be reaped)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return True
    return state in ("Z", "X")
