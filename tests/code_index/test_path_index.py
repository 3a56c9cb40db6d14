"""Indexing a directory: the first run reads everything; the next ones re-read, re-chunk and
re-embed only what changed (the embedder counts what it is asked), remove what is gone, and the
status reports every run, incremental ones included."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from code_index.models import CodeChunk, CodeFile, CodeIndex
from code_index.public import status_values
from code_index.search import CodeSearchParams, code_search
from code_index.selectors import code_index_status
from memories.embeddings import reset_provider
from memories.models import Memory
from organizations.models import Repository
from tests.code_index.conftest import CountingEmbedder, index_directory, python_module, write_tree
from tests.conftest import MemoryFactory, Tenant

pytestmark = pytest.mark.django_db

TWO_FUNCTIONS = python_module("settle") + "\n\n" + python_module("refund").split("\n\n\n", 1)[1]


def tree(root: Path) -> Path:
    return write_tree(
        root,
        {
            "payments/settle.py": TWO_FUNCTIONS,
            "payments/ledger.py": python_module("ledger"),
            "README.md": "# Payments\n\nSettles card payments every night at 02:00 UTC, in integer cents.\n",
        },
    )


def test_the_first_run_indexes_every_file(
    acme: Tenant, repository: Repository, roots: Path, embedder: CountingEmbedder
) -> None:
    tree(roots)

    run = index_directory(acme.agent, "payments-api", roots)

    assert (run.status, run.total_files, run.indexed_files, run.added) == ("completed", 3, 3, 3)
    chunks = CodeChunk.objects.order_by("path", "start_line")
    assert [(c.path, c.chunk_type, c.name) for c in chunks] == [
        ("README.md", "section", "Payments"),
        ("payments/ledger.py", "function", "ledger"),
        ("payments/settle.py", "function", "settle"),
        ("payments/settle.py", "function", "refund"),
    ]
    assert all(chunk.embedding is not None and chunk.search_vector for chunk in chunks)
    assert len(embedder.texts) == 4
    status = status_values(code_index_status(acme.reader, "payments-api"))
    assert {k: status[k] for k in ("status", "total_files", "indexed_files", "total_chunks", "source", "path")} == {
        "status": "completed",
        "total_files": 3,
        "indexed_files": 3,
        "total_chunks": 4,
        "source": "path",
        "path": str(roots),
    }
    assert status["languages"] == {"markdown": 1, "python": 2}
    assert status["started_at"] and status["completed_at"]


def test_a_second_run_reads_only_what_changed_and_removes_what_is_gone(
    acme: Tenant, repository: Repository, roots: Path, embedder: CountingEmbedder
) -> None:
    tree(roots)
    index_directory(acme.agent, "payments-api", roots)
    untouched = CodeChunk.objects.get(name="ledger").pk
    embedder.texts.clear()
    # One function of settle.py changes; ledger.py is touched (same content); README.md is deleted.
    (roots / "payments/settle.py").write_text(TWO_FUNCTIONS.replace("return total", "return total * 100", 1))
    os.utime(roots / "payments/ledger.py", ns=(1, 1))
    (roots / "README.md").unlink()

    run = index_directory(acme.agent, "payments-api", roots)

    assert (run.status, run.total_files, run.modified, run.unchanged, run.removed, run.added) == (
        "completed", 2, 1, 1, 1, 0,
    )  # fmt: skip
    # Only the changed function was embedded; its unchanged neighbour reused its vector.
    assert len(embedder.texts) == 1 and "return total * 100" in embedder.texts[0]
    assert (run.embeddings_computed, run.embeddings_reused) == (1, 1)
    assert CodeChunk.objects.filter(pk=untouched).exists()  # ledger.py was not rewritten
    assert sorted(CodeFile.objects.values_list("path", flat=True)) == ["payments/ledger.py", "payments/settle.py"]
    assert CodeFile.objects.get(path="payments/ledger.py").mtime_ns == 1
    status = status_values(code_index_status(acme.agent, "payments-api"))
    assert (status["total_files"], status["total_chunks"], status["last_run"]["modified"]) == (2, 3, 1)


def test_a_run_with_nothing_changed_embeds_nothing(
    acme: Tenant, repository: Repository, roots: Path, embedder: CountingEmbedder
) -> None:
    tree(roots)
    index_directory(acme.agent, "payments-api", roots)
    embedder.texts.clear()

    run = index_directory(acme.agent, "payments-api", roots)

    assert (run.unchanged, run.chunks_written, embedder.texts) == (3, 0, [])
    assert CodeIndex.objects.get().chunk_count == 4


def test_indexing_never_touches_the_repository_memories(
    acme: Tenant, repository: Repository, roots: Path, make_memory: MemoryFactory
) -> None:
    memory = make_memory(scope_type="repository", repository="payments-api", current_content="Settle nightly.")
    tree(roots)

    index_directory(acme.agent, "payments-api", roots)

    stored = Memory.objects.get(pk=memory.pk)
    assert (stored.version, stored.current_content, stored.repository_id) == (1, "Settle nightly.", repository.pk)


def test_after_a_model_change_every_file_is_embedded_again(
    acme: Tenant, repository: Repository, roots: Path, embedder: CountingEmbedder
) -> None:
    tree(roots)
    index_directory(acme.agent, "payments-api", roots)
    another = CountingEmbedder(embedder.inner)
    another.name = "another-model"
    reset_provider(another)

    # The old model's vectors do not compare with the new model's queries.
    assert code_search(acme.reader, CodeSearchParams.build(query="settle", mode="vector")).hits == []
    another.texts.clear()
    run = index_directory(acme.agent, "payments-api", roots)

    assert (run.modified, run.unchanged, run.embeddings_computed) == (3, 0, 4)
    assert len(another.texts) == 4
    assert set(CodeChunk.objects.values_list("embedding_model", flat=True)) == {"another-model"}
