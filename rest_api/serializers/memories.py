"""Request and response shapes of /api/v1/memories/."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.conf import settings
from django.utils import timezone
from rest_framework import serializers

from memories import validation
from memories.models import (
    IMPORTANCE_MAX,
    IMPORTANCE_MIN,
    AuthorKind,
    Memory,
    MemoryType,
    ReviewState,
    ScopeType,
    Status,
)
from memories.public import MEMORY_FIELDS, memory_values
from memories.trust import author_payload, review_payload
from rest_api.serializers.base import ErrorDetailSerializer, StrictSerializer

# --- memories ------------------------------------------------------------------------------------

Importance = {"min_value": IMPORTANCE_MIN, "max_value": IMPORTANCE_MAX}


class TagsField(serializers.ListField):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(
            child=serializers.CharField(max_length=validation.TAG_MAX_CHARS, allow_blank=False),
            max_length=validation.TAGS_MAX,
            **kwargs,
        )


class MemoryWriteFields(StrictSerializer):
    """Fields shared by create and update; update makes them all optional."""

    scope_type = serializers.ChoiceField(ScopeType.choices, help_text="Who the memory is for.")
    memory_type = serializers.ChoiceField(MemoryType.choices, help_text="What kind of knowledge this is.")
    current_content = serializers.CharField(
        max_length=validation.CONTENT_MAX_CHARS, trim_whitespace=True, help_text="The knowledge, one concept."
    )
    title = serializers.CharField(
        max_length=validation.TITLE_MAX_CHARS,
        required=False,
        allow_blank=True,
        help_text=f"One short sentence (at most {validation.TITLE_MAX_WORDS} words); derived if omitted.",
    )
    repository = serializers.CharField(
        max_length=100,
        required=False,
        allow_null=True,
        help_text="Slug of one of the organization's repositories; required with scope repository.",
    )
    status = serializers.ChoiceField(
        Status.choices, required=False, help_text="draft (default) or active; curators also verified and locked."
    )
    importance = serializers.IntegerField(required=False, help_text="1 (nice to know, default) to 10.", **Importance)
    metadata = serializers.DictField(
        required=False,
        help_text="At most 5 flat key/value pairs (text up to 200 characters, number, true/false or null).",
    )
    tags = TagsField(required=False, help_text="Lowercase labels.")
    valid_from = serializers.DateTimeField(required=False, allow_null=True, help_text="When it became true.")
    valid_until = serializers.DateTimeField(required=False, allow_null=True, help_text="When it stops being true.")
    source = serializers.DictField(required=False, help_text="Where it came from (document, ticket, conversation).")


class MemoryCreateSerializer(MemoryWriteFields):
    id = serializers.UUIDField(
        required=False,
        help_text=(
            "Optional: update this memory if it exists (upsert), else create it with this id, which must then "
            "be random (UUID version 4 or 7)."
        ),
    )
    idempotency_key = serializers.CharField(
        max_length=validation.IDEMPOTENCY_KEY_MAX_CHARS,
        required=False,
        help_text="Makes retries safe, like the Idempotency-Key header (use one or the other).",
    )
    create_repository = serializers.BooleanField(
        required=False,
        default=False,
        help_text=(
            "Create the named repository if the organization has none with that slug. Without it, an unknown "
            "repository is refused with the known ones listed."
        ),
    )


class MemoryUpdateSerializer(MemoryWriteFields):
    reason = serializers.CharField(required=False, allow_blank=True, help_text="Why it changed; kept in the history.")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for name, field in self.fields.items():
            field.required = False
            if name in ("current_content", "scope_type", "memory_type"):
                field.allow_null = False


class ReasonSerializer(StrictSerializer):
    reason = serializers.CharField(required=False, allow_blank=True, max_length=2000, help_text="Kept in the history.")


class RevertSerializer(StrictSerializer):
    version = serializers.IntegerField(min_value=1, help_text="The version to go back to (see the history).")
    reason = serializers.CharField(required=False, allow_blank=True, max_length=2000, help_text="Kept in the history.")


class InvalidateSerializer(StrictSerializer):
    reason = serializers.CharField(max_length=2000, help_text="Why the memory is no longer true.")
    superseded_by = serializers.UUIDField(required=False, allow_null=True, help_text="The memory that replaces it.")


class AuthorSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(
        AuthorKind.choices, help_text="agent (an API token), person (logged in) or system (the platform)."
    )
    name = serializers.CharField(allow_null=True, help_text="The token's name, or the person's username.")

    def to_representation(self, instance: Memory) -> dict[str, Any]:
        return author_payload(instance)


class ReviewSerializer(serializers.Serializer):
    state = serializers.ChoiceField(
        ReviewState.choices,
        help_text="locked or verified: a curator stands behind it; unreviewed: what an agent or person wrote.",
    )
    by = serializers.CharField(allow_null=True, help_text="Who verified or locked it.")
    at = serializers.DateTimeField(allow_null=True, help_text="When.")
    flags = serializers.ListField(
        child=serializers.CharField(),
        help_text="What a curator should look at before standing behind it: instructions (text that addresses "
        "the reading agent with orders), pin, rule, importance, credentials (redacted), reviewed_changed.",
    )

    def to_representation(self, instance: Memory) -> dict[str, Any]:
        review = review_payload(instance)
        review["at"] = self.fields["at"].to_representation(instance.reviewed_at) if review["at"] else None
        return review


class MemorySerializer(serializers.Serializer):
    id = serializers.UUIDField()
    organization = serializers.CharField(source="organization.slug")
    repository = serializers.CharField(source="repository.slug", allow_null=True)
    scope_type = serializers.ChoiceField(ScopeType.choices)
    memory_type = serializers.ChoiceField(MemoryType.choices)
    title = serializers.CharField()
    current_content = serializers.CharField()
    status = serializers.ChoiceField(Status.choices)
    importance = serializers.IntegerField(**Importance)
    metadata = serializers.DictField()
    tags = serializers.ListField(child=serializers.CharField())
    version = serializers.IntegerField(min_value=1)
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()
    valid_from = serializers.DateTimeField(allow_null=True)
    valid_until = serializers.DateTimeField(allow_null=True)
    superseded_by = serializers.UUIDField(source="superseded_by_id", allow_null=True)
    deleted_at = serializers.DateTimeField(allow_null=True)
    source = serializers.DictField()
    author = AuthorSerializer(source="*", help_text="Who wrote the memory's text as it reads now.")
    review = ReviewSerializer(
        source="*", help_text="How far curators stand behind it. Curated memories outrank unreviewed ones."
    )
    embedding_status = serializers.CharField(help_text="ready, pending (being embedded) or failed.")

    def get_fields(self) -> dict[str, serializers.Field]:
        # The memory's public fields, in memories.public.MEMORY_FIELDS order (a KeyError here
        # names a field added there that REST has no type for yet), then the rest as declared.
        fields = super().get_fields()
        public = {name: fields.pop(name) for name in MEMORY_FIELDS}
        return {**public, **fields}


def memory_representation(memory: Memory) -> dict[str, Any]:
    """What ``MemorySerializer(memory).data`` holds, built without DRF's field machinery.

    A serializer copies its fields and runs each one's to_representation: for a page of search
    results that cost more CPU than the rest of the REST layer. This gives the same values in the
    same order (times as DRF writes them: in the current time zone, UTC as ``Z``); the serializer
    stays the schema, and tests/rest_api/test_memory_representation.py holds the two equal.
    """
    zone = timezone.get_current_timezone()

    def moment(value: datetime | None) -> str | None:
        if not value:
            return None
        text = value.astimezone(zone).isoformat()
        return text[:-6] + "Z" if text.endswith("+00:00") else text

    data = memory_values(memory)
    for name in _MOMENTS:
        data[name] = moment(getattr(memory, name))
    data["review"]["at"] = moment(memory.reviewed_at) if data["review"]["at"] else None
    for name in ("metadata", "source"):
        value = data[name]
        data[name] = None if value is None else {str(key): item for key, item in value.items()}
    data["embedding_status"] = memory.embedding_status
    return data


_MOMENTS = ("created_at", "updated_at", "valid_from", "valid_until", "deleted_at")


class PossibleDuplicateSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    title = serializers.CharField()
    similarity = serializers.FloatField(help_text="Cosine similarity to the memory just written (0 to 1).")


class ConflictSerializer(PossibleDuplicateSerializer):
    status = serializers.ChoiceField(Status.choices, help_text="The status of the memory it contradicts.")
    differences = serializers.DictField(
        help_text="What differs: numbers, values (names) or negations, each as {first: [...], second: [...]} "
        "with first the memory just written."
    )


class WriteNoteSerializer(serializers.Serializer):
    code = serializers.CharField(
        help_text="status, importance, pin, rule, instructions, credentials, reviewed_changed: what the write "
        "policy did or flagged."
    )
    field = serializers.CharField(allow_null=True)
    message = serializers.CharField()


class MemoryUpdatedSerializer(MemorySerializer):
    notes = WriteNoteSerializer(
        many=True, help_text="What the organization's write policy did to this change; empty when stored as sent."
    )


class MemoryWrittenSerializer(MemorySerializer):
    possible_duplicates = PossibleDuplicateSerializer(
        many=True,
        help_text=(
            "Up to three memories of the same scope nearly alike (at least CONSOLIDATION_RELATED similar): "
            "update one of them instead of keeping two, or merge them (POST /memories/consolidate/)."
        ),
    )
    conflicts = ConflictSerializer(
        many=True,
        help_text="Up to three memories of the same scope that this one contradicts (a time, a number, a name or a "
        "negation differs). Each also became a contradiction proposal for the curators.",
    )
    notes = WriteNoteSerializer(
        many=True,
        help_text="What the organization's write policy did to this write (stored as a draft, importance capped, "
        "credentials redacted, flagged for review). Empty when the write was stored as sent.",
    )
    suggested_tags = serializers.ListField(
        child=serializers.CharField(),
        help_text="Up to five tags that memories mentioning the same names (entities, names, identifiers) wear and "
        "this one does not, the most worn first: add those that fit with PATCH. Empty for a batch's entries.",
    )


class BatchSerializer(StrictSerializer):
    memories = serializers.ListField(
        child=serializers.DictField(),
        min_length=1,
        max_length=settings.MEMORY_BATCH_MAX_ENTRIES,
        help_text="Memory objects as for POST /memories/ (each may carry id, idempotency_key and create_repository).",
    )


class BatchResultSerializer(serializers.Serializer):
    index = serializers.IntegerField(min_value=0)
    ok = serializers.BooleanField()
    memory = MemoryWrittenSerializer(allow_null=True)
    error = ErrorDetailSerializer(allow_null=True)


class BatchResponseSerializer(serializers.Serializer):
    created = serializers.IntegerField(help_text="Entries stored (created, updated or replayed).")
    failed = serializers.IntegerField()
    results = BatchResultSerializer(many=True)


class VersionSerializer(serializers.Serializer):
    version = serializers.IntegerField(min_value=1)
    change = serializers.CharField()
    changed_fields = serializers.ListField(child=serializers.CharField())
    reason = serializers.CharField(allow_blank=True)
    actor = serializers.CharField()
    created_at = serializers.DateTimeField()
    snapshot = serializers.DictField()
