"""Freshness decays with idleness, slower for memories read often; stale ones become proposals."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from lifecycle.decay import decay_run
from lifecycle.merge import proposal_undo
from lifecycle.models import ConsolidationProposal, ProposalKind, ProposalState
from lifecycle.services import proposal_apply, proposal_dismiss
from memories.decisions import memory_verify
from memories.models import Memory, MemoryAccess, Status
from memories.search import SearchParams, memory_search
from tests.conftest import MemoryFactory, Tenant

pytestmark = pytest.mark.django_db


def idle(memory: Memory, days: int, *, reads: int = 0) -> None:
    """As if the memory was last changed (and last read, if ``reads``) ``days`` ago."""
    moment = timezone.now() - timedelta(days=days)
    Memory.objects.filter(pk=memory.pk).update(updated_at=moment, created_at=moment)
    if reads:
        MemoryAccess.objects.update_or_create(
            memory_id=memory.pk, defaults={"access_count": reads, "last_accessed_at": moment}
        )


def freshness(memory: Memory) -> float:
    return MemoryAccess.objects.get(memory_id=memory.pk).freshness or 0.0


def test_freshness_halves_every_half_life_and_reads_slow_it(acme: Tenant, make_memory: MemoryFactory) -> None:
    today, month, month_read_often = make_memory(), make_memory(), make_memory()
    idle(month, 30)
    idle(month_read_often, 30, reads=3)

    run = decay_run(organization=acme.organization)

    assert run is not None and run.counts["freshness_computed"] == 3
    assert freshness(today) == pytest.approx(1.0, abs=0.01)
    assert freshness(month) == pytest.approx(0.5, abs=0.01)
    assert freshness(month_read_often) == pytest.approx(2 ** (-1 / 3), abs=0.01)  # 3 reads: three half-lives
    assert Memory.objects.get(pk=month.pk).version == 1  # the memory row is never rewritten


def test_rules_conventions_decisions_and_reviewed_memories_never_decay(
    acme: Tenant, make_memory: MemoryFactory
) -> None:
    kept = [make_memory(memory_type=kind) for kind in ("business_rule", "convention", "decision_log")]
    verified = make_memory()
    memory_verify(principal=acme.curator, memory_id=verified.pk)
    for memory in [*kept, verified]:
        idle(memory, 400)

    decay_run(organization=acme.organization)

    assert [freshness(m) for m in [*kept, verified]] == [1.0, 1.0, 1.0, 1.0]
    assert not ConsolidationProposal.objects.exists()


def test_stale_memories_become_proposals_only_a_curator_deprecates_and_can_undo(
    acme: Tenant, make_memory: MemoryFactory
) -> None:
    stale, recent = make_memory(status="active"), make_memory()
    idle(stale, 200)

    decay_run(organization=acme.organization)
    decay_run(organization=acme.organization)  # proposed once, however many runs

    [proposal] = ConsolidationProposal.objects.filter(kind=ProposalKind.STALE)
    assert proposal.memory_ids == [stale.pk] and proposal.state == ProposalState.OPEN
    assert proposal.evidence["freshness"] < 0.1
    assert Memory.objects.get(pk=stale.pk).status == Status.ACTIVE  # nothing changes without a curator

    proposal_apply(principal=acme.curator, proposal_id=proposal.pk, reason="nobody reads it")
    assert Memory.objects.get(pk=stale.pk).status == Status.DEPRECATED
    proposal_undo(principal=acme.curator, proposal_id=proposal.pk)
    assert Memory.objects.get(pk=stale.pk).status == Status.ACTIVE
    assert Memory.objects.get(pk=recent.pk).status == Status.DRAFT


def test_a_dismissed_stale_proposal_is_not_made_again_until_the_memory_changes(
    acme: Tenant, make_memory: MemoryFactory
) -> None:
    stale = make_memory()
    idle(stale, 200)
    decay_run(organization=acme.organization)
    proposal = ConsolidationProposal.objects.get(kind=ProposalKind.STALE)

    proposal_dismiss(principal=acme.curator, proposal_id=proposal.pk, reason="still true, rarely needed")
    decay_run(organization=acme.organization)

    assert ConsolidationProposal.objects.filter(kind=ProposalKind.STALE).count() == 1


def test_an_outsider_organization_is_left_alone(acme: Tenant, globex: Tenant, make_memory: MemoryFactory) -> None:
    theirs = make_memory(principal=globex.agent)
    idle(theirs, 200)

    decay_run(organization=acme.organization)

    assert not MemoryAccess.objects.filter(memory_id=theirs.pk).exists()
    assert not ConsolidationProposal.objects.filter(organization=globex.organization).exists()


def test_freshness_never_moves_search_ranking(acme: Tenant, make_memory: MemoryFactory) -> None:
    stale = make_memory(current_content="Deploys to production need one approval and a green pipeline.")
    fresh = make_memory(current_content="Deploys to staging need a green pipeline.")
    make_memory(current_content="Invoices are generated on the first day of the month.")
    params = SearchParams.build(query="what do deploys to production need", limit=3)

    def ranking() -> list[tuple[object, float]]:
        # Searching counts as a read: put the access records back as decay found them.
        page = memory_search(acme.agent, params, counts_as_read=False)
        return [(hit.memory.pk, hit.score) for hit in page.hits]

    before = ranking()
    idle(stale, 400)
    decay_run(organization=acme.organization)
    assert freshness(stale) < 0.01 < freshness(fresh)

    assert ranking() == before
    assert before[0][0] == stale.pk  # the best answer stays first, however idle
