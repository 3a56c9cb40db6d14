"""A write that contradicts a memory of its scope says so, and the curators get a proposal with the
curated memory as its reference side; memory-consolidate lists what the write hints say."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from lifecycle.consolidation import consolidation_run
from lifecycle.models import ConsolidationProposal, ProposalKind
from memories.batch import memory_batch_create
from memories.services import memory_create
from tests.conftest import Tenant
from tests.mcp.client import McpClient

pytestmark = pytest.mark.django_db

PAIRS = [
    ("No deploys to production on Fridays after 14:00 UTC.", "No deploys to production on Fridays after 16:00 UTC."),
    ("Python code is formatted with ruff, line length 100.", "Python code is formatted with black, line length 88."),
    ("Database migrations are reviewed by the DBA team.", "Database migrations are not reviewed by the DBA team."),
]


def _rule(principal: Any, text: str, **fields: Any) -> Any:
    data = {"scope_type": "organization", "memory_type": "convention", "current_content": text, **fields}
    return memory_create(principal=principal, data=data)[0]


@pytest.mark.parametrize(("curated", "variant"), PAIRS)
def test_a_contradicting_write_is_told_and_the_curators_asked(
    acme: Tenant, agent: McpClient, curated: str, variant: str
) -> None:
    locked = _rule(acme.curator, curated, status="locked")

    answer = agent.ok("memory-write", {"scope_type": "organization", "memory_type": "convention",
                                       "current_content": variant})  # fmt: skip

    [conflict] = answer["conflicts"]
    assert (conflict["id"], conflict["status"]) == (str(locked.pk), "locked")
    assert conflict["differences"]  # what differs: a number, a name or a negation
    assert answer["possible_duplicates"] == []
    [proposal] = ConsolidationProposal.objects.filter(kind=ProposalKind.CONTRADICTION)
    assert {str(pk) for pk in proposal.memory_ids} == {str(locked.pk), answer["id"]}
    assert proposal.evidence["reference"] == str(locked.pk) and proposal.survivor_id == locked.pk
    assert proposal.evidence["found"] == "at write time"


def test_statements_about_different_things_are_not_contradictions(acme: Tenant, agent: McpClient) -> None:
    _rule(acme.curator, "Payments are stored in integer cents.", status="locked")

    answer = agent.ok("memory-write", {"scope_type": "organization", "memory_type": "fact",
                                       "current_content": "The office closes at 18:00 on Fridays."})  # fmt: skip

    assert answer["conflicts"] == [] and not ConsolidationProposal.objects.exists()


def test_the_worker_finds_the_same_contradictions(acme: Tenant) -> None:
    locked = _rule(acme.curator, PAIRS[1][0], status="locked")
    variant = _rule(acme.agent, PAIRS[1][1])
    ConsolidationProposal.objects.all().delete()  # as if the write-time proposal had been missed

    consolidation_run(organization=acme.organization, full=True)

    [proposal] = ConsolidationProposal.objects.filter(kind=ProposalKind.CONTRADICTION)
    assert set(proposal.memory_ids) == {locked.pk, variant.pk}


def test_the_consolidate_listing_agrees_with_the_write_hints(acme: Tenant, agent: McpClient) -> None:
    convention = {"scope_type": "organization", "memory_type": "convention"}
    first = agent.ok(
        "memory-write", {**convention, "current_content": "Every pull request needs one approving review before merge."}
    )
    second = agent.ok(
        "memory-write", {**convention, "current_content": "Each pull request requires an approving review to merge."}
    )

    [hint] = second["possible_duplicates"]
    assert hint["id"] == first["id"] and 0.85 <= hint["similarity"] < 0.95

    listed = agent.ok("memory-consolidate", {})["clusters"]

    assert [(c["kind"], sorted(c["memory_ids"])) for c in listed] == [
        ("duplicate", sorted([first["id"], second["id"]]))
    ]


def test_a_batch_of_contradicting_rules_gets_one_proposal_a_pair(
    acme: Tenant, agent: McpClient, caplog: pytest.LogCaptureFixture
) -> None:
    locked = _rule(acme.curator, PAIRS[0][0], status="locked")
    variants = [PAIRS[0][1], "No deploys to production on Fridays after 17:00 UTC."]

    results = agent.ok(
        "memory-batch-write",
        {"memories": [{"scope_type": "organization", "memory_type": "convention", "current_content": text}
                      for text in variants]},
    )  # fmt: skip

    ids = [str(locked.pk), *(result["memory"]["id"] for result in results)]
    pairs = [
        frozenset(str(pk) for pk in proposal.memory_ids)
        for proposal in ConsolidationProposal.objects.filter(kind=ProposalKind.CONTRADICTION)
    ]
    assert len(pairs) == len(set(pairs))  # none twice, though each write saw the others
    assert {frozenset([ids[0], ids[1]]), frozenset([ids[0], ids[2]])} <= set(pairs)
    assert "left to the consolidation worker" not in caplog.text


def test_a_batch_hands_its_contradictions_over_in_a_few_statements(acme: Tenant) -> None:
    locked = _rule(acme.curator, PAIRS[0][0], status="locked")
    texts = [f"No deploys to production on Fridays after {hour}:00 UTC." for hour in range(17, 23)]
    entries = [{"scope_type": "organization", "memory_type": "convention", "current_content": t} for t in texts]

    with CaptureQueriesContext(connection) as captured:
        results = memory_batch_create(principal=acme.agent, entries=entries)

    proposed = {
        frozenset(proposal.memory_ids)
        for proposal in ConsolidationProposal.objects.filter(kind=ProposalKind.CONTRADICTION)
    }
    told = {
        frozenset([result.memory.pk, conflict.id])
        for result in results
        if result.memory is not None
        for conflict in result.memory.write_hints.conflicts
    }
    assert any(locked.pk in pair for pair in told)
    assert proposed == told  # each conflict a write was told of (rules all), once
    lifecycle = [q["sql"] for q in captured.captured_queries if "lifecycle_" in q["sql"]]
    assert len(lifecycle) == 4  # open proposals, dismissed pairs, the proposals, their members
