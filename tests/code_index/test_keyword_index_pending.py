"""The chunks' keyword index keeps GIN's pending list for cheap bulk writes, and every run merges it
when it ends (finished, or closed after its worker died), so searches never read it."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from django.db import connection

from code_index import pipeline, recovery, services
from code_index.models import CodeIndexRun
from code_index.writer import KEYWORD_INDEX, merge_pending_keywords
from tests.code_index.conftest import index_directory, python_module, write_tree
from tests.conftest import Tenant

pytestmark = pytest.mark.django_db

FILES: dict[str, str | bytes] = {f"src/module_{n}.py": python_module(f"module_{n}") for n in range(6)}


class Crash(BaseException):
    """The worker process dying: nothing of the run's own handling runs."""


def pending_pages() -> int:
    """The pending list's pages (asking merges them, which empties it)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT gin_clean_pending_list(%s::regclass)", [KEYWORD_INDEX])
        return int(cursor.fetchone()[0])


@pytest.fixture(params=["merged", "unmerged"])
def merging(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    """Runs as they are, and runs that leave their words pending (as they did before), which shows
    that the pending list is kept and what the merge is for."""
    if request.param == "unmerged":
        monkeypatch.setattr(pipeline, "merge_pending_keywords", lambda: 0)
        monkeypatch.setattr(recovery, "merge_pending_keywords", lambda: 0)
    pending_pages()  # whatever the database held before the test
    return request.param == "merged"


@pytest.mark.usefixtures("repository", "embedder")
def test_a_finished_run_leaves_nothing_pending(acme: Tenant, roots: Path, merging: bool) -> None:
    write_tree(roots, FILES)

    run = index_directory(acme.agent, "payments-api", roots)

    assert (run.status, run.chunks_written) == ("completed", 6)
    assert (pending_pages() == 0) is merging


@pytest.mark.usefixtures("repository", "embedder")
def test_a_run_closed_after_its_worker_died_leaves_nothing_pending(
    acme: Tenant, roots: Path, merging: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_tree(roots, FILES)
    monkeypatch.setattr(pipeline, "BATCH_FILES", 2)
    dead = services.code_index_path(principal=acme.agent, repository="payments-api", path=str(roots))

    def die(run: CodeIndexRun) -> None:
        raise Crash

    with pytest.raises(Crash):
        pipeline.run_index(dead.pk, progress=die)  # after its first batch of two files

    assert recovery.close_stale_runs() == 1
    assert (pending_pages() == 0) is merging


def test_a_refused_merge_is_logged_and_leaves_the_callers_transaction_usable(
    acme: Tenant, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("code_index.writer.KEYWORD_INDEX", "no_such_index")

    with caplog.at_level(logging.WARNING, logger="code_index.writer"):
        assert merge_pending_keywords() == 0

    assert "left to vacuum" in caplog.text and "no_such_index" in caplog.text
    with connection.cursor() as cursor:  # the test's transaction was not aborted
        cursor.execute("SELECT 1")
        assert cursor.fetchone() == (1,)
