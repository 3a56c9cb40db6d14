"""Memories: the unit of knowledge agents share, with every version kept."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVector, SearchVectorField
from django.db import models
from django.db.models import F, Q
from django.db.models.fields.json import KeyTextTransform
from django.db.models.lookups import IsNull
from django.utils import timezone

from memories.choices import (  # noqa: F401 - re-exported (pyproject.toml): most code reads them here
    AWAITING_REVIEW,
    IMPORTANCE_MAX,
    IMPORTANCE_MIN,
    RULE_TYPES,
    AuthorKind,
    EmbeddingStatus,
    MemoryType,
    ReviewState,
    ScopeType,
    Status,
)
from memories.fields import EmbeddingField
from organizations.models import ApiToken, Organization, Repository, User

EMBEDDING_DIMENSIONS = 384
FULL_TEXT_CONFIG = "english"


class Memory(models.Model):
    # Contract fields (the MCP contract's memory object).
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    # Every index costs every write, so foreign keys get no index of their own where the composite
    # indexes below start with them (organization) or where it would only serve deleting a user or
    # a token (created_by..., rare, and a scan then is fine).
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="memories", db_index=False)
    repository = models.ForeignKey(Repository, null=True, blank=True, on_delete=models.PROTECT, related_name="memories")
    scope_type = models.CharField(max_length=16, choices=ScopeType.choices, default=ScopeType.ORGANIZATION)
    memory_type = models.CharField(max_length=32, choices=MemoryType.choices)
    title = models.CharField(max_length=255)
    current_content = models.TextField()
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.DRAFT)
    importance = models.PositiveSmallIntegerField(default=IMPORTANCE_MIN)
    metadata = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    updated_at = models.DateTimeField(default=timezone.now, editable=False)

    # Ours.
    tags = ArrayField(models.CharField(max_length=64), default=list, blank=True)
    version = models.PositiveIntegerField(default=1, editable=False)
    owner = models.ForeignKey(
        User,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="owned_memories",
        help_text="For user-scoped memories: the one user who sees them.",
    )
    created_by = models.ForeignKey(
        User, null=True, blank=True, on_delete=models.SET_NULL, related_name="+", editable=False, db_index=False
    )
    created_by_token = models.ForeignKey(
        ApiToken, null=True, blank=True, on_delete=models.SET_NULL, related_name="+", editable=False, db_index=False
    )
    updated_by = models.ForeignKey(
        User, null=True, blank=True, on_delete=models.SET_NULL, related_name="+", editable=False, db_index=False
    )
    updated_by_token = models.ForeignKey(
        ApiToken, null=True, blank=True, on_delete=models.SET_NULL, related_name="+", editable=False, db_index=False
    )
    deleted_at = models.DateTimeField(null=True, blank=True, editable=False)
    valid_from = models.DateTimeField(null=True, blank=True)
    valid_until = models.DateTimeField(null=True, blank=True)
    superseded_by = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="supersedes", db_constraint=False
    )
    source = models.JSONField(
        default=dict, blank=True, help_text="Provenance: repository, commit, ticket, session, url…"
    )
    # Provenance and review (memories.trust): who wrote the current text, named as they were when
    # they wrote it (a revoked token or a removed person still reads the same); who verified or
    # locked it and when; and what a curator should look at before standing behind it.
    author_kind = models.CharField(max_length=8, choices=AuthorKind.choices, default=AuthorKind.SYSTEM, editable=False)
    author_name = models.CharField(max_length=200, blank=True, editable=False)
    reviewed_by = models.CharField(max_length=200, blank=True, editable=False)
    reviewed_at = models.DateTimeField(null=True, blank=True, editable=False)
    review_flags = models.JSONField(default=list, blank=True, editable=False)
    idempotency_key = models.CharField(max_length=200, null=True, blank=True, editable=False)
    idempotency_fingerprint = models.CharField(max_length=64, blank=True, editable=False)

    # Retrieval. The embedding is written by the embedding pipeline; the full-text vector is kept
    # by PostgreSQL itself, so it can never disagree with the text.
    embedding = EmbeddingField(dimensions=EMBEDDING_DIMENSIONS, null=True, blank=True, editable=False)
    embedding_model = models.CharField(max_length=200, blank=True, editable=False)
    embedding_status = models.CharField(
        max_length=16, choices=EmbeddingStatus.choices, default=EmbeddingStatus.PENDING, editable=False
    )
    search_vector = models.GeneratedField(
        expression=SearchVector("title", weight="A", config=FULL_TEXT_CONFIG)
        + SearchVector("current_content", weight="B", config=FULL_TEXT_CONFIG),
        output_field=SearchVectorField(),
        db_persist=True,
    )

    class Meta:
        verbose_name_plural = "memories"
        ordering = ["-importance", "-created_at"]
        indexes = [
            models.Index(fields=["organization", "status"], name="memory_org_status_idx"),
            models.Index(fields=["organization", "-importance", "-created_at"], name="memory_org_rank_idx"),
            models.Index(fields=["organization", "repository"], name="memory_org_repo_idx"),
            models.Index(fields=["scope_type"], name="memory_scope_idx", condition=Q(scope_type="system")),
            # Without GIN's pending list (fastupdate): a write adds its entries to the index itself,
            # rather than to a list that every search reading the index would scan until a vacuum
            # merged it (a few thousand writes made the keyword query 40% slower).
            GinIndex(fields=["tags"], name="memory_tags_gin", fastupdate=False),
            GinIndex(fields=["metadata"], name="memory_metadata_gin", opclasses=["jsonb_path_ops"], fastupdate=False),
            # Search reads a memory written in a conversation session next to its neighbours in that
            # session (memories.search.features); only memories with a session are in this index.
            models.Index(
                F("organization"),
                KeyTextTransform("session", "source"),
                F("created_at"),
                name="memory_session_order_idx",
                condition=Q(IsNull(KeyTextTransform("session", "source"), False)),
            ),
            # Memories waiting for (or failed at) their embedding, as the health check, metrics,
            # status and embedding sweep read them; a ready memory is not in it.
            models.Index(
                fields=["organization", "embedding_status"],
                name="memory_embedding_waiting_idx",
                condition=Q(embedding_status__in=[EmbeddingStatus.PENDING, EmbeddingStatus.FAILED]),
            ),
            # What waits for review (AWAITING_REVIEW), in the queue's order: the queue and the count
            # of it on every curator's admin page read these rows, not every active memory.
            models.Index(
                fields=["organization", "-importance", "-created_at"],
                include=["scope_type", "owner"],
                name="memory_awaiting_review_idx",
                condition=AWAITING_REVIEW,
            ),
            # No search index over every organization's rows: each large organization has its own
            # HNSW and full-text indexes (memories.search.tenant_indexes), built by the worker.
        ]
        constraints = [
            models.CheckConstraint(
                condition=Q(importance__gte=IMPORTANCE_MIN) & Q(importance__lte=IMPORTANCE_MAX),
                name="memory_importance_range",
            ),
            models.CheckConstraint(condition=Q(scope_type__in=ScopeType.values), name="memory_scope_type_valid"),
            models.CheckConstraint(condition=Q(memory_type__in=MemoryType.values), name="memory_memory_type_valid"),
            models.CheckConstraint(condition=Q(status__in=Status.values), name="memory_status_valid"),
            models.CheckConstraint(
                condition=~Q(scope_type=ScopeType.REPOSITORY) | Q(repository__isnull=False),
                name="memory_repository_scope_has_repository",
            ),
            models.CheckConstraint(
                condition=~Q(scope_type=ScopeType.USER) | Q(owner__isnull=False),
                name="memory_user_scope_has_owner",
            ),
            models.UniqueConstraint(
                fields=["organization", "idempotency_key"],
                condition=Q(idempotency_key__isnull=False),
                name="memory_idempotency_key_unique_per_org",
            ),
        ]

    # Set by the write services on the instance they return, never stored: what the platform did to
    # this write (memories.trust.Note) and, for a new memory, the memories it may repeat or
    # contradict (memories.hints.WriteHints).
    write_notes: tuple[Any, ...] = ()
    write_hints: Any = None
    # Set by a listener of memories.written (the knowledge app's) on a memory written alone: tags
    # that memories mentioning the same names wear and this one does not.
    suggested_tags: tuple[str, ...] = ()

    def __str__(self) -> str:
        return self.title

    @property
    def is_deleted(self) -> bool:
        return self.deleted_at is not None

    # How often and when the memory was read live in MemoryAccess, not in this row (see there).
    def _access(self) -> MemoryAccess | None:
        try:
            return self.access
        except MemoryAccess.DoesNotExist:
            return None

    @property
    def access_count(self) -> int:
        access = self._access()
        return access.access_count if access else 0

    @property
    def last_accessed_at(self) -> datetime | None:
        access = self._access()
        return access.last_accessed_at if access else None

    @property
    def freshness(self) -> float | None:
        access = self._access()
        return access.freshness if access else None


class MemoryAccess(models.Model):
    """How often and when a memory was last read (search hits, browsing).

    Kept out of the memory's own row: a count updated there is a non-HOT update of a wide row,
    which re-inserts it into every index of the table, the HNSW graph among them (0.3-1.3 s per
    flush on a large table). Here a flush is one upsert of narrow rows. No row: never read.
    """

    memory = models.OneToOneField(
        Memory, primary_key=True, on_delete=models.CASCADE, related_name="access", editable=False, db_constraint=False
    )
    # The memory's, given by the database when an insert leaves it out (migration 0013's trigger).
    organization = models.ForeignKey(
        "organizations.Organization", on_delete=models.CASCADE, related_name="+", db_index=False, editable=False
    )
    access_count = models.PositiveBigIntegerField(default=0, editable=False)
    last_accessed_at = models.DateTimeField(null=True, blank=True, editable=False)
    # Written by the decay worker (lifecycle/decay.py says how it is computed): a curation signal.
    freshness = models.FloatField(null=True, blank=True, editable=False)
    freshness_at = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        verbose_name = "memory access"

    def __str__(self) -> str:
        return f"{self.memory_id}: {self.access_count}"


class MemoryVersion(models.Model):
    """A full snapshot of a memory as it stood after one change."""

    # Indexed by the (memory, version) constraint.
    memory = models.ForeignKey(
        Memory, on_delete=models.CASCADE, related_name="versions", db_index=False, db_constraint=False
    )
    # The memory's (set by version_row; the database gives it to an insert that leaves it out).
    organization = models.ForeignKey(
        "organizations.Organization", on_delete=models.CASCADE, related_name="+", db_index=False, editable=False
    )
    version = models.PositiveIntegerField()
    snapshot = models.JSONField()
    change = models.CharField(max_length=32, help_text="create, update, status, delete, restore…")
    reason = models.TextField(blank=True)
    changed_fields = ArrayField(models.CharField(max_length=64), default=list, blank=True)
    actor = models.CharField(max_length=200)
    user = models.ForeignKey(User, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    token = models.ForeignKey(ApiToken, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        # By the memory's id, not by the memory (which would join memories to sort by their order).
        ordering = ["memory_id", "-version"]
        constraints = [
            models.UniqueConstraint(fields=["memory", "version", "organization"], name="memory_version_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.memory_id} v{self.version}"

    @property
    def who(self) -> str:
        """Who wrote the version, as a person reads it: the agent token's name, or the person's.
        (Load ``token`` and ``user`` with the version when listing many.)"""
        if self.token_id is not None and self.token is not None and self.token.name:
            return f"{self.token.name} ({self.actor.removeprefix('token ')})"
        if self.user_id is not None and self.user is not None:
            return self.user.get_username()
        return self.actor


class CredentialHandling(models.TextChoices):
    REFUSE = "refuse", "Refuse the write, saying which kind of credential and where"
    REDACT = "redact", "Store it with each credential replaced by [REDACTED: kind]"


def default_agent_active_types() -> list[str]:
    return sorted(set(MemoryType.values) - RULE_TYPES)


DEFAULT_AGENT_MAX_IMPORTANCE = 7


class WritePolicy(models.Model):
    """What an organization lets agents (every role below curator) write without a curator's review.

    No row: the defaults below. memories.trust applies it to every write; a write outside it is
    stored as a draft, or with its importance capped, and its answer says so.
    """

    organization = models.OneToOneField(
        Organization, primary_key=True, on_delete=models.CASCADE, related_name="write_policy"
    )
    agent_active_types = ArrayField(
        models.CharField(max_length=32, choices=MemoryType.choices),
        default=default_agent_active_types,
        blank=True,
        help_text="Memory types an agent may make active without review; any other type is stored as a draft.",
    )
    agent_max_importance = models.PositiveSmallIntegerField(
        default=DEFAULT_AGENT_MAX_IMPORTANCE,
        help_text="The highest importance an agent may set; a higher one is stored as this, for a curator to raise.",
    )
    pin_requires_curator = models.BooleanField(
        default=True, help_text="An agent's pin (tag 'pinned' or metadata pinned) waits as a draft for a curator."
    )
    credentials = models.CharField(
        max_length=8,
        choices=CredentialHandling.choices,
        default=CredentialHandling.REFUSE,
        help_text="What happens to a write holding a credential (a key, a token, a password).",
    )
    updated_at = models.DateTimeField(default=timezone.now, editable=False)
    updated_by = models.CharField(max_length=200, blank=True, editable=False)

    class Meta:
        verbose_name = "write policy"
        verbose_name_plural = "write policies"
        constraints = [
            models.CheckConstraint(
                condition=Q(agent_max_importance__gte=IMPORTANCE_MIN) & Q(agent_max_importance__lte=IMPORTANCE_MAX),
                name="write_policy_importance_range",
            ),
        ]

    def __str__(self) -> str:
        return f"write policy of {self.organization_id}"


class RecallBundle(models.Model):
    """A context bundle kept under the caller's idempotency key, so a retry gets the same text."""

    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="+", db_index=False)
    actor = models.CharField(max_length=200)
    key = models.CharField(max_length=200)
    bundle = models.TextField()
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["organization", "actor", "key"], name="recall_bundle_unique_key"),
        ]

    def __str__(self) -> str:
        return f"{self.organization_id}/{self.actor}/{self.key}"
