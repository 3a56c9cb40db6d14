"""Readers search and read statuses; agents (and up) index, sync and delete. A refused write
changes nothing and writes no audit event."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from code_index import selectors, services
from code_index.models import CodeIndex, CodeIndexRun
from code_index.search import CodeSearchParams, code_search
from memory_platform.exceptions import PermissionDenied
from organizations.models import AuditEvent, Repository
from tests.code_index.conftest import python_module, sha, sync_files
from tests.conftest import Tenant

pytestmark = pytest.mark.django_db

FILES = {"src/app.py": python_module("app")}

WRITES: dict[str, Callable[..., Any]] = {
    "path": lambda principal, root: services.code_index_path(
        principal=principal, repository="payments-api", path=str(root)
    ),
    "manifest": lambda principal, root: services.code_index_manifest(
        principal=principal, repository="payments-api", manifest={"src/new.py": sha("x = 1\n")}
    ),
    "files": lambda principal, root: services.code_index_upload(
        principal=principal, repository="payments-api", files=[{"path": "src/new.py", "content": "x = 1\n"}]
    ),
    "delete": lambda principal, root: services.code_index_delete(principal=principal, repository="payments-api"),
}


@pytest.mark.parametrize("write", list(WRITES))
def test_a_reader_cannot_index_sync_or_delete(acme: Tenant, repository: Repository, roots: Path, write: str) -> None:
    sync_files(acme.agent, "payments-api", FILES)
    services.code_index_manifest(
        principal=acme.agent, repository="payments-api", manifest={"src/new.py": sha("x = 1\n")}
    )
    runs, events = CodeIndexRun.objects.count(), AuditEvent.objects.count()

    with pytest.raises(PermissionDenied) as caught:
        WRITES[write](acme.reader, roots)

    assert "needs the agent role" in caught.value.message
    assert (CodeIndexRun.objects.count(), AuditEvent.objects.count()) == (runs, events)
    assert CodeIndex.objects.filter(repository=repository).exists()


@pytest.mark.parametrize("role", ["agent", "curator", "admin", "person"])
def test_agents_and_up_may_index_and_delete(acme: Tenant, repository: Repository, roots: Path, role: str) -> None:
    principal = getattr(acme, role)

    assert WRITES["path"](principal, roots).status == "indexing"
    assert WRITES["delete"](principal, roots).repository == "payments-api"
    assert AuditEvent.objects.filter(action="code_index.delete", actor=principal.label).exists()


@pytest.mark.real_embedder  # which chunks a query finds
def test_a_reader_searches_and_reads_statuses(acme: Tenant, repository: Repository) -> None:
    sync_files(acme.agent, "payments-api", FILES)

    assert [status.index.repository.slug for status in selectors.code_index_list(acme.reader)] == ["payments-api"]
    assert selectors.code_index_status(acme.reader, "payments-api").status == "completed"
    assert selectors.code_index_runs(acme.reader, "payments-api").count() == 1
    hits = code_search(acme.reader, CodeSearchParams.build(query="app values", mode="keyword")).hits
    assert [hit.chunk.name for hit in hits] == ["app"]
