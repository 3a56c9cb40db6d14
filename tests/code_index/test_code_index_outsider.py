"""globex (the outsider) sees no repository, file, chunk, run or status of acme's code index, and
changes nothing of it, even when it has a repository with the same slug (tests/mcp and
tests/rest_api check the same through their interfaces)."""

from __future__ import annotations

from typing import Any

import pytest

from code_index import selectors, services
from code_index.models import CodeChunk, CodeFile, CodeIndex, CodeIndexRun
from code_index.search import CodeSearchParams, code_search
from memory_platform.exceptions import NotFound, ValidationError
from organizations.models import Repository
from organizations.services import repository_get_or_create
from tests.code_index.conftest import python_module, sha, sync_files
from tests.conftest import Tenant

# Which chunks a search finds is asserted throughout: the real model.
pytestmark = [pytest.mark.django_db, pytest.mark.real_embedder]

SECRET = python_module("blue_heron_settlement")


@pytest.fixture
def acme_index(acme: Tenant, repository: Repository) -> CodeIndex:
    sync_files(acme.agent, "payments-api", {"src/heron.py": SECRET})
    return CodeIndex.objects.get(repository=repository)


def acme_state() -> tuple[Any, ...]:
    return (
        sorted(CodeFile.objects.filter(index__organization__slug="acme").values_list("path", "content_hash")),
        CodeChunk.objects.filter(organization__slug="acme").count(),
        sorted(CodeIndexRun.objects.filter(organization__slug="acme").values_list("pk", "status")),
    )


def test_the_outsider_reads_nothing_of_acme_code(globex: Tenant, acme_index: CodeIndex) -> None:
    outsider = globex.admin

    assert selectors.code_index_list(outsider) == []
    assert not selectors.organization_has_code(outsider)
    for read in (selectors.code_index_status, selectors.code_index_runs, selectors.code_index_get):
        with pytest.raises(NotFound) as caught:
            read(outsider, "payments-api")
        assert "acme" not in caught.value.message
    for mode in ("hybrid", "vector", "keyword"):
        result = code_search(outsider, CodeSearchParams.build(query="blue heron settlement", mode=mode))
        assert result.hits == []
    with pytest.raises(ValidationError, match="known repositories: none yet"):
        code_search(outsider, CodeSearchParams.build(query="blue heron", repository="payments-api"))


def test_the_outsider_changes_nothing_of_acme_code(globex: Tenant, acme_index: CodeIndex) -> None:
    before = acme_state()
    outsider = globex.admin

    with pytest.raises(NotFound):
        services.code_index_delete(principal=outsider, repository="payments-api")
    with pytest.raises(NotFound):
        services.code_index_manifest(principal=outsider, repository="payments-api", manifest={})
    with pytest.raises(NotFound):
        services.code_index_upload(
            principal=outsider, repository="payments-api", files=[{"path": "src/heron.py", "content": "x"}]
        )
    with pytest.raises(NotFound):
        services.code_index_path(principal=outsider, repository="payments-api", path="/srv")

    assert acme_state() == before


def test_a_repository_of_the_same_slug_is_the_outsiders_own(globex: Tenant, acme_index: CodeIndex) -> None:
    before = acme_state()
    repository_get_or_create(principal=globex.admin, slug="payments-api")

    with pytest.raises(NotFound, match="has no code index yet"):
        selectors.code_index_status(globex.admin, "payments-api")
    sync_files(globex.agent, "payments-api", {"lib/own.py": python_module("globex_ledger")})

    own = selectors.code_index_status(globex.reader, "payments-api")
    assert (own.index.organization.slug, own.total_files, own.total_chunks) == ("globex", 1, 1)
    params = CodeSearchParams.build(query="blue heron settlement ledger", mode="keyword", min_score=0)
    result = code_search(globex.reader, params)
    assert {hit.chunk.path for hit in result.hits} == {"lib/own.py"}
    # acme's manifest sync of the same paths asks for its own files, whatever globex holds.
    answer = services.code_index_manifest(
        principal=globex.agent, repository="payments-api", manifest={"src/heron.py": sha(SECRET)}
    )
    assert answer.needed == ["src/heron.py"]
    assert acme_state() == before
