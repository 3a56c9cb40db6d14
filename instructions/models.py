"""Texts agents are handed (MCP prompts and docs), overridable per organization.

They lived in mcp_api until REST came to edit them too: they are the organization's data, not
one interface's, so both interfaces now read and write them here.
"""

from __future__ import annotations

from django.db import models
from django.utils import timezone

from organizations.models import Organization, User


class InstructionKey(models.TextChoices):
    AGENT_CORE = "memory-agent-core", "Prompt: memory-agent-core"
    INDEX_POLICY = "memory-index-policy", "Prompt: memory-index-policy"
    TOOL_GUIDELINES = "tool-usage-guidelines", "Prompt: tool-usage-guidelines"
    MCP_OVERVIEW = "mcp-overview", "Doc: docs://mcp-overview"
    TOOLS_GUIDE = "tools-guide", "Doc: docs://tools-guide"
    MEMORY_RULES = "memory-rules", "Doc: docs://memory-rules"


class InstructionText(models.Model):
    """An organization's own wording of one prompt or doc; without one, the shipped default."""

    organization = models.ForeignKey(
        Organization, on_delete=models.CASCADE, related_name="instruction_texts", db_index=False
    )
    key = models.CharField(max_length=64, choices=InstructionKey.choices)
    text = models.TextField()
    updated_at = models.DateTimeField(default=timezone.now)
    updated_by = models.ForeignKey(User, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["organization", "key"], name="instruction_text_unique_per_org"),
        ]

    def __str__(self) -> str:
        return f"{self.organization.slug}: {self.key}"
