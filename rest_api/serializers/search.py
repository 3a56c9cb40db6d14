"""Request and response shapes of searching and listing memories (POST /api/v1/memories/search/,
GET /api/v1/memories/): kept apart from the memory's own shapes, which were outgrowing one module."""

from __future__ import annotations

from django.conf import settings
from rest_framework import serializers

from memories import validation
from memories.models import MemoryType, ScopeType, Status
from memories.search import MAX_QUERY_CHARS, MAX_RESULTS, Fusion, SearchMode
from rest_api.serializers.base import StrictSerializer, min_score_field
from rest_api.serializers.memories import Importance, MemorySerializer, TagsField


class SearchHitSerializer(MemorySerializer):
    relevance = serializers.FloatField(
        allow_null=True,
        help_text="What the results are ordered by: the score, times any importance or recency boost asked for; "
        "null without a query.",
    )
    similarity = serializers.FloatField(allow_null=True, help_text="Cosine similarity to the query, when scored.")
    score = serializers.FloatField(
        allow_null=True,
        min_value=0,
        max_value=1,
        help_text="The estimated probability that this memory is relevant to the query (calibrated; see the "
        "README's search section); null without a query.",
    )


class MemoryPageSerializer(serializers.Serializer):
    results = MemorySerializer(many=True)
    next_cursor = serializers.CharField(
        allow_null=True, help_text="Pass as `cursor` for the next page; null at the end."
    )


class BelowFloorSerializer(serializers.Serializer):
    count = serializers.IntegerField(min_value=1, help_text="Candidates the search scored, all below `min_score`.")
    best_score = serializers.FloatField(min_value=0, max_value=1, help_text="The best of their scores.")


class SearchPageSerializer(serializers.Serializer):
    results = SearchHitSerializer(many=True)
    next_cursor = serializers.CharField(allow_null=True)
    mode = serializers.ChoiceField([m.value for m in SearchMode])
    warning = serializers.CharField(allow_null=True, help_text="Set when search ran degraded (keywords only).")
    below_floor = BelowFloorSerializer(
        required=False,
        help_text="Only on an empty first page of a search with a query, when candidates scored below `min_score`: "
        "something weak matched, where its absence means nothing did. Search again with `min_score` 0 to see them, "
        "or with other words.",
    )


VALID_AT_HELP = "What was valid at this moment (valid_from <= it < valid_until); default now."
INCLUDE_EXPIRED_HELP = "Also memories outside their validity window (not with valid_at)."
MENTIONS_HELP = (
    "Memories that mention this name: the entity known by it under any of its names or aliases, or the name or "
    "identifier as written."
)


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
    valid_at = serializers.DateTimeField(required=False, help_text=VALID_AT_HELP)
    include_expired = serializers.BooleanField(required=False, help_text=INCLUDE_EXPIRED_HELP)
    mentions = serializers.CharField(required=False, max_length=200, help_text=MENTIONS_HELP)


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
    min_score = min_score_field(settings.SEARCH_MIN_SCORE, "results", note=" No effect without a query.")


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
    valid_at = serializers.DateTimeField(required=False, help_text=VALID_AT_HELP)
    include_expired = serializers.BooleanField(required=False, default=False, help_text=INCLUDE_EXPIRED_HELP)
    mentions = serializers.CharField(required=False, max_length=200, help_text=MENTIONS_HELP)
    limit = serializers.IntegerField(required=False, min_value=1, max_value=MAX_RESULTS, default=50)
    cursor = serializers.CharField(required=False)
