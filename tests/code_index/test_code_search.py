"""Code search with the real model: by meaning, by name (identifiers split on camelCase and
snake_case), by path; filtered by repository, language, path glob and chunk type; results carry
seed 004's fields with the content trimmed; bad input is refused with what to send instead."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from code_index.public import hit_values
from code_index.search import CodeSearchParams, code_search, glob_regex
from memories.embeddings import EmbeddingError, EmbeddingProvider, reset_provider
from memory_platform.exceptions import SearchUnavailable, ValidationError
from organizations.principal import Principal
from organizations.services import repository_get_or_create
from tests.code_index.conftest import SAMPLES
from tests.conftest import Tenant

pytestmark = [pytest.mark.django_db, pytest.mark.real_embedder]


def search(principal: Principal, query: str, **filters: Any) -> list[dict[str, Any]]:
    result = code_search(principal, CodeSearchParams.build(query=query, **filters))
    return [hit_values(hit) for hit in result.hits]


def top(principal: Principal, query: str, **filters: Any) -> tuple[str, str]:
    best = search(principal, query, **filters)[0]
    return best["file_path"], best["name"]


def test_code_is_found_by_what_it_does(indexed: Tenant) -> None:
    reader = indexed.reader

    best = search(reader, "refuse to move money between accounts when the balance is too low")[0]
    assert (best["file_path"], best["name"]) == ("src/ledger.rs", "Ledger")  # the impl block, whole
    assert "pub fn transfer" in best["content"]
    assert top(reader, "wait longer after every failed attempt, with random jitter")[0] == "src/retry.py"
    assert top(reader, "cancel an order that was placed") == ("src/OrderService.cs", "OrderService")
    assert top(reader, "when may we ship on fridays?")[0] == "src/GUIDE.md"


def test_code_is_found_by_its_names_split_or_whole(indexed: Tenant) -> None:
    reader = indexed.reader

    assert top(reader, "parse_cents") == ("src/ledger.rs", "parse_cents")
    assert top(reader, "getJson", mode="keyword") == ("src/client.ts", "ApiClient")
    assert top(reader, "build user agent", mode="keyword") == ("src/client.ts", "buildUserAgent")
    assert top(reader, "findByEmail")[0] == "src/UserRepository.php"
    assert top(reader, "checksum", mode="keyword")[0] == "src/checksum.c"  # the file's name


def test_results_carry_the_seed_fields_best_first(indexed: Tenant) -> None:
    results = search(indexed.agent, "shopping cart total in cents", limit=3)

    assert len(results) == 3
    assert set(results[0]) == {
        "file_path", "start_line", "end_line", "language", "chunk_type", "name", "score", "content",
        "repository", "container", "truncated",
    }  # fmt: skip
    assert results[0]["file_path"] == "src/cart.js" and results[0]["repository"] == "payments-api"
    assert [r["score"] for r in results] == sorted((r["score"] for r in results), reverse=True)
    lines = (SAMPLES / "cart.js").read_text().split("\n")
    first = results[0]
    assert first["content"] == "\n".join(lines[first["start_line"] - 1 : first["end_line"]])


@pytest.mark.parametrize(
    ("filters", "check"),
    [
        ({"language": "go"}, lambda hit: hit["language"] == "go"),
        ({"repository": "web"}, lambda hit: hit["repository"] == "web"),
        ({"path": "*.rs"}, lambda hit: hit["file_path"].endswith(".rs")),
        ({"path": "src/**/*.php"}, lambda hit: hit["file_path"] == "src/UserRepository.php"),
        ({"chunk_type": "method"}, lambda hit: hit["chunk_type"] == "method"),
        ({"chunk_type": "section", "language": "markdown"}, lambda hit: hit["file_path"] == "src/GUIDE.md"),
    ],
)
def test_filters_narrow_every_mode(indexed: Tenant, filters: dict[str, Any], check: Any) -> None:
    for mode in ("hybrid", "vector", "keyword"):
        query = "retry the request and return the total"
        results = search(indexed.reader, query, mode=mode, limit=50, min_score=0, **filters)
        assert all(check(hit) for hit in results), (mode, filters, [h["file_path"] for h in results])
        if mode == "vector":
            assert results, (mode, filters)  # every chunk in scope has a distance


def test_content_is_trimmed_to_the_limit(indexed: Tenant, settings: Any) -> None:
    settings.CODE_SEARCH_CONTENT_MAX_CHARS = 120

    results = search(indexed.reader, "issue invoices and compute totals with tax", limit=5)

    assert results and all(len(hit["content"]) <= 120 for hit in results)
    assert any(hit["truncated"] for hit in results)


def test_without_the_model_hybrid_search_falls_back_to_keywords(indexed: Tenant) -> None:
    class Down(EmbeddingProvider):
        name, dimensions = "down", 384

        def embed(self, texts: Sequence[str]) -> list[list[float]]:
            raise EmbeddingError("the model server is down")

    reset_provider(Down())

    result = code_search(indexed.reader, CodeSearchParams.build(query="parse_cents"))

    assert result.hits and result.hits[0].chunk.name == "parse_cents"
    assert result.degraded is not None and "keyword results only" in result.degraded
    with pytest.raises(SearchUnavailable):
        code_search(indexed.reader, CodeSearchParams.build(query="parse_cents", mode="vector"))


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ({"query": ""}, "query must be a non-empty text"),
        ({"query": "x" * 2001}, "longer than 2000"),
        ({"query": "x", "language": "cobol"}, "unknown language 'cobol'; use one of: c, clojure, cmake, cpp"),
        ({"query": "x", "chunk_type": "lambda"}, "use one of: function, method, class, module, section, window"),
        ({"query": "x", "limit": 0}, "limit must be a whole number from 1 to 100"),
        ({"query": "x", "limit": 101}, "limit must be a whole number from 1 to 100"),
        ({"query": "x", "mode": "fuzzy"}, "unknown mode"),
        ({"query": "x", "path": "a" * 501}, "glob over file paths"),
    ],
)
def test_bad_input_is_refused_with_what_to_send(arguments: dict[str, Any], problem: str) -> None:
    with pytest.raises(ValidationError) as caught:
        CodeSearchParams.build(**arguments)

    assert problem in caught.value.message


def test_an_unknown_or_unindexed_repository_is_refused(indexed: Tenant) -> None:
    repository_get_or_create(principal=indexed.admin, slug="docs")

    with pytest.raises(ValidationError, match=r"known repositories: docs, payments-api, web"):
        search(indexed.reader, "x", repository="payment-api")
    with pytest.raises(ValidationError, match="'docs' has no code index yet"):
        search(indexed.reader, "x", repository="docs")


def test_path_globs() -> None:
    import re

    def matches(glob: str, path: str) -> bool:
        return re.fullmatch(glob_regex(glob).removeprefix("^").removesuffix("$"), path) is not None

    assert matches("*.py", "a/b/c.py") and not matches("*.py", "a/b/c.pyc")
    assert matches("src/*.py", "src/c.py") and not matches("src/*.py", "src/a/c.py")
    assert matches("src/**/*.py", "src/c.py") and matches("src/**/*.py", "src/a/b/c.py")
    assert matches("docs/", "docs/guide/intro.md") and matches("src/api", "src/api/views.py")
    assert matches("ledger.rs", "crates/core/ledger.rs") and not matches("ledger.rs", "ledger.rs.bak")
    assert matches("a?c.go", "abc.go") and not matches("a?c.go", "a/c.go")
    assert matches("weird(name)+.py", "x/weird(name)+.py")
