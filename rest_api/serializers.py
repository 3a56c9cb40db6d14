"""Request and response shapes of the REST API.

Request serializers check what the OpenAPI schema promises (types, required fields, documented
ranges) and answer 400; the services then apply the domain's rules (422, 403, 404, 409). Response
serializers are the documented representation: fields are always present, null when unset.
"""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from django.http import QueryDict
from rest_framework import serializers

from knowledge.models import RelationType
from memories import validation
from memories.models import IMPORTANCE_MAX, IMPORTANCE_MIN, MemoryType, ScopeType, Status
from memories.public import MEMORY_FIELDS
from memories.search import MAX_QUERY_CHARS, MAX_RESULTS, Fusion, SearchMode
from organizations.models import Role, slug_validator


def _json_type_error(field: serializers.Field, value: Any) -> str | None:
    """What is wrong with the JSON type of ``value`` for ``field``, if anything.

    DRF's fields coerce (0 becomes "0", false becomes 0.0, "5" becomes 5); a JSON body must carry the
    type the schema documents, so a client bug is a 400 rather than a silently different value.
    """
    if value is None:
        return None  # allow_null decides
    expected: str | None = None
    if isinstance(field, serializers.BooleanField):
        expected = None if isinstance(value, bool) else "true or false"
    elif isinstance(field, serializers.IntegerField):
        expected = None if isinstance(value, int) and not isinstance(value, bool) else "an integer"
    elif isinstance(field, serializers.FloatField):
        expected = None if isinstance(value, int | float) and not isinstance(value, bool) else "a number"
    elif isinstance(field, serializers.CharField | serializers.ChoiceField | serializers.UUIDField):
        expected = None if isinstance(value, str) else "a string"
        if expected is None:
            return _length_error(field, value)
    elif isinstance(field, serializers.DateTimeField):
        expected = None if isinstance(value, str) else "an ISO 8601 date-time string"
    elif isinstance(field, serializers.ListField):
        if not isinstance(value, list):
            return "must be a list"
        for item in value:
            inner = _json_type_error(field.child, item)
            if inner is not None:
                return f"items: {inner}"
    elif isinstance(field, serializers.DictField | serializers.JSONField) and validation.contains_nul(value):
        # CharFields refuse NUL already; PostgreSQL cannot store it in jsonb either, nor compare with it.
        return "must not contain NUL characters (\\u0000) in keys or values"
    return None if expected is None else f"must be {expected}, not {json.dumps(value)[:50]}"


def _length_error(field: serializers.Field, value: str) -> str | None:
    """The documented maxLength counts the string as sent.

    DRF trims surrounding whitespace before it checks max_length, so without this a value one space
    longer than the schema allows would be accepted.
    """
    limit = getattr(field, "max_length", None)
    if isinstance(field, serializers.CharField) and limit is not None and len(value) > limit:
        return f"must be at most {limit} characters, not {len(value)}"
    return None


class StrictSerializer(serializers.Serializer):
    """Refuses fields it does not know, so a typo is an error rather than silently ignored."""

    # (Not in the docstring, which the schema shows for every request body.) A JSON body must use the
    # documented types (no "5" for 5), and a query parameter that is present must have a value
    # (`?limit=` is an error, not the default).
    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError(
                    {name: [f"unknown field; known fields: {', '.join(self.fields)}"] for name in unknown}
                )
            errors: dict[str, list[str]] = {}
            for name, field in self.fields.items():
                if name not in data:
                    continue
                if isinstance(data, QueryDict):
                    values = data.getlist(name)
                    single = field.child if isinstance(field, serializers.ListField) else field
                    if "" in values and not getattr(field, "allow_blank", False):
                        errors[name] = ["is empty; give a value or leave the parameter out"]
                    elif problems := [p for v in values if (p := _length_error(single, v)) is not None]:
                        errors[name] = problems[:1]
                else:
                    problem = _json_type_error(field, data[name])
                    if problem is not None:
                        errors[name] = [problem]
            if errors:
                raise serializers.ValidationError(errors)
        return super().to_internal_value(data)


# --- errors --------------------------------------------------------------------------------------


class ErrorDetailSerializer(serializers.Serializer):
    code = serializers.CharField(help_text="Stable machine-readable code, e.g. invalid, not_found, locked.")
    message = serializers.CharField(help_text="What went wrong and what to send instead.")
    details = serializers.JSONField(allow_null=True, help_text="Per-field messages or context; null if none.")


class ErrorSerializer(serializers.Serializer):
    error = ErrorDetailSerializer()


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
        max_length=100, required=False, allow_null=True, help_text="Repository slug; required with scope repository."
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
        required=False, help_text="Optional: update this memory if it exists (upsert), else create it with this id."
    )
    idempotency_key = serializers.CharField(
        max_length=validation.IDEMPOTENCY_KEY_MAX_CHARS,
        required=False,
        help_text="Makes retries safe, like the Idempotency-Key header (use one or the other).",
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


class InvalidateSerializer(StrictSerializer):
    reason = serializers.CharField(max_length=2000, help_text="Why the memory is no longer true.")
    superseded_by = serializers.UUIDField(required=False, allow_null=True, help_text="The memory that replaces it.")


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
    embedding_status = serializers.CharField(help_text="ready, pending (being embedded) or failed.")

    def get_fields(self) -> dict[str, serializers.Field]:
        # The memory's public fields, in memories.public.MEMORY_FIELDS order (a KeyError here
        # names a field added there that REST has no type for yet), then the rest as declared.
        fields = super().get_fields()
        public = {name: fields.pop(name) for name in MEMORY_FIELDS}
        return {**public, **fields}


class PossibleDuplicateSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    title = serializers.CharField()
    similarity = serializers.FloatField(help_text="Cosine similarity to the memory just written (0 to 1).")


class MemoryWrittenSerializer(MemorySerializer):
    possible_duplicates = PossibleDuplicateSerializer(
        many=True,
        help_text=(
            "Up to three memories of the same scope nearly alike (at least CONSOLIDATION_RELATED similar): "
            "update one of them instead of keeping two, or merge them (POST /memories/consolidate/)."
        ),
    )


class SearchHitSerializer(MemorySerializer):
    relevance = serializers.FloatField(allow_null=True, help_text="Fused score of this query; null without a query.")
    similarity = serializers.FloatField(allow_null=True, help_text="Cosine similarity to the query, when scored.")


class MemoryPageSerializer(serializers.Serializer):
    results = MemorySerializer(many=True)
    next_cursor = serializers.CharField(
        allow_null=True, help_text="Pass as `cursor` for the next page; null at the end."
    )


class SearchPageSerializer(serializers.Serializer):
    results = SearchHitSerializer(many=True)
    next_cursor = serializers.CharField(allow_null=True)
    mode = serializers.ChoiceField([m.value for m in SearchMode])
    warning = serializers.CharField(allow_null=True, help_text="Set when search ran degraded (keywords only).")


class FiltersSerializer(StrictSerializer):
    repository = serializers.CharField(required=False, help_text="Also returns organization and system memories.")
    memory_type = serializers.ListField(child=serializers.ChoiceField(MemoryType.choices), required=False)
    status = serializers.ListField(
        child=serializers.ChoiceField(Status.choices),
        required=False,
        help_text="Deprecated memories are left out unless asked for here.",
    )
    scope_type = serializers.ChoiceField(ScopeType.choices, required=False)
    tags = TagsField(required=False, help_text="All must be present.")
    metadata = serializers.DictField(required=False, help_text="All given key/values must match.")
    min_importance = serializers.IntegerField(required=False, **Importance)
    include_deleted = serializers.BooleanField(required=False)


class SearchSerializer(StrictSerializer):
    query = serializers.CharField(
        required=False, allow_blank=True, max_length=MAX_QUERY_CHARS, help_text="Words; empty browses by importance."
    )
    mode = serializers.ChoiceField([m.value for m in SearchMode], required=False, help_text="hybrid (default).")
    filters = FiltersSerializer(required=False)
    limit = serializers.IntegerField(required=False, min_value=1, max_value=MAX_RESULTS, help_text="Default 20.")
    cursor = serializers.CharField(required=False, allow_null=True, help_text="next_cursor of the previous page.")
    vector_weight = serializers.FloatField(required=False, min_value=0, max_value=100)
    keyword_weight = serializers.FloatField(required=False, min_value=0, max_value=100)
    importance_boost = serializers.FloatField(required=False, min_value=0, max_value=100)
    recency_boost = serializers.FloatField(required=False, min_value=0, max_value=100)
    fusion = serializers.ChoiceField([f.value for f in Fusion], required=False)


class ListQuerySerializer(StrictSerializer):
    """Query parameters of GET /memories/: the search filters, flat; lists repeat the parameter."""

    repository = serializers.CharField(required=False)
    memory_type = serializers.ListField(child=serializers.ChoiceField(MemoryType.choices), required=False)
    status = serializers.ListField(child=serializers.ChoiceField(Status.choices), required=False)
    scope_type = serializers.ChoiceField(ScopeType.choices, required=False)
    tag = serializers.ListField(
        child=serializers.CharField(max_length=validation.TAG_MAX_CHARS), required=False, help_text="Repeat for all."
    )
    min_importance = serializers.IntegerField(required=False, **Importance)
    include_deleted = serializers.BooleanField(required=False, default=False)
    limit = serializers.IntegerField(required=False, min_value=1, max_value=MAX_RESULTS, default=50)
    cursor = serializers.CharField(required=False)


class BatchSerializer(StrictSerializer):
    memories = serializers.ListField(
        child=serializers.DictField(),
        min_length=1,
        max_length=settings.MEMORY_BATCH_MAX_ENTRIES,
        help_text="Memory objects as for POST /memories/ (each may carry id and idempotency_key).",
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


# --- knowledge -----------------------------------------------------------------------------------


class LinkCreateSerializer(StrictSerializer):
    source_id = serializers.UUIDField()
    target_id = serializers.UUIDField()
    relation_type = serializers.ChoiceField(RelationType.choices, required=False, help_text="related (default).")


class LinkSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    source_id = serializers.UUIDField()
    target_id = serializers.UUIDField()
    relation_type = serializers.ChoiceField(RelationType.choices)
    created_at = serializers.DateTimeField()


class GraphNodeSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    title = serializers.CharField()
    scope_type = serializers.ChoiceField(ScopeType.choices)
    memory_type = serializers.ChoiceField(MemoryType.choices)
    status = serializers.ChoiceField(Status.choices)
    importance = serializers.IntegerField()
    hops = serializers.IntegerField(min_value=0)


class GraphEdgeSerializer(serializers.Serializer):
    source = serializers.UUIDField()
    target = serializers.UUIDField()
    relation_type = serializers.ChoiceField(RelationType.choices)


class GraphSerializer(serializers.Serializer):
    nodes = GraphNodeSerializer(many=True)
    edges = GraphEdgeSerializer(many=True)
    truncated = serializers.BooleanField(help_text="True when the node cap cut the walk short.")


class TripleAssertSerializer(StrictSerializer):
    subject = serializers.CharField(max_length=200)
    predicate = serializers.CharField(max_length=100)
    object = serializers.CharField(max_length=200)
    confidence = serializers.FloatField(required=False, min_value=0, max_value=1, help_text="Default 1.")
    provenance = serializers.CharField(required=False, allow_blank=True, help_text="Where this comes from.")
    valid_from = serializers.DateTimeField(required=False, help_text="When it became true (default now).")
    repository = serializers.CharField(required=False, max_length=100)
    memory_id = serializers.UUIDField(required=False, help_text="The memory this fact was learned from.")


class TripleQuerySerializer(StrictSerializer):
    subject = serializers.CharField(max_length=200, help_text="Entity name or alias.")
    predicate = serializers.CharField(required=False, max_length=100)
    object = serializers.CharField(required=False, max_length=200)
    as_of = serializers.DateTimeField(required=False, help_text="Facts true at this time (default now).")
    history = serializers.BooleanField(required=False, default=False, help_text="Every record, oldest first.")


class TripleSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    subject = serializers.CharField(source="subject.name")
    predicate = serializers.CharField()
    object = serializers.CharField(source="object.name")
    valid_from = serializers.DateTimeField()
    valid_to = serializers.DateTimeField(allow_null=True)
    recorded_at = serializers.DateTimeField()
    expired_at = serializers.DateTimeField(allow_null=True)
    confidence = serializers.FloatField()
    provenance = serializers.DictField()
    invalidation_reason = serializers.CharField(allow_blank=True)
    memory_id = serializers.UUIDField(allow_null=True)


class TripleListSerializer(serializers.Serializer):
    subject = serializers.CharField(help_text="The entity's name (as asked when it is unknown).")
    results = TripleSerializer(many=True)


class TripleInvalidateSerializer(StrictSerializer):
    reason = serializers.CharField(max_length=2000)
    successor_id = serializers.IntegerField(required=False, allow_null=True, min_value=1)


class EntitySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    entity_type = serializers.CharField(allow_blank=True)
    description = serializers.CharField(allow_blank=True)
    aliases = serializers.SerializerMethodField()
    created_at = serializers.DateTimeField()

    def get_aliases(self, entity: Any) -> list[str]:
        return [alias.alias for alias in entity.aliases.all()]


class EntityCreateSerializer(StrictSerializer):
    name = serializers.CharField(max_length=200)
    entity_type = serializers.CharField(max_length=64, required=False, allow_blank=True)


class AliasSerializer(StrictSerializer):
    alias = serializers.CharField(max_length=200)


class RelatedEntitySerializer(serializers.Serializer):
    name = serializers.CharField()
    entity_type = serializers.CharField(allow_blank=True)
    hops = serializers.IntegerField(min_value=1)


class RelatedSerializer(serializers.Serializer):
    entity = serializers.CharField()
    related = RelatedEntitySerializer(many=True)
    facts = TripleSerializer(many=True)
    truncated = serializers.BooleanField()


# --- organization ----------------------------------------------------------------------------------


class RepositorySerializer(serializers.Serializer):
    slug = serializers.SlugField()
    name = serializers.CharField(allow_blank=True)
    created_at = serializers.DateTimeField()


class RepositoryCreateSerializer(StrictSerializer):
    # The model's rule (lowercase, 1-64 characters), so the schema documents what is accepted.
    slug = serializers.RegexField(
        slug_validator.regex, max_length=64, help_text="1-64 lowercase letters, digits and hyphens."
    )
    name = serializers.CharField(max_length=200, required=False, allow_blank=True)


class TokenSerializer(serializers.Serializer):
    prefix = serializers.CharField(help_text="Public part of the token; revoke by it.")
    name = serializers.CharField(allow_blank=True)
    role = serializers.ChoiceField(Role.choices)
    user = serializers.CharField(source="user.username", allow_null=True)
    created_at = serializers.DateTimeField()
    expires_at = serializers.DateTimeField(allow_null=True)
    revoked_at = serializers.DateTimeField(allow_null=True)
    last_used_at = serializers.DateTimeField(allow_null=True)


class IssuedTokenSerializer(TokenSerializer):
    token = serializers.CharField(help_text="The secret token. Shown once: store it now.")


class TokenCreateSerializer(StrictSerializer):
    role = serializers.ChoiceField(Role.choices)
    name = serializers.CharField(max_length=200, required=False, allow_blank=True)
    user = serializers.CharField(required=False, max_length=150, help_text="Username of a member it acts for.")
    expires_at = serializers.DateTimeField(required=False, help_text="Must be in the future.")


class TextSerializer(serializers.Serializer):
    key = serializers.CharField()
    label = serializers.CharField()
    text = serializers.CharField()
    overridden = serializers.BooleanField(help_text="True when the organization replaced the shipped default.")
    updated_at = serializers.DateTimeField(allow_null=True)


class TextUpdateSerializer(StrictSerializer):
    text = serializers.CharField(max_length=100_000, help_text="The organization's wording (Markdown).")


class GraphQuerySerializer(StrictSerializer):
    max_hops = serializers.IntegerField(required=False, default=2, min_value=1, max_value=5)
    direction = serializers.ChoiceField(["outgoing", "incoming", "both"], required=False, default="both")
    relation_type = serializers.ListField(
        child=serializers.ChoiceField(RelationType.choices), required=False, help_text="Only follow these; repeat."
    )


class RelatedQuerySerializer(StrictSerializer):
    depth = serializers.IntegerField(required=False, default=1, min_value=1, max_value=4)
    direction = serializers.ChoiceField(["outgoing", "incoming", "both"], required=False, default="both")


class EntityListQuerySerializer(StrictSerializer):
    name = serializers.CharField(required=False, allow_blank=True, max_length=200, help_text="Part of a name or alias.")
    limit = serializers.IntegerField(required=False, default=50, min_value=1, max_value=500)
    cursor = serializers.IntegerField(required=False, default=0, min_value=0, help_text="next_cursor of the last page.")


class EntityPageSerializer(serializers.Serializer):
    results = EntitySerializer(many=True)
    next_cursor = serializers.IntegerField(allow_null=True)


class StatusSerializer(serializers.Serializer):
    status = serializers.ChoiceField(["ok", "degraded"])
    organization = serializers.CharField()
    role = serializers.ChoiceField(Role.choices)
    principal = serializers.CharField()
    database = serializers.DictField()
    embedding = serializers.DictField()
    memories = serializers.DictField()
    lifecycle = serializers.DictField(help_text="Open proposals by kind, and the last run of each lifecycle worker.")
