"""A merge supersedes, never deletes; undo restores every member exactly, as new versions."""

from __future__ import annotations

from typing import Any

import pytest

from knowledge.links import link_create
from knowledge.models import MemoryLink, Triple
from knowledge.services import triple_assert
from lifecycle.merge import choose_survivor, memories_merge, proposal_undo
from lifecycle.models import ConsolidationProposal, ProposalState
from memories.decisions import memory_verify
from memories.models import Memory, MemoryVersion, Status
from memories.services import memory_update
from memory_platform.exceptions import Conflict, NotFound, PermissionDenied, ValidationError
from organizations.models import AuditEvent
from tests.conftest import MemoryFactory, Tenant

pytestmark = pytest.mark.django_db


def merge(acme: Tenant, principal: Any, ids: list[Any], **kwargs: Any) -> ConsolidationProposal:
    return memories_merge(
        principal=principal, organization_id=acme.organization.pk, memory_ids=ids, actor=principal, **kwargs
    )


def state(memory: Memory) -> dict[str, Any]:
    memory.refresh_from_db()
    return {
        "title": memory.title,
        "current_content": memory.current_content,
        "status": memory.status,
        "importance": memory.importance,
        "tags": list(memory.tags),
        "metadata": memory.metadata,
        "superseded_by": memory.superseded_by_id,
    }


@pytest.fixture
def trio(acme: Tenant, make_memory: MemoryFactory) -> list[Memory]:
    return [
        make_memory(
            current_content="Never deploy on Friday afternoons.",
            importance=5, tags=["deploy"], metadata={"team": "ops", "since": 2024}, status="active",
        ),
        make_memory(
            acme.curator,  # importance 8: above what an agent may set (the write policy)
            current_content="No deploys on Friday afternoon!\nIt breaks weekends.",
            importance=8, tags=["deploy", "friday"], metadata={"team": "platform"},
        ),
        make_memory(current_content="Do not deploy on friday afternoons", importance=2, tags=["weekend"]),
    ]  # fmt: skip


def test_the_survivor_takes_tags_importance_and_metadata_the_others_are_superseded(
    acme: Tenant, trio: list[Memory]
) -> None:
    survivor = trio[0]  # active outranks draft, whatever the importance

    proposal = merge(acme, acme.curator, [m.pk for m in trio], reason="same rule three times")

    assert proposal.state == ProposalState.APPLIED
    assert proposal.survivor_id == survivor.pk
    survivor.refresh_from_db()
    assert survivor.current_content == "Never deploy on Friday afternoons."
    assert survivor.tags == ["deploy", "friday", "weekend"]
    assert survivor.importance == 8
    assert survivor.metadata == {"team": "ops", "since": 2024}
    for other in trio[1:]:
        other.refresh_from_db()
        assert (other.status, other.superseded_by_id, other.deleted_at) == (Status.DEPRECATED, survivor.pk, None)
        latest = MemoryVersion.objects.filter(memory=other).order_by("-version").first()
        assert latest is not None and (latest.change, latest.reason) == ("superseded", "same rule three times")
    assert MemoryVersion.objects.filter(memory=survivor, change="merge").count() == 1
    assert AuditEvent.objects.filter(action="proposal.apply", target_id=str(proposal.pk)).exists()
    assert Memory.objects.filter(pk__in=[m.pk for m in trio]).count() == 3


def test_survivor_order_is_status_then_importance_then_access_then_recency(make_memory: MemoryFactory) -> None:
    draft_important = make_memory(importance=9)
    active = make_memory(importance=1, status="active")
    assert choose_survivor([draft_important, active]) == active
    older = make_memory(importance=4)
    newer = make_memory(importance=4)
    assert choose_survivor([older, newer]) == newer


def test_links_and_facts_of_the_superseded_follow_the_survivor_and_undo_puts_everything_back(
    acme: Tenant, trio: list[Memory], make_memory: MemoryFactory
) -> None:
    elsewhere = make_memory(current_content="The release calendar lives in the ops wiki.")
    original_link, _ = link_create(principal=acme.agent, source_id=trio[1].pk, target_id=elsewhere.pk)
    fact, _ = triple_assert(principal=acme.agent, subject="deploys", predicate="blocked_on", object="friday",
                         memory_id=trio[2].pk)  # fmt: skip
    before = {m.pk: state(m) for m in trio}

    proposal = merge(acme, acme.curator, [m.pk for m in trio], content="No production deploys on Friday afternoons.")

    survivor = trio[0]
    assert MemoryLink.objects.filter(source=survivor, target=elsewhere, removed_at__isnull=True).exists()
    original_link.refresh_from_db()
    assert original_link.removed_at is None  # the original stays
    assert Triple.objects.get(pk=fact.pk).memory_id == survivor.pk
    assert state(survivor)["current_content"] == "No production deploys on Friday afternoons."

    proposal_undo(principal=acme.curator, proposal_id=proposal.pk, reason="they differ after all")

    assert {m.pk: state(m) for m in trio} == before
    assert not MemoryLink.objects.filter(source=survivor, target=elsewhere, removed_at__isnull=True).exists()
    original_link.refresh_from_db()
    assert original_link.removed_at is None
    assert Triple.objects.get(pk=fact.pk).memory_id == trio[2].pk
    proposal.refresh_from_db()
    assert proposal.state == ProposalState.UNDONE
    for memory in trio:
        assert MemoryVersion.objects.filter(memory=memory, change="undo").count() == 1
    assert AuditEvent.objects.filter(action="proposal.undo", reason="they differ after all").count() == 1


def test_undo_is_refused_once_a_member_changed_after_the_merge(acme: Tenant, trio: list[Memory]) -> None:
    proposal = merge(acme, acme.curator, [m.pk for m in trio])
    memory_update(principal=acme.curator, memory_id=trio[0].pk, data={"importance": 3})

    with pytest.raises(Conflict, match="changed after the merge"):
        proposal_undo(principal=acme.curator, proposal_id=proposal.pk)


def test_agents_merge_unreviewed_memories_but_not_reviewed_ones(acme: Tenant, trio: list[Memory]) -> None:
    memory_verify(principal=acme.curator, memory_id=trio[2].pk)

    with pytest.raises(PermissionDenied, match="needs a curator"):
        merge(acme, acme.agent, [m.pk for m in trio])
    assert all(state(m)["superseded_by"] is None for m in trio)

    proposal = merge(acme, acme.agent, [trio[0].pk, trio[1].pk])
    assert proposal.state == ProposalState.APPLIED


def test_readers_cannot_merge_and_only_curators_undo(acme: Tenant, trio: list[Memory]) -> None:
    with pytest.raises(PermissionDenied):
        merge(acme, acme.reader, [trio[0].pk, trio[1].pk])
    proposal = merge(acme, acme.agent, [trio[0].pk, trio[1].pk])
    with pytest.raises(PermissionDenied):
        proposal_undo(principal=acme.agent, proposal_id=proposal.pk)


def test_bad_merges_are_refused_with_what_to_fix(acme: Tenant, trio: list[Memory], make_memory: MemoryFactory) -> None:
    other_scope = make_memory(scope_type="repository", repository="api")
    with pytest.raises(ValidationError, match="2 to 50"):
        merge(acme, acme.curator, [trio[0].pk])
    with pytest.raises(ValidationError, match="one scope"):
        merge(acme, acme.curator, [trio[0].pk, other_scope.pk])
    with pytest.raises(ValidationError, match="survivor_id must be one of"):
        merge(acme, acme.curator, [trio[0].pk, trio[1].pk], survivor_id=trio[2].pk)
    merge(acme, acme.curator, [trio[0].pk, trio[1].pk])
    with pytest.raises(Conflict, match="already superseded"):
        merge(acme, acme.curator, [trio[1].pk, trio[2].pk])


def test_an_outsider_can_neither_merge_nor_undo(acme: Tenant, globex: Tenant, trio: list[Memory]) -> None:
    with pytest.raises(NotFound):
        memories_merge(principal=globex.curator, organization_id=globex.organization.pk,
                       memory_ids=[trio[0].pk, trio[1].pk], actor=globex.curator)  # fmt: skip
    proposal = merge(acme, acme.curator, [trio[0].pk, trio[1].pk])
    with pytest.raises(NotFound):
        proposal_undo(principal=globex.curator, proposal_id=proposal.pk)
    assert state(trio[1])["superseded_by"] == trio[0].pk
