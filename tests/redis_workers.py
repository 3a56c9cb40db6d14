"""Real Celery worker processes on the real Redis (127.0.0.1:6379, or TEST_REDIS_URL), each test on a
queue of its own, for the tests of what workers do when two run at once or one is killed."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import redis
from django.conf import settings

from tests.conftest import database_url_of_the_test_database

REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
StartWorker = Callable[[str], subprocess.Popen[bytes]]


def private_queue(prefix: str) -> str:
    """A new queue name on the real Redis (which every machine of the project runs)."""
    try:
        redis.Redis.from_url(REDIS_URL).ping()
    except redis.exceptions.ConnectionError as error:
        pytest.fail(f"these tests need the Redis at {REDIS_URL}: {error}")
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def drop_queue(name: str) -> None:
    redis.Redis.from_url(REDIS_URL).delete(name)


def workers(queue: str, tmp_path: Path, **env_extra: str) -> Iterator[StartWorker]:
    """``start(name)`` starts a worker on ``queue`` (its log in ``tmp_path``); all are killed at the end."""
    env = {k: v for k, v in os.environ.items() if k not in ("CELERY_BROKER_DIR",)}
    env.update(
        DATABASE_URL=database_url_of_the_test_database(),
        REDIS_URL=REDIS_URL,
        CELERY_QUEUE=queue,
        PYTHONUNBUFFERED="1",
        **env_extra,
    )
    started: list[subprocess.Popen[bytes]] = []

    def start(name: str) -> subprocess.Popen[bytes]:
        log = (tmp_path / f"{name}.log").open("ab")
        command = [
            sys.executable, "-m", "celery", "-A", "memory_platform", "worker", "--pool", "solo",
            "--loglevel", "info", "--hostname", f"{name}@%h", "--without-gossip", "--without-mingle",
        ]  # fmt: skip
        process = subprocess.Popen(command, cwd=settings.BASE_DIR, env=env, stdout=log, stderr=subprocess.STDOUT)
        started.append(process)
        return process

    yield start
    for process in started:
        if process.poll() is None:
            process.kill()
        process.wait()
