"""Linking memories: idempotent, typed, only within the organization, locked links need a curator,
removal is soft and audited, readers cannot link."""

from __future__ import annotations

import pytest

from knowledge.links import link_create, link_remove
from knowledge.models import MemoryLink, RelationType
from memories.decisions import memory_lock
from memories.models import Memory
from memories.services import memory_create
from memory_platform.exceptions import Locked, NotFound, PermissionDenied, ValidationError
from organizations.models import AuditEvent
from organizations.principal import Principal
from tests.conftest import MemoryFactory, Tenant
from tests.knowledge.conftest import Link


@pytest.fixture
def pair(make_memory: MemoryFactory) -> tuple[Memory, Memory]:
    return (
        make_memory(current_content="Refunds over 500 EUR need a second approver."),
        make_memory(current_content="Approvers are members of the finance team."),
    )


def _active(source: Memory, target: Memory) -> list[MemoryLink]:
    return list(MemoryLink.objects.filter(source=source, target=target, removed_at__isnull=True))


def test_linking_twice_keeps_one_link_and_returns_it(acme: Tenant, pair: tuple[Memory, Memory]) -> None:
    source, target = pair

    first, _ = link_create(principal=acme.agent, source_id=source.id, target_id=target.id, relation_type="depends_on")
    second, _ = link_create(
        principal=acme.agent, source_id=str(source.id), target_id=str(target.id), relation_type="depends_on"
    )

    assert first.pk == second.pk
    assert [(link.pk, link.relation_type) for link in _active(source, target)] == [(first.pk, "depends_on")]
    assert AuditEvent.objects.filter(action="link.create", target_id=str(first.pk)).count() == 1


def test_another_relation_between_the_same_pair_is_a_second_link(
    acme: Tenant, pair: tuple[Memory, Memory], link: Link
) -> None:
    source, target = pair

    link(source, target, "depends_on")
    link(source, target, "contradicts")

    assert sorted(link.relation_type for link in _active(source, target)) == ["contradicts", "depends_on"]


def test_relation_type_defaults_to_related(acme: Tenant, pair: tuple[Memory, Memory]) -> None:
    source, target = pair

    created, _ = link_create(principal=acme.agent, source_id=source.id, target_id=target.id)

    assert created.relation_type == "related"


def test_an_unknown_relation_type_is_refused_with_the_allowed_list(acme: Tenant, pair: tuple[Memory, Memory]) -> None:
    source, target = pair

    with pytest.raises(ValidationError) as exc:
        link_create(principal=acme.agent, source_id=source.id, target_id=target.id, relation_type="friends_with")

    assert "friends_with" in exc.value.message
    for allowed in RelationType.values:
        assert allowed in exc.value.message
    assert exc.value.details == {"field": "relation_type"}
    assert not MemoryLink.objects.exists()


def test_a_memory_cannot_be_linked_to_itself(acme: Tenant, pair: tuple[Memory, Memory]) -> None:
    source, _ = pair

    with pytest.raises(ValidationError, match="itself"):
        link_create(principal=acme.agent, source_id=source.id, target_id=source.id)

    assert not MemoryLink.objects.exists()


@pytest.mark.parametrize("side", ["source", "target"])
def test_the_outsider_cannot_link_acme_memories(
    acme: Tenant, globex: Tenant, pair: tuple[Memory, Memory], side: str
) -> None:
    acme_memory, _ = pair
    globex_memory, _ = memory_create(
        principal=globex.agent,
        data={"scope_type": "organization", "memory_type": "fact", "current_content": "Globex ships on Mondays."},
    )
    ends = (acme_memory, globex_memory) if side == "source" else (globex_memory, acme_memory)

    with pytest.raises(NotFound, match=str(acme_memory.id)):
        link_create(principal=globex.admin, source_id=ends[0].id, target_id=ends[1].id)

    assert not MemoryLink.objects.exists()


@pytest.mark.parametrize("owner", ["acme", "globex"])
def test_a_system_memory_cannot_be_linked(
    acme: Tenant, globex: Tenant, pair: tuple[Memory, Memory], owner: str
) -> None:
    # System memories are shared by every organization: a link from one organization's knowledge
    # would hang on everyone's memory, whichever organization's platform administrator wrote it.
    tenant = acme if owner == "acme" else globex
    platform_admin = Principal.for_operator(tenant.organization)
    shared, _ = memory_create(
        principal=platform_admin,
        data={
            "scope_type": "system",
            "memory_type": "convention",
            "current_content": "Never store secrets in memories.",
        },
    )
    mine, _ = pair

    with pytest.raises(ValidationError, match="system memories cannot"):
        link_create(principal=acme.curator, source_id=mine.id, target_id=shared.id)
    with pytest.raises(ValidationError, match="system memories cannot"):
        link_create(principal=acme.curator, source_id=shared.id, target_id=mine.id)

    assert not MemoryLink.objects.exists()


def test_a_reader_cannot_link(acme: Tenant, pair: tuple[Memory, Memory]) -> None:
    source, target = pair

    with pytest.raises(PermissionDenied, match="agent role"):
        link_create(principal=acme.reader, source_id=source.id, target_id=target.id)
    with pytest.raises(PermissionDenied, match="agent role"):
        link_remove(principal=acme.reader, source_id=source.id, target_id=target.id)

    assert not MemoryLink.objects.exists()


@pytest.mark.parametrize("locked_end", ["source", "target"])
def test_links_of_a_locked_memory_need_a_curator(
    acme: Tenant, pair: tuple[Memory, Memory], link: Link, locked_end: str
) -> None:
    source, target = pair
    existing = link(source, target, "depends_on")
    memory_lock(principal=acme.curator, memory_id=(source if locked_end == "source" else target).id)

    with pytest.raises(Locked, match="needs a curator"):
        link_create(principal=acme.agent, source_id=source.id, target_id=target.id, relation_type="contradicts")
    with pytest.raises(Locked, match="needs a curator"):
        link_remove(principal=acme.agent, source_id=source.id, target_id=target.id, relation_type="depends_on")
    assert [link.pk for link in _active(source, target)] == [existing.pk]

    added, _ = link_create(
        principal=acme.curator, source_id=source.id, target_id=target.id, relation_type="contradicts"
    )
    removed = link_remove(principal=acme.curator, source_id=source.id, target_id=target.id, relation_type="depends_on")

    assert removed == 1
    assert [link.pk for link in _active(source, target)] == [added.pk]


def test_removing_a_link_keeps_the_row_marks_it_removed_and_audits_it(
    acme: Tenant, pair: tuple[Memory, Memory], link: Link
) -> None:
    source, target = pair
    existing = link(source, target, "depends_on")

    removed = link_remove(principal=acme.agent, source_id=source.id, target_id=target.id, relation_type="depends_on")

    assert removed == 1
    stored = MemoryLink.objects.get(pk=existing.pk)
    assert stored.removed_at is not None
    assert _active(source, target) == []
    event = AuditEvent.objects.get(action="link.remove")
    assert (event.target_type, event.target_id, event.organization_id) == (
        "memory_link",
        str(existing.pk),
        acme.organization.pk,
    )
    assert acme.agent.token is not None and event.token_id == acme.agent.token.pk

    # Nothing left to remove; linking again makes a new active link beside the removed one.
    assert link_remove(principal=acme.agent, source_id=source.id, target_id=target.id, relation_type="depends_on") == 0
    again = link(source, target, "depends_on")
    assert again.pk != existing.pk
    assert MemoryLink.objects.filter(source=source, target=target).count() == 2


def test_the_outsider_cannot_remove_an_acme_link(
    acme: Tenant, globex: Tenant, pair: tuple[Memory, Memory], link: Link
) -> None:
    source, target = pair
    existing = link(source, target)

    with pytest.raises(NotFound):
        link_remove(principal=globex.admin, source_id=source.id, target_id=target.id)

    assert MemoryLink.objects.get(pk=existing.pk).removed_at is None
