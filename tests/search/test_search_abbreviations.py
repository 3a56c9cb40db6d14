"""A query's abbreviations ("PR", "prod", "k8s") are searched with their long forms beside them."""

from __future__ import annotations

from typing import Any

import pytest

from memories.search.words import abbreviations_in, expanded
from tests.conftest import MemoryFactory, Tenant
from tests.search.conftest import hit_ids, search

RULES = {
    "reviews": "Every pull request needs two approvals from code owners before it is merged.",
    "friday": "Never deploy to production on Friday afternoons; wait for Monday.",
    "cents": "Payments store money as integer cents, never floats.",
    "oncall": "On-call engineers hand over on Monday mornings at 10:00.",
}


@pytest.fixture
def rules(make_memory: MemoryFactory) -> dict[str, Any]:
    return {key: make_memory(current_content=text, status="active").pk for key, text in RULES.items()}


def test_the_long_forms_go_beside_the_query(settings: Any) -> None:
    assert abbreviations_in("Can I ship a PR to prod on k8s?") == ["PR", "prod", "k8s"]
    assert expanded("Can I ship a PR to prod?") == "Can I ship a PR to prod? (pull request; production)"
    assert expanded("which linter do we use?") == "which linter do we use?"
    settings.SEARCH_EXPAND_ABBREVIATIONS = False
    assert expanded("Can I ship a PR to prod?") == "Can I ship a PR to prod?"


@pytest.mark.parametrize(
    "query", ["how many approvals does a PR need before merge?", "can I deploy to prod on Friday?"]
)
def test_an_abbreviated_question_finds_its_answer_at_the_default_floor(
    acme: Tenant, rules: dict[str, Any], query: str
) -> None:
    wanted = rules["reviews"] if "PR" in query else rules["friday"]

    assert hit_ids(search(acme.agent, query=query))[:1] == [wanted]


@pytest.mark.parametrize(("expand", "found"), [(True, True), (False, False)])
def test_by_words_alone_the_long_form_is_what_matches(
    acme: Tenant, rules: dict[str, Any], settings: Any, expand: bool, found: bool
) -> None:
    """The memory says "pull request", the question "PR" and nothing else of the memory's words."""
    settings.SEARCH_EXPAND_ABBREVIATIONS = expand

    page = search(acme.agent, query="who reviews a PR?", mode="keyword", min_score=0)

    assert (rules["reviews"] in hit_ids(page)) is found
