"""/api/v1/memories/: list, create, search and batch writes (one memory by id: rest_api/views/memory.py)."""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from memories import services, validation
from memories.batch import memory_batch_create
from memories.models import Memory
from memories.public import written_values
from memories.search import SearchPage, SearchParams, memory_search
from memory_platform.exceptions import DomainError
from rest_api import serializers as s
from rest_api.views.base import ApiView

IDEMPOTENCY_HEADER = "Idempotency-Key"
IdempotencyKeyParameter = OpenApiParameter(
    IDEMPOTENCY_HEADER,
    OpenApiTypes.STR,
    OpenApiParameter.HEADER,
    description=(
        "Makes a retried create safe: the same key with the same content returns the memory created the first "
        "time (200); the same key with other content is a 409."
    ),
)
MemoryIdParameter = OpenApiParameter("memory_id", OpenApiTypes.UUID, OpenApiParameter.PATH)
TAG = ["memories"]


def memory_data(memory: Memory) -> dict[str, Any]:
    return s.memory_representation(memory)


def memories_data(memories: list[Memory]) -> list[dict[str, Any]]:
    return [s.memory_representation(memory) for memory in memories]


def page_data(page: SearchPage) -> dict[str, Any]:
    memories = memories_data([hit.memory for hit in page.hits])
    results = [
        {**data, "relevance": hit.relevance, "similarity": hit.vector_similarity, "score": hit.score}
        for data, hit in zip(memories, page.hits, strict=True)
    ]
    body: dict[str, Any] = {
        "results": results,
        "next_cursor": page.next_cursor,
        "mode": page.mode.value,
        "warning": page.degraded,
    }
    if page.below_floor is not None:  # only then: every other answer keeps its shape
        body["below_floor"] = {"count": page.below_floor.count, "best_score": page.below_floor.best_score}
    return body


def _header_key(request: Request, room: int = 0) -> str | None:
    """The Idempotency-Key header, checked like the body's idempotency_key (400 when unusable).

    ``room``: characters a batch appends (':<index>') that must still fit the key's limit.
    """
    header = request.headers.get(IDEMPOTENCY_HEADER)
    if header is None:
        return None
    limit = validation.IDEMPOTENCY_KEY_MAX_CHARS - room
    if not header.strip() or len(header) > limit:
        raise serializers.ValidationError(
            {IDEMPOTENCY_HEADER: [f"the {IDEMPOTENCY_HEADER} header must be 1 to {limit} characters"]}
        )
    return header


def _idempotency_key(request: Request, body_key: str | None) -> str | None:
    header = _header_key(request)
    if header is not None and body_key is not None and header != body_key:
        raise serializers.ValidationError(
            {"idempotency_key": [f"differs from the {IDEMPOTENCY_HEADER} header; send one of them"]}
        )
    return header if header is not None else body_key


def written_data(memory: Memory) -> dict[str, Any]:
    """A written memory with what the write's answer adds (hints, conflicts, the write policy's notes)."""
    return {**memory_data(memory), **written_values(memory)}


def _created_response(memory: Memory, created: bool) -> Response:
    """201 with Location for a memory this request created; 200 for a replay or an upsert."""
    data = written_data(memory)
    if created:
        location = reverse("api:memory-detail", kwargs={"memory_id": memory.pk})
        return Response(data, status=status.HTTP_201_CREATED, headers={"Location": location})
    return Response(data)


CREATE_EXAMPLE = OpenApiExample(
    "A repository convention",
    value={
        "scope_type": "repository",
        "repository": "payments-api",
        "memory_type": "convention",
        "current_content": "Money amounts are integers in minor units (cents); never floats.",
        "importance": 8,
        "tags": ["payments", "money"],
        "status": "active",
    },
    request_only=True,
)


class MemoryListView(ApiView):
    @extend_schema(
        tags=TAG,
        operation_id="memories_list",
        summary="List memories",
        description=(
            "Visible memories, most important then newest first, with the search filters as query parameters "
            "(repeat a parameter for several values). Deprecated memories are left out unless asked for by "
            "status; `metadata=key:value` (repeatable) keeps those whose metadata has every pair."
        ),
        parameters=[
            s.ListQuerySerializer,
            OpenApiParameter(
                "metadata",
                OpenApiTypes.STR,
                many=True,
                pattern="^[^:]+:",  # what the view accepts: a non-empty key, a colon, any value
                description="key:value pairs that must all match.",
            ),
        ],
        responses={200: s.MemoryPageSerializer},
    )
    def get(self, request: Request) -> Response:
        params = request.query_params.copy()
        metadata_pairs = params.pop("metadata", [])
        query = self.query_params(params)
        metadata: dict[str, str] = {}
        for pair in metadata_pairs:
            key, sep, value = pair.partition(":")
            if not sep or not key:
                raise serializers.ValidationError({"metadata": [f"'{pair}' is not key:value"]})
            if "\x00" in pair:  # PostgreSQL cannot compare jsonb with it: a 500 otherwise
                raise serializers.ValidationError({"metadata": ["must not contain NUL characters (%00)"]})
            metadata[key] = value
        filters = {
            "repository": query.get("repository"),
            "memory_type": query.get("memory_type"),
            "status": query.get("status"),
            "scope_type": query.get("scope_type"),
            "tags": query.get("tag"),
            "metadata": metadata or None,
            "min_importance": query.get("min_importance"),
            "include_deleted": query["include_deleted"],
            "valid_at": query.get("valid_at"),
            "include_expired": query["include_expired"] or None,
            "mentions": query.get("mentions"),
        }
        params_ = SearchParams.build(
            filters={key: value for key, value in filters.items() if value is not None},
            limit=query["limit"],
            cursor=query.get("cursor"),
        )
        page = memory_search(self.principal, params_)
        return Response({"results": memories_data([hit.memory for hit in page.hits]), "next_cursor": page.next_cursor})

    def query_params(self, params: Any) -> dict[str, Any]:
        serializer = s.ListQuerySerializer(data=params)
        serializer.is_valid(raise_exception=True)
        return dict(serializer.validated_data)

    @extend_schema(
        tags=TAG,
        operation_id="memories_create",
        summary="Create a memory",
        description=(
            "Create one memory; 201 with its Location. With `id`, an upsert: an existing memory is updated (200). "
            "A retry with the same Idempotency-Key and content returns the first result (200). "
            "`possible_duplicates` lists memories of the same scope that say nearly the same: update one of them "
            "rather than keep both, or merge them. `conflicts` lists those it contradicts (each also becomes a "
            "proposal for curators). `notes` says what the organization's write policy did: below the curator role, "
            "a type that needs review, a pin or text that reads as instructions to agents is stored as a draft, and "
            "importance is capped. A credential in any field is refused (400, naming its kind and place, never its "
            "value) or, where the policy says so, redacted."
        ),
        parameters=[IdempotencyKeyParameter],
        request=s.MemoryCreateSerializer,
        responses={201: s.MemoryWrittenSerializer, 200: s.MemoryWrittenSerializer},
        examples=[CREATE_EXAMPLE],
    )
    def post(self, request: Request) -> Response:
        data = self.body(s.MemoryCreateSerializer)
        memory_id = data.pop("id", None)
        key = _idempotency_key(request, data.pop("idempotency_key", None))
        memory, created = services.memory_create(
            principal=self.principal,
            data=data,
            memory_id=memory_id,
            idempotency_key=key,
            create_repository=data.pop("create_repository"),
        )
        return _created_response(memory, created)


class MemorySearchView(ApiView):
    @extend_schema(
        tags=TAG,
        operation_id="memories_search",
        summary="Search memories",
        description=(
            "Hybrid search (meaning and words together), or `vector` / `keyword` alone, with filters. Returns the "
            "memories that match, best first: relevance, then importance, then newest. Each carries `score`, the "
            "estimated probability that it is relevant; those below `min_score` (by default a low floor) are left "
            "out. When that leaves the first page empty, `below_floor` says how many scored below the floor and "
            "the best of their scores. Pass `next_cursor` back as `cursor` for the next page."
        ),
        request=s.SearchSerializer,
        responses={200: s.SearchPageSerializer},
        examples=[
            OpenApiExample(
                "Money conventions in one repository",
                value={"query": "how are amounts stored", "filters": {"repository": "payments-api"}, "limit": 5},
                request_only=True,
            )
        ],
    )
    def post(self, request: Request) -> Response:
        data = self.body(s.SearchSerializer)
        return Response(page_data(memory_search(self.principal, SearchParams.build(**data))))


class MemoryBatchView(ApiView):
    @extend_schema(
        tags=TAG,
        operation_id="memories_batch_create",
        summary="Create many memories",
        description=(
            "Each entry is stored on its own: a bad entry is reported in its result and does not stop the others. "
            "With an Idempotency-Key header, entry i without its own idempotency_key uses '<key>:<i>', so the "
            "whole batch can be retried safely."
        ),
        parameters=[IdempotencyKeyParameter],
        request=s.BatchSerializer,
        responses={200: s.BatchResponseSerializer},
    )
    def post(self, request: Request) -> Response:
        entries = self.body(s.BatchSerializer)["memories"]
        header = _header_key(request, room=len(f":{len(entries) - 1}"))
        if header:
            entries = [
                {**entry, "idempotency_key": f"{header}:{index}"} if "idempotency_key" not in entry else entry
                for index, entry in enumerate(entries)
            ]
        results = memory_batch_create(principal=self.principal, entries=entries)
        body = []
        for result in results:
            error = result.error
            body.append(
                {
                    "index": result.index,
                    "ok": result.ok,
                    "memory": written_data(result.memory) if result.memory else None,
                    "error": _error_data(error) if error is not None else None,
                }
            )
        created = sum(1 for result in results if result.ok)
        return Response({"created": created, "failed": len(results) - created, "results": body})


def _error_data(error: DomainError) -> dict[str, Any]:
    return {"code": error.code, "message": error.message, "details": error.details}
