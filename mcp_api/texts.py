"""Prompt and doc texts: the organization's override, else the shipped default; admins edit them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from functools import cache
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from mcp_api.models import InstructionKey, InstructionText
from memory_platform.exceptions import NotFound, ValidationError
from organizations.audit import audit_record
from organizations.models import Organization, Role
from organizations.principal import Principal


@cache
def default_text(key: str) -> str:
    return (Path(settings.BASE_DIR) / "templates" / "mcp" / f"{key}.md").read_text()


def instruction_text(organization: Organization, key: InstructionKey) -> str:
    override = InstructionText.objects.filter(organization=organization, key=key).values_list("text", flat=True).first()
    return override if override else default_text(key.value)


@dataclass(frozen=True)
class TextEntry:
    key: InstructionKey
    text: str
    overridden: bool
    updated_at: datetime | None

    @property
    def label(self) -> str:
        return str(self.key.label)


def instruction_text_list(principal: Principal) -> list[TextEntry]:
    """Every prompt and doc as the principal's organization serves it."""
    overrides = {row.key: row for row in InstructionText.objects.filter(organization=principal.organization)}
    entries = []
    for key in InstructionKey:
        row = overrides.get(key.value)
        entries.append(
            TextEntry(
                key=key,
                text=row.text if row and row.text else default_text(key.value),
                overridden=bool(row and row.text),
                updated_at=row.updated_at if row else None,
            )
        )
    return entries


def instruction_key(value: str) -> InstructionKey:
    if value not in InstructionKey.values:
        raise NotFound(f"no text '{value}'; texts are: {', '.join(InstructionKey.values)}")
    return InstructionKey(value)


def instruction_text_get(principal: Principal, key: str) -> TextEntry:
    wanted = instruction_key(key)
    return next(entry for entry in instruction_text_list(principal) if entry.key == wanted)


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
