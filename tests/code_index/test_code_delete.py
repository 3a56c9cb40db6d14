"""code-delete removes a repository's code index (files, chunks, runs, uploads) and nothing else:
the repository and its memories stay. It is refused while a worker writes the index."""

from __future__ import annotations

import pytest

from code_index import services
from code_index.models import CodeChunk, CodeFile, CodeIndex, CodeIndexRun, CodeUpload, RunPhase
from memories.models import Memory
from memory_platform.exceptions import Conflict, NotFound
from organizations.models import AuditEvent, Repository
from tests.code_index.conftest import python_module, sha, sync_files, worker_holding_the_lock
from tests.conftest import MemoryFactory, Tenant

pytestmark = pytest.mark.django_db


def test_deleting_removes_the_index_and_keeps_the_repository_and_its_memories(
    acme: Tenant, repository: Repository, make_memory: MemoryFactory
) -> None:
    memory = make_memory(scope_type="repository", repository="payments-api", current_content="Cents, never floats.")
    sync_files(acme.agent, "payments-api", {"a.py": python_module("a"), "b.py": python_module("b")})
    services.code_index_manifest(principal=acme.agent, repository="payments-api", manifest={"c.py": sha("x\n")})
    services.code_index_upload(
        principal=acme.agent, repository="payments-api", files=[{"path": "c.py", "content": "x\n"}]
    )

    deleted = services.code_index_delete(principal=acme.agent, repository="payments-api")

    assert (deleted.repository, deleted.files, deleted.chunks) == ("payments-api", 2, 2)
    for model in (CodeIndex, CodeFile, CodeChunk, CodeIndexRun, CodeUpload):
        assert not model.objects.exists(), model
    assert Repository.objects.filter(pk=repository.pk).exists()
    assert Memory.objects.get(pk=memory.pk).current_content == "Cents, never floats."
    event = AuditEvent.objects.get(action="code_index.delete")
    assert event.data == {"repository": "payments-api", "files": 2, "chunks": 2}
    with pytest.raises(NotFound, match="has no code index yet"):
        services.code_index_delete(principal=acme.agent, repository="payments-api")


def test_deleting_is_refused_while_a_worker_writes_the_index(acme: Tenant, repository: Repository) -> None:
    sync_files(acme.agent, "payments-api", {"a.py": python_module("a")})
    run = services.code_index_manifest(principal=acme.agent, repository="payments-api", manifest={}).run
    CodeIndexRun.objects.filter(pk=run.pk).update(phase=RunPhase.RUNNING)

    with worker_holding_the_lock(run.index_id), pytest.raises(Conflict, match="being indexed right now"):
        services.code_index_delete(principal=acme.agent, repository="payments-api")

    assert CodeChunk.objects.count() == 1
    # Once the worker is gone, the run it left is no obstacle.
    assert services.code_index_delete(principal=acme.agent, repository="payments-api").files == 1
