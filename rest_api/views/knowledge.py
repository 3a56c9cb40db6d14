"""/api/v1/links/, /triples/ and /entities/: the knowledge graph."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response

from knowledge import links, selectors, services
from knowledge.mentions import entity_mentions
from rest_api import serializers as s
from rest_api.views.base import ApiView, created_status

# drf-spectacular names the <int:pk> path segment "id" (SCHEMA_COERCE_PATH_PK): describe that one,
# or the schema gets a second, required "pk" path parameter that no URL has.
IdParameter = OpenApiParameter("id", OpenApiTypes.INT, OpenApiParameter.PATH)


class LinkCreateView(ApiView):
    @extend_schema(
        tags=["links"],
        operation_id="links_create",
        summary="Link two memories",
        description="Linking twice changes nothing: the existing link comes back with 200 instead of 201.",
        request=s.LinkCreateSerializer,
        responses={201: s.LinkSerializer, 200: s.LinkSerializer},
    )
    def post(self, request: Request) -> Response:
        data = self.body(s.LinkCreateSerializer)
        link, created = links.link_create(
            principal=self.principal,
            source_id=data["source_id"],
            target_id=data["target_id"],
            relation_type=data.get("relation_type"),
        )
        return Response(s.LinkSerializer(link).data, status=created_status(created))


class LinkDetailView(ApiView):
    @extend_schema(
        tags=["links"],
        operation_id="links_destroy",
        summary="Remove a link",
        description="The link is kept, marked removed, for the audit trail.",
        parameters=[IdParameter],
        responses={204: None},
    )
    def delete(self, request: Request, pk: int) -> Response:
        link = selectors.link_get(self.principal, pk)
        links.link_remove(
            principal=self.principal,
            source_id=link.source_id,
            target_id=link.target_id,
            relation_type=link.relation_type,
        )
        return Response(status=status.HTTP_204_NO_CONTENT)


class TripleListView(ApiView):
    @extend_schema(
        tags=["facts"],
        operation_id="triples_query",
        summary="Facts about a subject",
        description=(
            "Facts true now, true at `as_of`, with `history=true` the timeline (each value once with the period it "
            "held), or with `records=true` every stored record, replaced and corrected ones too. An unknown subject "
            "has no facts (an empty list, not a 404)."
        ),
        parameters=[s.TripleQuerySerializer],
        responses={200: s.TripleListSerializer},
    )
    def get(self, request: Request) -> Response:
        query = self.query(s.TripleQuerySerializer)
        entity, triples = selectors.triple_query(
            self.principal,
            subject=query["subject"],
            predicate=query.get("predicate"),
            object=query.get("object"),
            as_of=query.get("as_of"),
            include_history=query["history"],
            include_records=query["records"],
        )
        return Response(
            {
                "subject": entity.name if entity else query["subject"],
                "results": s.TripleSerializer(triples, many=True).data,
            }
        )

    @extend_schema(
        tags=["facts"],
        operation_id="triples_assert",
        summary="Assert a fact",
        description=(
            "Record (subject, predicate, object) as true from `valid_from` (default now). The fact open for the "
            "same subject and predicate ends where this one starts, unless the predicate is multi-valued. "
            "Asserting what is already believed returns it (200)."
        ),
        request=s.TripleAssertSerializer,
        responses={201: s.TripleAssertedSerializer, 200: s.TripleAssertedSerializer},
        examples=[
            OpenApiExample(
                "Who owns a service",
                value={"subject": "payments-api", "predicate": "owned_by", "object": "Team Atlas"},
                request_only=True,
            )
        ],
    )
    def post(self, request: Request) -> Response:
        data = self.body(s.TripleAssertSerializer)
        triple, created = services.triple_assert(principal=self.principal, **data)
        return Response(s.TripleAssertedSerializer(triple).data, status=created_status(created))


class TripleInvalidateView(ApiView):
    @extend_schema(
        tags=["facts"],
        operation_id="triples_invalidate",
        summary="Invalidate a fact",
        description="It ends now and stays in the history, with the reason and optionally its successor.",
        parameters=[IdParameter],
        request=s.TripleInvalidateSerializer,
        responses={200: s.TripleSerializer},
    )
    def post(self, request: Request, pk: int) -> Response:
        data = self.body(s.TripleInvalidateSerializer)
        triple = services.triple_invalidate(
            principal=self.principal, triple_id=pk, reason=data["reason"], successor_id=data.get("successor_id")
        )
        return Response(s.TripleSerializer(triple).data)


class EntityListView(ApiView):
    @extend_schema(
        tags=["entities"],
        operation_id="entities_list",
        summary="List entities",
        parameters=[s.EntityListQuerySerializer],
        responses={200: s.EntityPageSerializer},
    )
    def get(self, request: Request) -> Response:
        query = self.query(s.EntityListQuerySerializer)
        page = selectors.entity_page(
            self.principal, name=query.get("name", ""), after=query["cursor"], limit=query["limit"]
        )
        return Response(
            {
                "results": s.EntitySerializer(page.items, many=True).data,
                "next_cursor": page.last_key[0] if page.last_key else None,
            }
        )

    @extend_schema(
        tags=["entities"],
        operation_id="entities_create",
        summary="Find or create an entity",
        description="Returns the entity known by this name or alias (200), or creates it (201).",
        request=s.EntityCreateSerializer,
        responses={201: s.EntitySerializer, 200: s.EntitySerializer},
    )
    def post(self, request: Request) -> Response:
        data = self.body(s.EntityCreateSerializer)
        entity, created = services.entity_get_or_create(
            principal=self.principal, name=data["name"], entity_type=data.get("entity_type", "")
        )
        entity_data = s.EntitySerializer(selectors.entity_get(self.principal, entity.pk)).data
        return Response(entity_data, status=created_status(created))


class EntityDetailView(ApiView):
    @extend_schema(
        tags=["entities"],
        operation_id="entities_retrieve",
        summary="Get an entity",
        parameters=[IdParameter],
        responses={200: s.EntitySerializer},
    )
    def get(self, request: Request, pk: int) -> Response:
        return Response(s.EntitySerializer(selectors.entity_get(self.principal, pk)).data)


class EntityAliasView(ApiView):
    @extend_schema(
        tags=["entities"],
        operation_id="entities_add_alias",
        summary="Add an alias",
        description="Another name the entity is known by; 409 if it already names another entity.",
        parameters=[IdParameter],
        request=s.AliasSerializer,
        responses={200: s.EntitySerializer},
    )
    def post(self, request: Request, pk: int) -> Response:
        data = self.body(s.AliasSerializer)
        entity = selectors.entity_get(self.principal, pk)
        services.entity_add_alias(principal=self.principal, entity_name=entity.name, alias=data["alias"])
        return Response(s.EntitySerializer(selectors.entity_get(self.principal, pk)).data)


class EntityRelatedView(ApiView):
    @extend_schema(
        tags=["entities"],
        operation_id="entities_related",
        summary="Related entities",
        description=(
            "Entities connected through current facts, up to `depth` steps, with the facts between them; the "
            "memories that mention the entity by any of its names (the first 20, most important first, and how many "
            "in all) and the names they mention most beside it."
        ),
        parameters=[IdParameter, s.RelatedQuerySerializer],
        responses={200: s.RelatedSerializer},
    )
    def get(self, request: Request, pk: int) -> Response:
        query = self.query(s.RelatedQuerySerializer)
        entity = selectors.entity_get(self.principal, pk)
        _, related, facts, truncated = selectors.entity_related(
            self.principal, name=entity.name, depth=query["depth"], direction=query["direction"]
        )
        mentioned = entity_mentions(self.principal, entity)
        return Response(
            {
                "entity": entity.name,
                "related": [{"name": e.name, "entity_type": e.entity_type, "hops": hops} for e, hops in related],
                "facts": s.TripleSerializer(facts, many=True).data,
                "truncated": truncated,
                "memories": s.MentioningMemorySerializer(mentioned.memories, many=True).data,
                "memories_total": mentioned.total,
                "mentioned_with": [{"name": name, "memories": count} for name, count in mentioned.mentioned_with],
            }
        )
