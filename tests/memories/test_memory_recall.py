from __future__ import annotations

import pytest

from memories.recall import memory_recall
from memories.services import memory_lock, memory_verify
from memories.tokens import count_tokens
from memory_platform.exceptions import ValidationError
from tests.conftest import MemoryFactory, Tenant

# Asserts which memories a query finds (and in what order): that takes the real model.
pytestmark = pytest.mark.real_embedder


@pytest.fixture
def knowledge(acme: Tenant, make_memory: MemoryFactory) -> dict[str, object]:
    pinned = make_memory(current_content="Always answer in British English.", tags=["pinned"], importance=3)
    locked = make_memory(memory_type="business_rule", current_content="Refunds above 500 EUR need two approvals.")
    memory_lock(principal=acme.curator, memory_id=locked.id)
    verified = make_memory(memory_type="convention", current_content="Branch names start with the ticket key.")
    memory_verify(principal=acme.curator, memory_id=verified.id)
    review = make_memory(current_content="Reviewers check migrations for table locks.", tags=["review"])
    relevant = make_memory(current_content="The payments service retries webhooks three times.")
    filler = [make_memory(current_content=f"Unrelated note number {n} about office plants.") for n in range(5)]
    return {
        "pinned": pinned,
        "locked": locked,
        "verified": verified,
        "review": review,
        "relevant": relevant,
        "filler": filler,
    }


def test_layers_come_in_priority_order(acme: Tenant, knowledge: dict[str, object]) -> None:
    bundle = memory_recall(acme.agent, phases=["review"], query="payments webhooks", budget_tokens=4000)

    pinned_at = bundle.index("British English")
    locked_at = bundle.index("two approvals")
    review_at = bundle.index("table locks")
    relevant_at = bundle.index("retries webhooks")
    assert pinned_at < review_at < locked_at < relevant_at  # phase-tagged rules lead the rules layer
    assert bundle.index("Branch names") < relevant_at


def test_bundle_fits_the_budget_and_drops_lowest_layers_first(acme: Tenant, knowledge: dict[str, object]) -> None:
    bundle = memory_recall(acme.agent, query="payments webhooks", budget_tokens=120)

    assert count_tokens(bundle) <= 120
    assert "British English" in bundle
    assert "retries webhooks" not in bundle


def test_idempotency_key_returns_the_same_bundle(
    acme: Tenant, knowledge: dict[str, object], make_memory: MemoryFactory
) -> None:
    first = memory_recall(acme.agent, query="payments", idempotency_key="task-7")
    make_memory(current_content="Payments settle at midnight UTC.", importance=10)
    again = memory_recall(acme.agent, query="payments", idempotency_key="task-7")
    fresh = memory_recall(acme.agent, query="payments")

    assert again == first
    assert "midnight" in fresh and "midnight" not in first


def test_outsider_recalls_nothing_of_acme(globex: Tenant, knowledge: dict[str, object]) -> None:
    bundle = memory_recall(globex.agent, phases=["review"], query="payments webhooks refunds")
    assert "two approvals" not in bundle and "webhooks" not in bundle.split("\n", 2)[2]


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"phases": "x", "budget_tokens": 10}, {"query": "x", "budget_tokens": "big"}, {"phases": [""]}],
)
def test_bad_arguments_are_explained(acme: Tenant, kwargs: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        memory_recall(acme.agent, **kwargs)
