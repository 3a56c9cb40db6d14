"""/api/v1/memories/{id}/…: one memory — read, change, delete, curate, invalidate, its versions, links and graph."""

from __future__ import annotations

from collections.abc import Callable

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from knowledge.mentions import memory_mentions
from knowledge.selectors import memory_graph, memory_links
from memories import decisions, selectors, services
from memories.models import Memory
from memories.public import written_values
from rest_api import serializers as s
from rest_api.views.base import ApiView
from rest_api.views.memories import TAG, MemoryIdParameter, memory_data


class MemoryDetailView(ApiView):
    @extend_schema(
        tags=TAG,
        operation_id="memories_retrieve",
        summary="Get a memory",
        parameters=[
            MemoryIdParameter,
            OpenApiParameter("include_deleted", OpenApiTypes.BOOL, description="Also find a soft-deleted memory."),
        ],
        responses={200: s.MemorySerializer},
    )
    def get(self, request: Request, memory_id: str) -> Response:
        try:
            include_deleted = serializers.BooleanField().to_internal_value(
                request.query_params.get("include_deleted", "false")
            )
        except serializers.ValidationError as error:  # name the parameter, as every other 400 does
            raise serializers.ValidationError({"include_deleted": error.detail}) from error
        return Response(memory_data(selectors.memory_get(self.principal, memory_id, include_deleted=include_deleted)))

    @extend_schema(
        tags=TAG,
        operation_id="memories_partial_update",
        summary="Change a memory",
        description=(
            "Only the fields sent change. Locked memories can only be changed by curators; a superseded memory "
            "is not changed at all (409 names its survivor). Below the curator role a change to a verified memory "
            "makes it unreviewed again, and `notes` says what the write policy did."
        ),
        parameters=[MemoryIdParameter],
        request=s.MemoryUpdateSerializer,
        responses={200: s.MemoryUpdatedSerializer},
        examples=[OpenApiExample("Raise importance", value={"importance": 9, "reason": "caused an incident"})],
    )
    def patch(self, request: Request, memory_id: str) -> Response:
        data = self.body(s.MemoryUpdateSerializer)
        reason = data.pop("reason", "")
        memory = services.memory_update(principal=self.principal, memory_id=memory_id, data=data, reason=reason)
        return Response({**memory_data(memory), "notes": written_values(memory)["notes"]})

    @extend_schema(
        tags=TAG,
        operation_id="memories_destroy",
        summary="Soft-delete a memory",
        description="It leaves lists and search but keeps its history; curators can restore it.",
        parameters=[MemoryIdParameter],
        responses={204: None},
    )
    def delete(self, request: Request, memory_id: str) -> Response:
        decisions.memory_delete(principal=self.principal, memory_id=memory_id)
        return Response(status=status.HTTP_204_NO_CONTENT)


def _action_view(name: str, action: Callable[..., Memory], summary: str, description: str) -> type[ApiView]:
    @extend_schema(
        tags=TAG,
        operation_id=f"memories_{name}",
        summary=summary,
        description=description,
        parameters=[MemoryIdParameter],
        request=s.ReasonSerializer,
        responses={200: s.MemorySerializer},
    )
    def post(self: ApiView, request: Request, memory_id: str) -> Response:
        data = self.body(s.ReasonSerializer)
        memory = action(principal=self.principal, memory_id=memory_id, reason=data.get("reason", ""))
        return Response(memory_data(memory))

    return type(f"Memory{name.title()}View", (ApiView,), {"post": post, "__doc__": summary})


MemoryVerifyView = _action_view(
    "verify", decisions.memory_verify, "Verify a memory", "Mark it checked by a curator (curator role)."
)
MemoryLockView = _action_view(
    "lock", decisions.memory_lock, "Lock a memory", "Only curators can change it afterwards (curator role)."
)
MemoryUnlockView = _action_view(
    "unlock", decisions.memory_unlock, "Unlock a memory", "It becomes verified again (curator role)."
)
MemoryDeprecateView = _action_view(
    "deprecate", decisions.memory_deprecate, "Deprecate a memory", "It leaves default search (curator role)."
)
MemoryRestoreView = _action_view(
    "restore", decisions.memory_restore, "Restore a deleted memory", "Undo a soft delete (curator role)."
)
MemoryReactivateView = _action_view(
    "reactivate",
    decisions.memory_reactivate,
    "Reactivate a deprecated memory",
    "It goes back to the status it had before it was deprecated (verified if none), is no longer superseded "
    "and no longer ended (curator role).",
)


class MemoryRevertView(ApiView):
    @extend_schema(
        tags=TAG,
        operation_id="memories_revert",
        summary="Revert a memory to an earlier version",
        description=(
            "The memory reads as it did at that version again (text, type, scope, status, tags, importance, "
            "metadata, validity, supersession), written as a new version: history is never rewritten, and the "
            "revert can itself be reverted. Nothing differs: no new version (curator role)."
        ),
        parameters=[MemoryIdParameter],
        request=s.RevertSerializer,
        responses={200: s.MemorySerializer},
        examples=[OpenApiExample("Back to version 2", value={"version": 2, "reason": "the edit lost the example"})],
    )
    def post(self, request: Request, memory_id: str) -> Response:
        data = self.body(s.RevertSerializer)
        memory = decisions.memory_revert(
            principal=self.principal, memory_id=memory_id, version=data["version"], reason=data.get("reason", "")
        )
        return Response(memory_data(memory))


class MemoryInvalidateView(ApiView):
    @extend_schema(
        tags=TAG,
        operation_id="memories_invalidate",
        summary="Invalidate a memory",
        description="It stopped being true: it ends now, is deprecated, and may name the memory that replaces it.",
        parameters=[MemoryIdParameter],
        request=s.InvalidateSerializer,
        responses={200: s.MemorySerializer},
    )
    def post(self, request: Request, memory_id: str) -> Response:
        data = self.body(s.InvalidateSerializer)
        memory = decisions.memory_invalidate(
            principal=self.principal,
            memory_id=memory_id,
            reason=data["reason"],
            superseded_by=data.get("superseded_by"),
        )
        return Response(memory_data(memory))


class MemoryVersionsView(ApiView):
    @extend_schema(
        tags=TAG,
        operation_id="memories_versions",
        summary="Version history",
        description="Every change, newest first, each with a full snapshot, who made it and why.",
        parameters=[MemoryIdParameter],
        responses={200: s.VersionSerializer(many=True)},
    )
    def get(self, request: Request, memory_id: str) -> Response:
        versions = selectors.memory_versions(self.principal, memory_id)
        return Response(s.VersionSerializer(versions, many=True).data)


class MemoryLinksView(ApiView):
    @extend_schema(
        tags=TAG,
        operation_id="memories_links",
        summary="Links of a memory",
        description="Active links in both directions whose other end you can see.",
        parameters=[MemoryIdParameter],
        responses={200: s.LinkSerializer(many=True)},
    )
    def get(self, request: Request, memory_id: str) -> Response:
        return Response(s.LinkSerializer(memory_links(self.principal, memory_id), many=True).data)


class MemoryMentionsView(ApiView):
    @extend_schema(
        tags=TAG,
        operation_id="memories_mentions",
        summary="Names a memory mentions",
        description=(
            "The names the memory's text mentions (entities' names and aliases, names, identifiers), in the order "
            "it first mentions them, each with the entity it names when one is known by it."
        ),
        parameters=[MemoryIdParameter],
        responses={200: s.MentionSerializer(many=True)},
    )
    def get(self, request: Request, memory_id: str) -> Response:
        return Response(s.MentionSerializer(memory_mentions(self.principal, memory_id), many=True).data)


class MemoryGraphView(ApiView):
    @extend_schema(
        tags=TAG,
        operation_id="memories_graph",
        summary="Linked memories around one",
        description="Memories reachable through links, up to max_hops away; at most 200 nodes.",
        parameters=[MemoryIdParameter, s.GraphQuerySerializer],
        responses={200: s.GraphSerializer},
    )
    def get(self, request: Request, memory_id: str) -> Response:
        query = self.query(s.GraphQuerySerializer)
        graph = memory_graph(
            self.principal,
            seed_ids=[memory_id],
            max_hops=query["max_hops"],
            direction=query["direction"],
            relation_types=query.get("relation_type"),
        )
        nodes = [
            {
                "id": node.pk,
                "title": node.title,
                "scope_type": node.scope_type,
                "memory_type": node.memory_type,
                "status": node.status,
                "importance": node.importance,
                "hops": graph.depth[node.pk],
            }
            for node in graph.nodes
        ]
        return Response(s.GraphSerializer({"nodes": nodes, "edges": graph.edges, "truncated": graph.truncated}).data)
