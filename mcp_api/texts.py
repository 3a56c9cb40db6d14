"""Reading prompt and doc texts: the organization's override, else the shipped default."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from django.conf import settings

from mcp_api.models import InstructionKey, InstructionText
from organizations.models import Organization


@cache
def default_text(key: str) -> str:
    return (Path(settings.BASE_DIR) / "templates" / "mcp" / f"{key}.md").read_text()


def instruction_text(organization: Organization, key: InstructionKey) -> str:
    override = InstructionText.objects.filter(organization=organization, key=key).values_list("text", flat=True).first()
    return override if override else default_text(key.value)
