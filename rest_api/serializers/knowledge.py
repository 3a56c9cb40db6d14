"""Request and response shapes of links, the graph, facts and entities."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from knowledge.models import MentionKind, RelationType
from memories.models import MemoryType, ScopeType, Status
from rest_api.serializers.base import StrictSerializer
from rest_api.serializers.memories import AuthorSerializer, ReviewSerializer

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
    history = serializers.BooleanField(
        required=False, default=False, help_text="The timeline: each value once with the period it held, oldest first."
    )
    records = serializers.BooleanField(
        required=False, default=False, help_text="Every stored record, replaced and corrected ones too (an audit)."
    )


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


class TripleAssertedSerializer(TripleSerializer):
    ended = TripleSerializer(
        many=True,
        help_text="The facts this assertion replaced (same subject and predicate), with the period each held.",
    )


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


class MentioningMemorySerializer(serializers.Serializer):
    id = serializers.UUIDField()
    title = serializers.CharField()
    memory_type = serializers.ChoiceField(MemoryType.choices)
    status = serializers.ChoiceField(Status.choices)
    importance = serializers.IntegerField()
    author = AuthorSerializer(source="*", help_text="Who wrote the memory's text as it reads now.")
    review = ReviewSerializer(source="*", help_text="How far curators stand behind it.")


class MentionedWithSerializer(serializers.Serializer):
    name = serializers.CharField()
    memories = serializers.IntegerField(min_value=1, help_text="How many memories mention both.")


class RelatedSerializer(serializers.Serializer):
    entity = serializers.CharField()
    related = RelatedEntitySerializer(many=True)
    facts = TripleSerializer(many=True)
    truncated = serializers.BooleanField()
    memories = MentioningMemorySerializer(many=True, help_text="Memories that mention it, most important first.")
    memories_total = serializers.IntegerField(min_value=0)
    mentioned_with = MentionedWithSerializer(many=True, help_text="Names those memories mention most beside it.")


class MentionSerializer(serializers.Serializer):
    name = serializers.CharField(help_text="As the memory first writes it.")
    kind = serializers.ChoiceField(MentionKind.choices)
    entity = serializers.CharField(allow_null=True, help_text="The entity it names, if one is known by it.")


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
