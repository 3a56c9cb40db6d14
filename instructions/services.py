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
def instruction_text_set(*, principal: Principal, key: str, text: str, reason: str = "") -> TextEntry:
    """Replace the shipped wording of one prompt or doc for the organization (admins)."""
    principal.require(Role.ADMIN, "editing prompt and doc texts")
    wanted = instruction_key(key)
    if not isinstance(text, str) or not text.strip():
        raise ValidationError("text must not be empty; delete the text to go back to the default")
    previous = instruction_text_get(principal, wanted.value)
    InstructionText.objects.update_or_create(
        organization=principal.organization,
        key=wanted.value,
        defaults={"text": text, "updated_at": timezone.now(), "updated_by": principal.user},
    )
    # The wording replaced is kept in the event: any earlier wording can be put back.
    audit_record(
        principal=principal,
        action="text.update",
        target_type="instruction_text",
        target_id=wanted.value,
        reason=reason,
        data={"previous": previous.text, "text": text},
    )
    return instruction_text_get(principal, wanted.value)


@transaction.atomic
def instruction_text_reset(*, principal: Principal, key: str, reason: str = "") -> TextEntry:
    """Go back to the shipped default."""
    principal.require(Role.ADMIN, "editing prompt and doc texts")
    wanted = instruction_key(key)
    own = InstructionText.objects.select_for_update().filter(organization=principal.organization, key=wanted.value)
    previous = own.values_list("text", flat=True).first()
    if previous is not None:
        own.delete()  # the organization's wording stays in the event below; the shipped one applies again
        audit_record(
            principal=principal,
            action="text.reset",
            target_type="instruction_text",
            target_id=wanted.value,
            reason=reason,
            data={"previous": previous},
        )
    return instruction_text_get(principal, wanted.value)
