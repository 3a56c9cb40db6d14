"""Someone's personal memory stays theirs on every page of the admin, not only in the memory list:
every registered admin and every inline of a memory's page is enumerated, and none may reach it
(nor a link, fact or proposal that names it); the audit log and the review queue name it without
saying what it is. And the admin's rule (memories.selectors.personal_to_others_q) and the one every
principal reads by (memory_visibility_q) agree."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib import admin
from django.db import models
from django.test import Client, RequestFactory
from django.urls import reverse

from knowledge.links import link_create
from knowledge.services import triple_assert
from lifecycle.models import ConsolidationProposal, ProposalKind
from memories.admin import MemoryAdmin
from memories.models import Memory
from memories.selectors import memory_visibility_q, personal_to_others_q
from memories.services import memory_create
from organizations.models import Organization, Role
from tests.admin.conftest import StaffFactory
from tests.conftest import Tenant

SECRET_TITLE = "My salary negotiation notes"


@pytest.fixture
def personal(acme: Tenant) -> dict[str, Any]:
    """acme-person's personal memory, linked to an organization memory, a fact learned from it, and
    a proposal naming both."""
    data = {"scope_type": "user", "memory_type": "fact", "title": SECRET_TITLE,
            "current_content": "I asked for a raise of ten percent in the review."}  # fmt: skip
    mine = memory_create(principal=acme.person, data=data)[0]
    shared = memory_create(
        principal=acme.curator,
        data={"scope_type": "organization", "memory_type": "fact", "current_content": "Reviews happen in March."},
    )[0]
    link_create(principal=acme.person, source_id=mine.pk, target_id=shared.pk)
    link_create(principal=acme.person, source_id=shared.pk, target_id=mine.pk, relation_type="derived_from")
    triple_assert(principal=acme.person, subject="Ana", predicate="asked_for", object="Raise", memory_id=mine.pk)
    proposal = ConsolidationProposal.objects.create(
        organization=acme.organization, kind=ProposalKind.MERGE, memory_ids=sorted([mine.pk, shared.pk]),
        evidence={"similarity": 0.9}, created_by="tests",
    )  # fmt: skip
    proposal.memories.set([mine, shared])
    # And what names only shared memories, which the lists go on showing.
    other = memory_create(
        principal=acme.curator,
        data={"scope_type": "organization", "memory_type": "fact", "current_content": "Raises are decided in April."},
    )[0]
    link_create(principal=acme.curator, source_id=shared.pk, target_id=other.pk)
    both = ConsolidationProposal.objects.create(
        organization=acme.organization, kind=ProposalKind.MERGE, memory_ids=sorted([shared.pk, other.pk]),
        evidence={"similarity": 0.9}, created_by="tests",
    )  # fmt: skip
    both.memories.set([shared, other])
    return {"mine": mine, "shared": shared, "proposal": proposal}


def _memory_ids(queryset: models.QuerySet[Any]) -> set[Any]:
    """Every memory a queryset's rows are or point at."""
    model = queryset.model
    if model is Memory:
        return set(queryset.values_list("pk", flat=True))
    found: set[Any] = set()
    for field in model._meta.get_fields():
        if (field.many_to_one or field.many_to_many) and field.related_model is Memory and field.concrete:
            found |= set(queryset.exclude(**{field.name: None}).values_list(field.name, flat=True))
    return found


@pytest.mark.parametrize("role", [Role.CURATOR, Role.ADMIN])
def test_no_admin_list_or_inline_reaches_someone_elses_personal_memory(
    acme: Tenant, personal: dict[str, Any], make_staff: StaffFactory, role: str
) -> None:
    request = RequestFactory().get("/admin/")
    request.user = make_staff("cora", acme.organization, role)
    reached: dict[str, set[Any]] = {}
    for model, model_admin in admin.site._registry.items():
        reached[model.__name__] = _memory_ids(model_admin.get_queryset(request))
    for inline_class in MemoryAdmin.inlines:
        inline = inline_class(Memory, admin.site)
        reached[f"inline {inline_class.__name__}"] = _memory_ids(inline.get_queryset(request))

    assert {name for name, ids in reached.items() if personal["mine"].pk in ids} == set()
    # The lists that do show memories still show the shared one: the check above looked at something.
    assert {"Memory", "MemoryLink", "ConsolidationProposal"} <= {n for n, ids in reached.items() if ids}
    assert personal["shared"].pk in reached["Memory"]


def test_its_owner_and_a_superuser_still_reach_it(acme: Tenant, personal: dict[str, Any]) -> None:
    request = RequestFactory().get("/admin/")
    request.user = acme.person.user
    assert personal["mine"].pk in _memory_ids(admin.site._registry[Memory].get_queryset(request))


def test_the_audit_log_and_the_review_queue_do_not_say_what_it_is(
    acme: Tenant, personal: dict[str, Any], client: Client, make_staff: StaffFactory
) -> None:
    client.force_login(make_staff("cora", acme.organization, Role.ADMIN))

    audit = client.get(reverse("admin:organizations_auditevent_changelist"))
    queue = client.get(reverse("admin:review_queue"))

    assert audit.status_code == 200 and queue.status_code == 200
    assert "someone&#x27;s personal memory" in audit.content.decode()
    for page in (audit, queue):
        assert SECRET_TITLE not in page.content.decode()


def test_the_admins_rule_and_a_principals_agree(acme: Tenant, globex: Tenant, personal: dict[str, Any]) -> None:
    memory_create(
        principal=globex.person, data={"scope_type": "user", "memory_type": "fact", "current_content": "Globex's note."}
    )
    organizations = Organization.objects.filter(pk=acme.organization.pk)
    for principal in (acme.person, acme.agent, acme.curator):
        by_principal = set(Memory.objects.filter(memory_visibility_q(principal)).values_list("pk", flat=True))
        by_rule = set(
            Memory.objects.filter(organization__in=organizations)
            .exclude(personal_to_others_q(principal.user))
            .values_list("pk", flat=True)
        )
        assert by_principal == by_rule
    assert personal["mine"].pk in by_principal_of(acme.person) and personal["mine"].pk not in by_principal_of(
        acme.agent
    )


def by_principal_of(principal: Any) -> set[Any]:
    return set(Memory.objects.filter(memory_visibility_q(principal)).values_list("pk", flat=True))


def test_every_admin_list_opens_and_does_not_say_what_it_is(
    acme: Tenant, personal: dict[str, Any], client: Client, make_staff: StaffFactory
) -> None:
    staff = make_staff("cora", acme.organization, Role.ADMIN)
    client.force_login(staff)
    request = RequestFactory().get("/admin/")
    request.user = staff
    opened = []
    for model, model_admin in admin.site._registry.items():
        if not model_admin.has_view_permission(request):
            continue
        page = client.get(reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist"))
        assert page.status_code == 200, model.__name__
        assert SECRET_TITLE not in page.content.decode(), model.__name__
        opened.append(model.__name__)
    assert {"Memory", "MemoryLink", "ConsolidationProposal", "Triple"} <= set(opened)
