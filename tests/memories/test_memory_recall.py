from __future__ import annotations

import pytest
from django.conf import settings

from memories.decisions import memory_lock, memory_verify
from memories.recall import memory_recall
from memories.tokens import count_tokens
from memory_platform.exceptions import ValidationError
from tests.conftest import MemoryFactory, Tenant

# Asserts which memories a query finds (and in what order): that takes the real model.
pytestmark = pytest.mark.real_embedder


@pytest.fixture
def knowledge(acme: Tenant, make_memory: MemoryFactory) -> dict[str, object]:
    # What fills the pinned and rules layers is what curators stand behind (tests/trust has the rest).
    pinned = make_memory(current_content="Always answer in British English.", tags=["pinned"], importance=3)
    memory_verify(principal=acme.curator, memory_id=pinned.id)
    locked = make_memory(memory_type="business_rule", current_content="Refunds above 500 EUR need two approvals.")
    memory_lock(principal=acme.curator, memory_id=locked.id)
    verified = make_memory(memory_type="convention", current_content="Branch names start with the ticket key.")
    memory_verify(principal=acme.curator, memory_id=verified.id)
    review = make_memory(current_content="Reviewers check migrations for table locks.", tags=["review"])
    memory_verify(principal=acme.curator, memory_id=review.id)
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


def test_each_entry_says_why_it_is_there(acme: Tenant, knowledge: dict[str, object]) -> None:
    bundle = memory_recall(acme.agent, phases=["review"], query="payments webhooks", budget_tokens=4000)
    why = {line.split("; ")[1] for line in bundle.splitlines() if line.startswith("- **")}

    assert why >= {"pinned", "rule: locked", "rule: verified", "rule for phase review"}
    relevant = [reason for reason in why if reason.startswith("relevant, score ")]
    assert relevant, bundle


def _relevant_scores(bundle: str) -> list[float]:
    return [
        float(line.split("relevant, score ", 1)[1].split(";")[0])
        for line in bundle.splitlines()
        if "; relevant, score " in line
    ]


@pytest.mark.parametrize("min_score", [None, 0.05, 0.2])
def test_the_relevant_layer_holds_nothing_below_the_floor(
    acme: Tenant, knowledge: dict[str, object], min_score: float | None
) -> None:
    floor = settings.RECALL_MIN_SCORE if min_score is None else min_score
    bundle = memory_recall(acme.agent, query="payments webhooks retries", budget_tokens=4000, min_score=min_score)

    assert all(score >= floor for score in _relevant_scores(bundle)), bundle
    # Nothing pads the layer: the office-plant notes never come in for a payments task.
    assert "office plants" not in bundle


def test_a_task_nothing_matches_gets_no_relevant_memories(acme: Tenant, knowledge: dict[str, object]) -> None:
    bundle = memory_recall(acme.agent, query="refactor the React checkout page", budget_tokens=4000)

    assert _relevant_scores(bundle) == []
    assert "No other memory is relevant to this task" in bundle
    assert "office plants" not in bundle and "retries webhooks" not in bundle
    # The rules still come: they apply to every task.
    assert "two approvals" in bundle


def test_a_bad_min_score_is_explained(acme: Tenant) -> None:
    with pytest.raises(ValidationError, match="min_score"):
        memory_recall(acme.agent, query="payments", min_score=2)


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
