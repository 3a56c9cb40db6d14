"""The consolidation worker's pass: what it merges on its own, what it leaves to curators."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from django.db import connection
from django.utils import timezone

from lifecycle.consolidation import LOCK_NAMESPACE, consolidation_run
from lifecycle.models import ConsolidationProposal, LifecycleRun, ProposalKind, ProposalState, RunStatus
from lifecycle.services import proposal_dismiss
from memories.decisions import memory_lock
from memories.models import Memory, Status
from tests.conftest import MemoryFactory, Tenant

pytestmark = pytest.mark.django_db

RULE = "Every pull request needs one approving review before it is merged."


def alive(ids: list[Any]) -> set[Any]:
    return set(Memory.objects.filter(pk__in=ids, superseded_by__isnull=True).values_list("pk", flat=True))


def proposals(kind: str | None = None, state: str = ProposalState.OPEN) -> list[ConsolidationProposal]:
    queryset = ConsolidationProposal.objects.filter(state=state)
    return list(queryset.filter(kind=kind) if kind else queryset)


@pytest.fixture
def filler(make_memory: MemoryFactory) -> list[Memory]:
    """Unrelated memories, so that the organization is not tiny (the per-run cap is a share of it)."""
    topics = [
        "billing retries", "the staging database", "on-call rotations", "API versioning", "log retention",
        "feature flags", "the mobile release train", "data residency", "cache invalidation", "SSO setup",
    ]  # fmt: skip
    return [make_memory(current_content=f"Notes on {topic}: owned by team {n}.") for n, topic in enumerate(topics)]


def test_exact_duplicates_written_by_agents_are_merged_and_the_run_is_recorded(
    acme: Tenant, make_memory: MemoryFactory, filler: list[Memory]
) -> None:
    first = make_memory(current_content=RULE)
    second = make_memory(current_content=RULE.upper())

    run = consolidation_run(organization=acme.organization)

    assert run is not None and run.status == RunStatus.COMPLETED
    assert alive([first.pk, second.pk]) != {first.pk, second.pk}
    merged = proposals(state=ProposalState.APPLIED)
    assert len(merged) == 1 and merged[0].run_id == run.pk and "lifecycle worker" in merged[0].created_by
    assert run.counts["auto_merged"] == 1
    assert run.counts["examined"] == len(filler) + 2
    assert run.watermark is not None and run.finished_at is not None


def test_paraphrases_become_proposals_not_merges(
    acme: Tenant, make_memory: MemoryFactory, filler: list[Memory]
) -> None:
    first = make_memory(current_content="Never deploy to production on Friday afternoons.")
    second = make_memory(current_content="Do not deploy to production on a Friday afternoon.")

    consolidation_run(organization=acme.organization)

    assert alive([first.pk, second.pk]) == {first.pk, second.pk}
    [proposal] = proposals(ProposalKind.MERGE)
    assert sorted(proposal.memory_ids) == sorted([first.pk, second.pk])
    assert proposal.evidence["similarity"] >= 0.85


def test_near_misses_are_contradiction_proposals_never_merged(
    acme: Tenant, make_memory: MemoryFactory, filler: list[Memory], settings: Any
) -> None:
    settings.CONSOLIDATION_AUTO_MERGE = "near"  # even when near duplicates merge on their own
    first = make_memory(current_content="The HTTP client timeout is 30 seconds.")
    second = make_memory(current_content="The HTTP client timeout is 60 seconds.")

    consolidation_run(organization=acme.organization)

    assert alive([first.pk, second.pk]) == {first.pk, second.pk}
    [proposal] = proposals(ProposalKind.CONTRADICTION)
    assert proposal.evidence["numbers"] in ({"first": ["30"], "second": ["60"]}, {"first": ["60"], "second": ["30"]})


def test_locked_verified_and_peoples_memories_are_never_changed_automatically(
    acme: Tenant, make_memory: MemoryFactory, filler: list[Memory]
) -> None:
    locked = make_memory(current_content=RULE)
    memory_lock(principal=acme.curator, memory_id=locked.pk)
    agent_copy = make_memory(current_content=RULE + "!")
    persons = make_memory(principal=acme.person, current_content="Squash commits when merging.")
    persons_copy = make_memory(principal=acme.person, current_content="squash commits when merging")
    versions = {m.pk: Memory.objects.get(pk=m.pk).version for m in [locked, agent_copy, persons, persons_copy]}

    consolidation_run(organization=acme.organization)

    assert {m.pk: Memory.objects.get(pk=m.pk).version for m in [locked, agent_copy, persons, persons_copy]} == versions
    assert Memory.objects.get(pk=locked.pk).status == Status.LOCKED
    assert len(proposals(ProposalKind.MERGE)) == 2


def test_a_dismissed_pair_is_never_proposed_again(
    acme: Tenant, make_memory: MemoryFactory, filler: list[Memory]
) -> None:
    first = make_memory(current_content="Never deploy to production on Friday afternoons.")
    make_memory(current_content="Do not deploy to production on a Friday afternoon.")
    consolidation_run(organization=acme.organization)
    [proposal] = proposals(ProposalKind.MERGE)

    proposal_dismiss(principal=acme.curator, proposal_id=proposal.pk, reason="one is about staging")
    consolidation_run(organization=acme.organization, full=True)
    Memory.objects.filter(pk=first.pk).update(importance=3)  # changed: looked at again by the next run
    consolidation_run(organization=acme.organization)

    assert proposals(ProposalKind.MERGE) == []


def test_at_most_the_set_share_changes_automatically_in_one_run(
    acme: Tenant, make_memory: MemoryFactory, filler: list[Memory], settings: Any
) -> None:
    settings.CONSOLIDATION_AUTO_MERGE_SHARE = 0.1  # of ~16 memories: 1 merge of 2 memories
    for n in range(3):
        text = f"Service number {n} must expose a health endpoint at /healthz-{n}."
        make_memory(current_content=text)
        make_memory(current_content=text.lower())

    run = consolidation_run(organization=acme.organization)

    assert run is not None
    assert run.counts["auto_merged"] == 1
    assert len(proposals(ProposalKind.MERGE)) == 2


def test_an_incremental_run_looks_only_at_what_changed(
    acme: Tenant, make_memory: MemoryFactory, filler: list[Memory]
) -> None:
    consolidation_run(organization=acme.organization)
    make_memory(current_content=RULE)

    run = consolidation_run(organization=acme.organization)
    full = consolidation_run(organization=acme.organization, full=True)

    assert run is not None and run.counts["examined"] == 1
    assert full is not None and full.counts["examined"] == len(filler) + 1


@pytest.fixture
def other_connection() -> Iterator[psycopg.Connection[Any]]:
    params = connection.get_connection_params()
    params.pop("cursor_factory", None)
    params.pop("context", None)
    with psycopg.connect(**params, autocommit=True) as conn:
        yield conn


def test_only_one_run_per_organization_at_a_time(
    acme: Tenant, globex: Tenant, make_memory: MemoryFactory, other_connection: psycopg.Connection[Any]
) -> None:
    make_memory(current_content=RULE)
    other_connection.execute("SELECT pg_advisory_lock(%s, %s)", [LOCK_NAMESPACE, acme.organization.pk])

    assert consolidation_run(organization=acme.organization) is None
    assert consolidation_run(organization=globex.organization) is not None  # other organizations go on

    other_connection.execute("SELECT pg_advisory_unlock(%s, %s)", [LOCK_NAMESPACE, acme.organization.pk])
    assert consolidation_run(organization=acme.organization) is not None


def test_a_run_left_running_by_a_dead_worker_is_closed_and_its_memories_looked_at_again(
    acme: Tenant, make_memory: MemoryFactory
) -> None:
    first = consolidation_run(organization=acme.organization)
    assert first is not None
    twin = make_memory(current_content=RULE)
    make_memory(current_content=RULE)
    dead = LifecycleRun.objects.create(organization=acme.organization, kind="consolidation")

    run = consolidation_run(organization=acme.organization)

    dead.refresh_from_db()
    assert dead.status == RunStatus.FAILED and "interrupted" in dead.errors
    assert run is not None and run.counts["examined"] == 2
    assert Memory.objects.filter(superseded_by=twin).exists() or Memory.objects.get(pk=twin.pk).superseded_by_id


def test_an_outsiders_memories_are_not_touched(acme: Tenant, globex: Tenant, make_memory: MemoryFactory) -> None:
    theirs = [make_memory(principal=globex.agent, current_content=RULE) for _ in range(2)]
    make_memory(current_content=RULE)

    consolidation_run(organization=acme.organization)

    assert alive([m.pk for m in theirs]) == {m.pk for m in theirs}
    assert not ConsolidationProposal.objects.filter(organization=globex.organization).exists()


@pytest.mark.django_db(transaction=True)
def test_the_worker_skips_a_memory_someone_is_changing_and_takes_it_up_later(
    acme: Tenant, make_memory: MemoryFactory, other_connection: psycopg.Connection[Any]
) -> None:
    first = make_memory(current_content=RULE)
    second = make_memory(current_content=RULE.upper())
    with other_connection.transaction():
        other_connection.execute("SELECT 1 FROM memories_memory WHERE id = %s FOR UPDATE", [second.pk])
        busy = consolidation_run(organization=acme.organization)
    assert busy is not None and busy.counts["auto_merged"] == 0 and "being changed" in busy.errors
    assert alive([first.pk, second.pk]) == {first.pk, second.pk}

    Memory.objects.filter(pk=second.pk).update(updated_at=timezone.now())  # the edit that held the row
    later = consolidation_run(organization=acme.organization)

    assert later is not None and later.counts["auto_merged"] == 1
