"""Knowledge: typed links between memories."""

from __future__ import annotations

from django.db import models
from django.db.models import Q
from django.utils import timezone

from memories.models import Memory
from organizations.models import ApiToken, Organization, User


class RelationType(models.TextChoices):
    RELATED = "related", "Related"
    DEPENDS_ON = "depends_on", "Depends on"
    SUPERSEDES = "supersedes", "Supersedes"
    CONTRADICTS = "contradicts", "Contradicts"
    DERIVED_FROM = "derived_from", "Derived from"
    PART_OF = "part_of", "Part of"


class MemoryLink(models.Model):
    """A typed, directed relation between two memories of one organization."""

    organization = models.ForeignKey(
        Organization, on_delete=models.CASCADE, related_name="memory_links", db_index=False
    )
    source = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="outgoing_links", db_constraint=False)
    target = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="incoming_links", db_constraint=False)
    relation_type = models.CharField(max_length=32, choices=RelationType.choices, default=RelationType.RELATED)
    created_at = models.DateTimeField(default=timezone.now)
    created_by = models.ForeignKey(User, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_by_token = models.ForeignKey(ApiToken, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    removed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["source", "target", "relation_type", "organization"],
                condition=Q(removed_at__isnull=True),
                name="memory_link_unique_active",
            ),
            models.CheckConstraint(condition=~Q(source=models.F("target")), name="memory_link_not_self"),
        ]
        indexes = [models.Index(fields=["organization", "target"], name="memory_link_target_idx")]

    def __str__(self) -> str:
        return f"{self.source_id} -{self.relation_type}-> {self.target_id}"


class Entity(models.Model):
    """Something facts are about: a person, service, team, customer… Named once per organization."""

    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="entities")
    name = models.CharField(max_length=200)
    entity_type = models.CharField(max_length=64, blank=True)
    description = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["name"]
        verbose_name_plural = "entities"

    def __str__(self) -> str:
        return self.name


class EntityAlias(models.Model):
    """A name an entity is known by; matched case-insensitively. Every entity has its own name as one."""

    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="+", db_index=False)
    entity = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="aliases", db_constraint=False)
    alias = models.CharField(max_length=200)
    normalized = models.CharField(max_length=200, editable=False)

    class Meta:
        verbose_name_plural = "entity aliases"
        constraints = [
            models.UniqueConstraint(fields=["organization", "normalized"], name="entity_alias_unique_per_org"),
        ]

    def __str__(self) -> str:
        return self.alias


class Predicate(models.Model):
    """Declares a predicate multi-valued: asserting it adds a fact instead of replacing the current one."""

    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="predicates", db_index=False)
    name = models.CharField(max_length=100)
    multi_valued = models.BooleanField(default=False)
    description = models.TextField(blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["organization", "name"], name="predicate_unique_per_org")]

    def __str__(self) -> str:
        return self.name


class Triple(models.Model):
    """A temporal fact (subject, predicate, object) on two time axes.

    Valid time (``valid_from`` ≤ t < ``valid_to``) is when the fact held in the world; record time
    (``recorded_at`` ≤ t < ``expired_at``) is when the platform believed this row. Rows are never
    changed in substance: a correction expires the row and records its successor.
    """

    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="triples", db_index=False)
    subject = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="subject_triples", db_constraint=False)
    predicate = models.CharField(max_length=100)
    object = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="object_triples", db_constraint=False)
    confidence = models.FloatField(default=1.0)
    provenance = models.JSONField(default=dict, blank=True)
    repository = models.ForeignKey(
        "organizations.Repository", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    memory = models.ForeignKey(
        Memory,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="triples",
        help_text="The memory this fact was learned from, if any.",
        db_constraint=False,
    )
    valid_from = models.DateTimeField()
    valid_to = models.DateTimeField(null=True, blank=True)
    recorded_at = models.DateTimeField(default=timezone.now)
    expired_at = models.DateTimeField(null=True, blank=True)
    invalidation_reason = models.TextField(blank=True)
    superseded_by = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+", db_constraint=False
    )
    created_by = models.ForeignKey(User, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_by_token = models.ForeignKey(ApiToken, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")

    class Meta:
        ordering = ["valid_from", "recorded_at"]
        indexes = [
            models.Index(fields=["organization", "subject", "predicate"], name="triple_subject_predicate_idx"),
            models.Index(fields=["organization", "object"], name="triple_object_idx"),
        ]
        constraints = [
            models.CheckConstraint(
                condition=Q(valid_to__isnull=True) | Q(valid_to__gt=models.F("valid_from")),
                name="triple_valid_interval",
            ),
            models.CheckConstraint(
                condition=Q(confidence__gte=0) & Q(confidence__lte=1), name="triple_confidence_range"
            ),
        ]

    # Set by knowledge.services.triple_assert on the fact it returns, never stored: the facts the
    # assertion ended (their bounded records), so its answer can say what it replaced.
    ended: tuple[Triple, ...] = ()

    def __str__(self) -> str:
        return f"({self.subject_id}, {self.predicate}, {self.object_id})"


class MentionKind(models.TextChoices):
    ALIAS = "alias", "An entity's name or alias"
    IDENTIFIER = "identifier", "An identifier"
    NAME = "name", "A name"


class Mention(models.Model):
    """A name a memory's text mentions (knowledge.names), kept by its key: the memory-entity graph.

    A memory mentions an entity when it mentions one of the entity's names or aliases, compared by
    key, so an alias given later links every memory that already says it. Derived from the text:
    written with it, in the write's transaction (knowledge.mentions)."""

    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="+", db_index=False)
    memory = models.ForeignKey(
        Memory, on_delete=models.CASCADE, related_name="mentions", db_index=False, db_constraint=False
    )
    key = models.CharField(max_length=200, help_text="The name's words, case folded (memories.search.words.name_key).")
    written = models.CharField(max_length=200, help_text="The name as the memory first writes it.")
    kind = models.CharField(max_length=16, choices=MentionKind.choices)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["memory", "key", "organization"], name="mention_unique_per_memory")
        ]
        indexes = [models.Index(fields=["organization", "key"], name="mention_org_key_idx")]

    def __str__(self) -> str:
        return self.written
