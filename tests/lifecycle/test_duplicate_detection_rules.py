"""Each rule of duplicate detection, on real memories with real embeddings."""

from __future__ import annotations

from typing import Any

import pytest
from django.utils import timezone

from memories.similarity import MatchKind, classify, differences, matches_for, normalized_content
from tests.conftest import MemoryFactory, Tenant

pytestmark = pytest.mark.django_db


def test_normalized_content_ignores_case_white_space_and_punctuation() -> None:
    assert normalized_content("Use ruff  for linting!") == normalized_content("use RUFF, for\nlinting.")
    assert normalized_content("Use ruff for linting") != normalized_content("Use black for linting")


def test_exact_duplicates_are_found_whatever_their_punctuation(make_memory: MemoryFactory) -> None:
    first = make_memory(current_content="Use ruff for linting Python code.")
    second = make_memory(current_content="use RUFF for linting python code")

    matches = matches_for(first)

    assert [(m.other_id, m.kind, m.exact) for m in matches][:1] == [(second.pk, MatchKind.DUPLICATE, True)]


@pytest.mark.parametrize(
    ("first", "second", "evidence"),
    [
        ("The HTTP client timeout is 30 s.", "The HTTP client timeout is 60 s.", "numbers"),
        ("Releases ship on 2026-03-01.", "Releases ship on 2026-04-01.", "numbers"),
        ("We deploy on Fridays.", "We do not deploy on Fridays.", "negations"),
        ("The linter is `ruff`.", "The linter is `black`.", "values"),
        ("billing-api retries payments twice.", "ledger-api retries payments twice.", "values"),
    ],
)
def test_similar_texts_that_disagree_are_contradictions_never_duplicates(
    make_memory: MemoryFactory, first: str, second: str, evidence: str
) -> None:
    a = make_memory(current_content=first)
    b = make_memory(current_content=second)

    match = classify(a, b, similarity=0.99)

    assert match is not None
    assert match.kind == MatchKind.CONTRADICTION
    assert evidence in match.differences


def test_near_duplicates_need_the_same_type(make_memory: MemoryFactory) -> None:
    a = make_memory(current_content="Every pull request needs one approving review.", memory_type="convention")
    b = make_memory(current_content="Each pull request requires an approving review.", memory_type="convention")
    c = make_memory(current_content="Each pull request requires an approving review!", memory_type="risk")

    near = classify(a, b, similarity=0.96)
    other_type = classify(a, c, similarity=0.96)

    assert near is not None and (near.kind, near.exact) == (MatchKind.DUPLICATE, False)
    assert other_type is not None and other_type.kind == MatchKind.RELATED


def test_between_the_thresholds_is_related_and_below_is_nothing(make_memory: MemoryFactory) -> None:
    a = make_memory(current_content="Every pull request needs one approving review.")
    b = make_memory(current_content="Pull requests are reviewed by a teammate before merging.")

    related = classify(a, b, similarity=0.9)

    assert related is not None and related.kind == MatchKind.RELATED
    assert classify(a, b, similarity=0.5) is None


def test_thresholds_are_settings(make_memory: MemoryFactory, settings: Any) -> None:
    a = make_memory(current_content="Every pull request needs one approving review.")
    b = make_memory(current_content="Each pull request requires an approving review.")
    settings.CONSOLIDATION_NEAR_DUPLICATE = 0.99

    match = classify(a, b, similarity=0.96)

    assert match is not None and match.kind == MatchKind.RELATED


def test_differences_name_what_differs() -> None:
    found = differences("Timeout is 30 s and retries are 3.", "Timeout is 60 s and retries are 3.")

    assert found.as_evidence() == {"numbers": {"first": ["30"], "second": ["60"]}}
    assert not differences("Don't deploy on Friday.", "Do not deploy on Friday.")


def test_paraphrases_are_found_by_their_embeddings(make_memory: MemoryFactory) -> None:
    a = make_memory(current_content="Never deploy to production on Friday afternoons.")
    b = make_memory(current_content="Do not deploy to production on a Friday afternoon.")
    make_memory(current_content="The staging database is refreshed from production every night.")

    matches = {m.other_id: m for m in matches_for(a)}

    assert b.pk in matches
    assert matches[b.pk].similarity >= 0.85


def test_other_scopes_deleted_and_superseded_memories_are_not_compared(
    acme: Tenant, globex: Tenant, make_memory: MemoryFactory
) -> None:
    text = "Use ruff for linting Python code."
    mine = make_memory(current_content=text)
    make_memory(current_content=text, scope_type="repository", repository="api")
    make_memory(principal=acme.person, current_content=text, scope_type="user")
    make_memory(principal=globex.agent, current_content=text)
    deleted = make_memory(current_content=text)
    deleted.deleted_at = timezone.now()
    deleted.save(update_fields=["deleted_at"])
    superseded = make_memory(current_content=text)
    superseded.superseded_by = mine
    superseded.save(update_fields=["superseded_by"])

    assert matches_for(mine) == []
