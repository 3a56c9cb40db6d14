"""A batch's write hints from one read of its scope's vectors (memories.hints._by_matrix) are the hints
PostgreSQL's nearest-neighbour query gives each memory: the same memories, kinds and order, the same
similarities; in an organization's scope, a repository's and a person's own; and a scope too large
for it is left to the query."""

from __future__ import annotations

from typing import Any

import pytest

from memories import hints
from memories.batch import memory_batch_create
from memories.models import Memory
from tests.conftest import MemoryFactory, Tenant

# Real vectors: the hash embedder's give many memories one similarity, and ties may be cut either way.
pytestmark = [pytest.mark.django_db, pytest.mark.real_embedder]

AMOUNTS = range(100, 2100, 100)
RULE = "Refunds above {} EUR need approval from the finance team."


def _written(tenant: Tenant, make_memory: MemoryFactory, **scope: Any) -> list[Memory]:
    principal = tenant.person if scope.get("scope_type") == "user" else tenant.agent
    fields = {name: value for name, value in scope.items() if name != "create_repository"}
    for amount in AMOUNTS:
        make_memory(principal, current_content=RULE.format(amount), **fields)
    # Alike but for the amount (contradiction candidates), repeated word for word, and unrelated.
    texts = [RULE.format(amount + 50) for amount in AMOUNTS] + [RULE.format(300)]
    texts += [f"The {n}th deploy window opens on Tuesdays." for n in range(5)]
    entries = [{**scope, "memory_type": "fact", "current_content": text} for text in texts]
    results = memory_batch_create(principal=principal, entries=entries)
    assert all(result.ok for result in results), [result.error for result in results if not result.ok]
    return [result.memory for result in results if result.memory is not None]


def _comparable(found: dict[Any, hints.WriteHints]) -> dict[Any, Any]:
    """Each memory's hints as (status, exact), with the memories of those nearer than the last: two
    memories of one text are as near as each other, and either may be the one listed."""

    def side(items: list[hints.Hint]) -> tuple[list[tuple[str, bool]], list[str]]:
        last = round(items[-1].similarity, 3) if items else None
        nearer = sorted(str(hint.id) for hint in items if round(hint.similarity, 3) != last)
        return [(hint.status, hint.exact) for hint in items], nearer

    return {pk: (side(h.possible_duplicates), side(h.conflicts)) for pk, h in found.items()}


def _similarities(found: dict[Any, hints.WriteHints]) -> list[float]:
    """Every hint's similarity, memory by memory, nearest first (float4 sums differ in the last bits)."""
    return [
        hint.similarity
        for pk in sorted(found, key=str)
        for side in (found[pk].possible_duplicates, found[pk].conflicts)
        for hint in side
    ]


@pytest.mark.parametrize(
    "scope",
    [
        {"scope_type": "organization"},
        {"scope_type": "repository", "repository": "payments-api", "create_repository": True},
        {"scope_type": "user"},
    ],
    ids=["organization", "repository", "user"],
)
def test_a_batch_gets_the_hints_the_query_gives(
    acme: Tenant, make_memory: MemoryFactory, monkeypatch: pytest.MonkeyPatch, scope: dict[str, Any]
) -> None:
    written = _written(acme, make_memory, **scope)
    assert len(written) >= hints.MATRIX_AT_LEAST
    by_matrix = hints.write_hints(written)
    monkeypatch.setattr(hints, "MATRIX_AT_LEAST", 10**6)  # PostgreSQL's query, memory by memory
    by_query = hints.write_hints(written)

    assert _comparable(by_matrix) == _comparable(by_query)
    assert _similarities(by_matrix) == pytest.approx(_similarities(by_query), abs=2e-4)
    found = [h for h in by_query.values() if h.possible_duplicates or h.conflicts]
    assert len(found) >= len(AMOUNTS), "the batch was meant to repeat and contradict what is there"
    assert any(hint.exact for h in found for hint in h.possible_duplicates)


def test_a_scope_too_large_is_left_to_the_query(
    acme: Tenant, make_memory: MemoryFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    written = _written(acme, make_memory, scope_type="organization")
    by_matrix = hints.write_hints(written)
    monkeypatch.setattr(hints, "MATRIX_ROWS", 10)
    monkeypatch.setattr(hints, "MATRIX_ROWS_PER_MEMORY", 1)
    read: list[int] = []
    real = hints._by_matrix

    def counted(*args: Any) -> Any:
        answer = real(*args)
        read.append(answer is None)
        return answer

    monkeypatch.setattr(hints, "_by_matrix", counted)
    assert _comparable(hints.write_hints(written)) == _comparable(by_matrix)
    assert read == [True], "the scope of 46 rows is over the 26 the matrix takes for 26 memories: the query answered"
