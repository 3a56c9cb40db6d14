"""Fixtures for code indexing: a repository of acme's, a directory the server may index
(CODE_INDEX_ROOTS), an embedder that counts what it embeds, and helpers that run an index run the
way the worker does (pipeline.run_index), in the test's own process and transaction."""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from code_index import pipeline, recovery, services
from code_index.models import CodeIndexRun
from memories.embeddings import EmbeddingProvider, reset_provider
from memories.embeddings.base import ModelState
from organizations.models import Repository
from organizations.principal import Principal
from organizations.services import repository_get_or_create
from tests.conftest import Tenant, other_session

SAMPLES = Path(__file__).parent / "samples"


class CountingEmbedder(EmbeddingProvider):
    """Wraps the test's provider and keeps every text it was asked to embed."""

    def __init__(self, inner: EmbeddingProvider) -> None:
        super().__init__()
        self.inner = inner
        self.name = inner.name
        self.dimensions = inner.dimensions
        self.texts: list[str] = []
        self._set_state(ModelState.READY)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.texts += list(texts)
        return self.inner.embed(texts)


@pytest.fixture
def embedder(embedding_provider: EmbeddingProvider) -> CountingEmbedder:
    counting = CountingEmbedder(embedding_provider)
    reset_provider(counting)
    return counting


@pytest.fixture
def repository(acme: Tenant) -> Repository:
    return repository_get_or_create(principal=acme.admin, slug="payments-api", name="Payments API")


@pytest.fixture
def roots(tmp_path: Path, settings: Any) -> Path:
    """A directory agents may have indexed (the only one in CODE_INDEX_ROOTS)."""
    root = tmp_path / "srv" / "code"
    root.mkdir(parents=True)
    settings.CODE_INDEX_ROOTS = [str(root)]
    return root


def write_tree(root: Path, files: dict[str, str | bytes]) -> Path:
    for relative, content in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    return root


def sha(content: str | bytes) -> str:
    return hashlib.sha256(content.encode() if isinstance(content, str) else content).hexdigest()


def index_directory(principal: Principal, repository: str, path: Path | str, *, watch: bool = False) -> CodeIndexRun:
    """code-index with `path`, then the run a worker would execute."""
    run = services.code_index_path(principal=principal, repository=repository, path=str(path), watch=watch)
    finished = pipeline.run_index(run.pk)
    assert finished is not None
    return finished


Sync = Callable[..., CodeIndexRun]


def sync_files(principal: Principal, repository: str, files: dict[str, str]) -> CodeIndexRun:
    """A whole manifest sync: the manifest, every needed file in one batch, then the worker's run."""
    answer = services.code_index_manifest(
        principal=principal, repository=repository, manifest={path: sha(text) for path, text in files.items()}
    )
    if answer.needed:
        services.code_index_upload(
            principal=principal,
            repository=repository,
            files=[{"path": path, "content": files[path]} for path in answer.needed],
        )
    finished = pipeline.run_index(answer.run.pk)
    assert finished is not None
    return finished


def python_module(name: str, body: str = "") -> str:
    """A small Python module with one function of a few lines (over the tiny-merge size)."""
    return (
        f'"""The {name} module."""\n\n\n'
        f"def {name}(values: list[int]) -> int:\n"
        f'    """Add up {name} values, skipping negative ones, and report the total."""\n'
        f"    total = 0\n"
        f"    for value in values:\n"
        f"        if value >= 0:\n"
        f"            total += value\n"
        f"    {body or 'return total'}\n"
    )


@contextmanager
def worker_holding_the_lock(index_id: int) -> Iterator[None]:
    """As if a live worker were running an index run of this index."""
    with other_session() as session:
        session.execute("SELECT pg_advisory_lock(%s, %s)", [recovery.LOCK_NAMESPACE, index_id])
        yield


# --- code search over the samples ---------------------------------------------------------------

_vectors: dict[str, list[float]] = {}


class CachedModel(EmbeddingProvider):
    """The real model, each text embedded once per test process (every test indexes the samples)."""

    def __init__(self, inner: EmbeddingProvider) -> None:
        super().__init__()
        self.inner, self.name, self.dimensions = inner, inner.name, inner.dimensions
        self._set_state(ModelState.READY)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        missing = [text for text in dict.fromkeys(texts) if text not in _vectors]
        _vectors.update(zip(missing, self.inner.embed(missing), strict=True))
        return [_vectors[text] for text in texts]


@pytest.fixture
def indexed(acme: Tenant, roots: Path, embedding_provider: EmbeddingProvider) -> Tenant:
    """The samples in two repositories: payments-api (most of them) and web (the TypeScript)."""
    reset_provider(CachedModel(embedding_provider))
    for slug in ("payments-api", "web"):
        repository_get_or_create(principal=acme.admin, slug=slug)
    backend, web = roots / "backend", roots / "web"
    shutil.copytree(SAMPLES, backend / "src", ignore=shutil.ignore_patterns("*.ts", "*.tsx"))
    (web / "src").mkdir(parents=True)
    for name in ("client.ts", "Badge.tsx"):
        shutil.copy(SAMPLES / name, web / "src" / name)
    assert index_directory(acme.agent, "payments-api", backend).status == "completed"
    assert index_directory(acme.agent, "web", web).status == "completed"
    return acme
