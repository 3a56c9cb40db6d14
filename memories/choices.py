"""The choices a memory's fields take, and the rules named after them: importable without the models
(memories.models re-exports each, where most code reads them)."""

from __future__ import annotations

from django.db import models
from django.db.models import Q


class ScopeType(models.TextChoices):
    SYSTEM = "system", "System"
    ORGANIZATION = "organization", "Organization"
    REPOSITORY = "repository", "Repository"
    USER = "user", "User"


class MemoryType(models.TextChoices):
    BUSINESS_RULE = "business_rule", "Business rule"
    DECISION_LOG = "decision_log", "Decision log"
    PREFERENCE = "preference", "Preference"
    SYSTEM_CONSTRAINT = "system_constraint", "System constraint"
    DOCUMENTATION = "documentation", "Documentation"
    TECH_STACK = "tech_stack", "Tech stack"
    FACT = "fact", "Fact"
    TASK = "task", "Task"
    ARCHITECTURE = "architecture", "Architecture"
    USER_CONTEXT = "user_context", "User context"
    CONVENTION = "convention", "Convention"
    RISK = "risk", "Risk"


class Status(models.TextChoices):
    DRAFT = "draft", "Draft"
    VERIFIED = "verified", "Verified"
    LOCKED = "locked", "Locked"
    DEPRECATED = "deprecated", "Deprecated"
    ACTIVE = "active", "Active"


class EmbeddingStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    READY = "ready", "Ready"
    FAILED = "failed", "Failed"


IMPORTANCE_MIN = 1
IMPORTANCE_MAX = 10


class AuthorKind(models.TextChoices):
    """Who wrote a memory's current text: an agent (any API token), a person (logged in), or the
    platform itself (manage.py, the lifecycle workers)."""

    AGENT = "agent", "Agent"
    PERSON = "person", "Person"
    SYSTEM = "system", "System"


class ReviewState(models.TextChoices):
    """How far a curator stands behind a memory: read off its status (memories.trust)."""

    UNREVIEWED = "unreviewed", "Unreviewed"
    VERIFIED = "verified", "Verified"
    LOCKED = "locked", "Locked"


# The types that read as rules to the agents that find them: an agent's one waits for a curator.
RULE_TYPES = frozenset(
    {MemoryType.BUSINESS_RULE, MemoryType.SYSTEM_CONSTRAINT, MemoryType.CONVENTION, MemoryType.DECISION_LOG}
)


# What waits for a curator: every draft, and the active memories the write policy flagged for review,
# neither deleted nor superseded (curation.review's queue, the count of it on every admin page, and
# the partial index both read).
AWAITING_REVIEW = (Q(status=Status.DRAFT) | (Q(status=Status.ACTIVE) & ~Q(review_flags=[]))) & Q(
    deleted_at__isnull=True, superseded_by__isnull=True
)
