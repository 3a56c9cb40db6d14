"""A watched directory is re-scanned by beat: a run is recorded only when something changed; a
directory no longer allowed (CODE_INDEX_ROOTS changed) stops being watched, with a failed run
saying why; beat's task closes dead runs and re-scans every watched index."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from code_index import pipeline, tasks
from code_index.models import CodeChunk, CodeIndex, CodeIndexRun
from code_index.services import code_index_path
from organizations.models import Repository
from tests.code_index.conftest import index_directory, python_module, write_tree
from tests.conftest import Tenant

pytestmark = pytest.mark.django_db


@pytest.fixture
def watched(acme: Tenant, repository: Repository, roots: Path) -> CodeIndex:
    write_tree(roots, {"app.py": python_module("app")})
    index_directory(acme.agent, "payments-api", roots, watch=True)
    return CodeIndex.objects.get()


def test_nothing_changed_records_no_run(watched: CodeIndex) -> None:
    assert pipeline.rescan(watched.pk) is None

    watched.refresh_from_db()
    assert watched.checked_at is not None
    assert CodeIndexRun.objects.count() == 1


def test_a_change_is_indexed_by_a_watch_run(watched: CodeIndex, roots: Path) -> None:
    write_tree(roots, {"app.py": python_module("app", "return total + 1"), "fees.py": python_module("fees")})

    run = pipeline.rescan(watched.pk)

    assert run is not None
    assert (run.trigger, run.status, run.requested_by, run.added, run.modified) == (
        "watch", "completed", "watch", 1, 1,
    )  # fmt: skip
    assert sorted(CodeChunk.objects.values_list("name", flat=True)) == ["app", "fees"]


def test_a_directory_no_longer_allowed_stops_being_watched(watched: CodeIndex, settings: Any) -> None:
    settings.CODE_INDEX_ROOTS = []

    run = pipeline.rescan(watched.pk)

    assert run is not None and run.status == "failed" and run.error.startswith("watching stopped: indexing a directory")
    watched.refresh_from_db()
    assert watched.watch is False
    assert CodeChunk.objects.count() == 1  # what was indexed stays searchable
    assert pipeline.rescan(watched.pk) is None


def test_an_open_run_is_left_to_pick_up_the_changes(acme: Tenant, watched: CodeIndex, roots: Path) -> None:
    queued = code_index_path(principal=acme.agent, repository="payments-api", path=str(roots), watch=True)
    write_tree(roots, {"fees.py": python_module("fees")})

    assert pipeline.rescan(watched.pk) is None
    assert CodeIndexRun.objects.filter(status="indexing").get() == queued


def test_beat_resumes_dead_runs_closes_those_resumed_enough_and_rescans_every_watched_index(
    watched: CodeIndex, monkeypatch: pytest.MonkeyPatch, settings: Any, django_capture_on_commit_callbacks: Any
) -> None:
    sent: list[int] = []
    resumed: list[int] = []
    monkeypatch.setattr(tasks.code_index_rescan, "delay", sent.append)
    monkeypatch.setattr(tasks.code_index_run, "delay", resumed.append)
    unwatched = CodeIndex.objects.create(organization=watched.organization, repository=_another(watched))
    dead = CodeIndexRun.objects.create(
        organization=watched.organization, index=unwatched, trigger="manifest", phase="running"
    )  # its worker is gone: nobody holds the lock

    with django_capture_on_commit_callbacks(execute=True):
        assert tasks.code_index_watch() == 1

    assert sent == [watched.pk]
    assert resumed == [dead.pk]
    dead.refresh_from_db()
    assert (dead.status, dead.phase, dead.resumed) == ("indexing", "queued", 1)

    CodeIndexRun.objects.filter(pk=dead.pk).update(phase="running", resumed=settings.CODE_INDEX_RESUME_ATTEMPTS)
    tasks.code_index_watch()  # its worker died again, as many times as it may

    dead.refresh_from_db()
    assert dead.status == "failed" and dead.error.startswith("interrupted")
    assert resumed == [dead.pk]


def _another(index: CodeIndex) -> Repository:
    return Repository.objects.create(organization=index.organization, slug="docs")
