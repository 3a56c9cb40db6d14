"""Writes of the prompt and doc texts: admins reword them for their organization, or reset them."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from instructions.models import InstructionText
from instructions.selectors import TextEntry, instruction_key, instruction_text_get
from memory_platform.exceptions import ValidationError
from organizations.audit import audit_record
from organizations.models import Role
from organizations.principal import Principal


@transaction.atomic
def instruction_text_set(*, principal: Principal, key: str, text: str) -> TextEntry:
    """Replace the shipped wording of one prompt or doc for the organization (admins)."""
    principal.require(Role.ADMIN, "editing prompt and doc texts")
    wanted = instruction_key(key)
    if not isinstance(text, str) or not text.strip():
        raise ValidationError("text must not be empty; delete the text to go back to the default")
    InstructionText.objects.update_or_create(
        organization=principal.organization,
        key=wanted.value,
        defaults={"text": text, "updated_at": timezone.now(), "updated_by": principal.user},
    )
    audit_record(principal=principal, action="text.update", target_type="instruction_text", target_id=wanted.value)
    return instruction_text_get(principal, wanted.value)


@transaction.atomic
def instruction_text_reset(*, principal: Principal, key: str) -> TextEntry:
    """Go back to the shipped default."""
    principal.require(Role.ADMIN, "editing prompt and doc texts")
    wanted = instruction_key(key)
    deleted, _ = InstructionText.objects.filter(organization=principal.organization, key=wanted.value).delete()
    if deleted:
        audit_record(principal=principal, action="text.reset", target_type="instruction_text", target_id=wanted.value)
    return instruction_text_get(principal, wanted.value)
