"""Reads of the prompt and doc texts: the organization's override, else the shipped default."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from functools import cache
from pathlib import Path

from django.conf import settings

from instructions.models import InstructionKey, InstructionText
from memory_platform.exceptions import NotFound
from organizations.models import Organization
from organizations.principal import Principal


@cache
def default_text(key: str) -> str:
    # The defaults stay under templates/mcp/: they are what the MCP server shipped with, and
    # operators who customised their deployment know them there.
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
