"""Bad search input is refused with a message that names the field and says what to send."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from memories.search import SearchParams
from memory_platform.exceptions import ValidationError
from tests.conftest import MemoryFactory, Tenant
from tests.search.conftest import search


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"mode": "fuzzy"}, "unknown mode 'fuzzy'; use one of: hybrid, vector, keyword"),
        ({"limit": 0}, "limit must be a whole number from 1 to 1000"),
        ({"limit": 5000}, "limit must be a whole number from 1 to 1000"),
        ({"limit": -1}, "limit must be a whole number from 1 to 1000"),
        ({"limit": "10"}, "limit must be a whole number from 1 to 1000"),
        ({"limit": 2.5}, "limit must be a whole number from 1 to 1000"),
        ({"limit": True}, "limit must be a whole number from 1 to 1000"),
        ({"fusion": "max"}, "unknown fusion 'max'; use one of: model, score, rrf"),
        ({"vector_weight": -0.5}, "vector_weight must be a number from 0 to 100"),
        ({"keyword_weight": 101}, "keyword_weight must be a number from 0 to 100"),
        ({"keyword_weight": "2"}, "keyword_weight must be a number from 0 to 100"),
        ({"importance_boost": True}, "importance_boost must be a number from 0 to 100"),
        ({"recency_boost": float("nan")}, "recency_boost must be a number from 0 to 100"),
        ({"query": "x" * 2001}, "query is longer than 2000 characters"),
        ({"query": 42}, "query must be text"),
        ({"cursor": 7}, "cursor must be the text returned as next_cursor"),
        ({"filters": {"colour": "red"}}, "unknown filter(s): colour"),
        ({"filters": {"memory_type": "gossip"}}, "unknown memory_type 'gossip'"),
        ({"filters": {"status": ["active", "secret"]}}, "unknown status 'secret'"),
        ({"filters": {"scope_type": "galaxy"}}, "unknown scope_type 'galaxy'"),
        ({"filters": {"min_importance": 11}}, "importance must be from 1 to 10"),
        ({"filters": {"tags": "deploy"}}, "tags must be a list of strings"),
        ({"filters": {"metadata": "team=web"}}, "metadata must be a JSON object"),
        ({"filters": {"include_deleted": "yes"}}, "include_deleted must be true or false"),
    ],
)
def test_bad_input_is_refused_with_a_clear_message(values: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError) as caught:
        SearchParams.build(**values)

    assert message in caught.value.message


def test_the_longest_allowed_query_and_the_limits_are_accepted(acme: Tenant) -> None:
    for values in ({"query": "x" * 2000}, {"limit": 1}, {"limit": 1000}, {"limit": None}):
        assert search(acme.agent, **values).hits == []


@pytest.mark.parametrize("cursor", ["not-a-cursor", "%%%", base64.urlsafe_b64encode(b"[1, 2]").decode(), "e30"])
@pytest.mark.parametrize("query", ["rollout", ""])
def test_a_garbled_cursor_is_refused(acme: Tenant, make_memory: MemoryFactory, cursor: str, query: str) -> None:
    make_memory(current_content="The rollout starts on Monday.")

    with pytest.raises(ValidationError, match="cursor is not valid; pass back the next_cursor"):
        search(acme.agent, query=query, cursor=cursor)


def _tampered(cursor: str, key: Any) -> str:
    payload = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    payload["k"] = key
    return base64.urlsafe_b64encode(json.dumps(payload).encode()).decode().rstrip("=")


@pytest.mark.parametrize("query", ["rollout", ""])
def test_a_tampered_cursor_is_refused(acme: Tenant, make_memory: MemoryFactory, query: str) -> None:
    for n in range(3):
        make_memory(current_content=f"Rollout step {n} is checked by hand.")
    cursor = search(acme.agent, query=query, limit=1).next_cursor
    assert cursor is not None

    for key in ([], ["x"], "abc", [None, None, None, None], [1, "not a date", "x"], [0.5, 1, 2, "x"], {"a": 1}):
        with pytest.raises(ValidationError, match="cursor is not valid"):
            search(acme.agent, query=query, limit=1, cursor=_tampered(cursor, key))


def test_a_cursor_with_tampered_statistics_is_refused(acme: Tenant, make_memory: MemoryFactory) -> None:
    for n in range(3):
        make_memory(current_content=f"Rollout step {n} is checked by hand.")
    cursor = search(acme.agent, query="rollout step", limit=1).next_cursor
    assert cursor is not None
    payload = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    assert payload["t"]["n"] == 3 and payload["t"]["f"] == {"rollout": 3, "step": 3}

    for counts in ({"n": -1, "a": 3.0, "f": {}}, {"n": 3, "a": 0, "f": {}}, {"n": 3, "a": 3.0, "f": {"step": "3"}},
                   {"n": 3, "a": 3.0}, [3, 3.0, {}]):  # fmt: skip
        forged = base64.urlsafe_b64encode(json.dumps(payload | {"t": counts}).encode()).decode().rstrip("=")
        with pytest.raises(ValidationError, match="cursor is not valid"):
            search(acme.agent, query="rollout step", limit=1, cursor=forged)


def test_a_cursor_from_another_search_is_refused(acme: Tenant, make_memory: MemoryFactory) -> None:
    for n in range(3):
        make_memory(current_content=f"Rollout step {n} needs a deploy window.")
    original: dict[str, Any] = {"query": "rollout", "limit": 1}
    cursor = search(acme.agent, **original).next_cursor
    assert cursor is not None

    for changed in (
        {"query": "deploy"},
        {"limit": 3},
        {"mode": "keyword"},
        {"filters": {"min_importance": 2}},
        {"vector_weight": 3},
        {"fusion": "rrf"},
        {"query": ""},
    ):
        with pytest.raises(ValidationError, match="cursor belongs to a different search"):
            search(acme.agent, **{**original, **changed, "cursor": cursor})
