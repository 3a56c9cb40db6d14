"""Prompt and doc texts edited in the admin go through the services: audited, the old wording kept."""

from __future__ import annotations

from collections.abc import Callable

from django.test import Client
from django.urls import reverse

from instructions.models import InstructionText
from instructions.selectors import default_text
from organizations.models import AuditEvent, Role, User
from tests.admin.conftest import StaffFactory
from tests.conftest import Tenant

Login = Callable[[User], Client]
KEY = "memory-agent-core"


def test_an_edit_and_a_reset_keep_every_wording_in_the_audit_log(
    acme: Tenant, make_staff: StaffFactory, login: Login
) -> None:
    client = login(make_staff("ada", acme.organization, Role.ADMIN))
    add = {"organization": str(acme.organization.pk), "key": KEY, "text": "Acme's own wording."}

    assert client.post(reverse("admin:instructions_instructiontext_add"), add).status_code == 302
    text = InstructionText.objects.get(organization=acme.organization, key=KEY)
    change = reverse("admin:instructions_instructiontext_change", args=[text.pk])
    assert client.post(change, {**add, "text": "Acme's second wording."}).status_code == 302
    delete = reverse("admin:instructions_instructiontext_delete", args=[text.pk])
    assert client.post(delete, {"post": "yes"}).status_code == 302

    assert not InstructionText.objects.filter(organization=acme.organization).exists()
    events = AuditEvent.objects.filter(target_type="instruction_text", target_id=KEY).order_by("created_at", "pk")
    assert [(e.action, e.user.username if e.user else None, e.data.get("previous")) for e in events] == [
        ("text.update", "ada", default_text(KEY)),
        ("text.update", "ada", "Acme's own wording."),
        ("text.reset", "ada", "Acme's second wording."),
    ]


def test_a_curator_cannot_edit_the_texts(acme: Tenant, make_staff: StaffFactory, login: Login) -> None:
    client = login(make_staff("carol", acme.organization, Role.CURATOR))
    add = {"organization": str(acme.organization.pk), "key": KEY, "text": "Carol's wording."}

    assert client.post(reverse("admin:instructions_instructiontext_add"), add).status_code == 403
    assert not InstructionText.objects.exists()
