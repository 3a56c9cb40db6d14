"""/api/v1/repositories/, /tokens/, /texts/, /write-policy/ and /status/: the organization itself."""

from __future__ import annotations

from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response

from instructions.models import InstructionKey
from instructions.selectors import instruction_text_get, instruction_text_list
from instructions.services import instruction_text_reset, instruction_text_set
from lifecycle.selectors import platform_status
from memories.write_policy import write_policy_get, write_policy_update, write_policy_values
from organizations import selectors, services, tokens
from rest_api import serializers as s
from rest_api.views.base import ApiView, created_status


class RepositoryListView(ApiView):
    @extend_schema(
        tags=["organization"],
        operation_id="repositories_list",
        summary="List repositories",
        responses={200: s.RepositorySerializer(many=True)},
    )
    def get(self, request: Request) -> Response:
        return Response(s.RepositorySerializer(selectors.repository_list(self.principal), many=True).data)

    @extend_schema(
        tags=["organization"],
        operation_id="repositories_create",
        summary="Create a repository",
        description="Writers (agent role and up) create repositories; naming an existing one returns it (200).",
        request=s.RepositoryCreateSerializer,
        responses={201: s.RepositorySerializer, 200: s.RepositorySerializer},
    )
    def post(self, request: Request) -> Response:
        data = self.body(s.RepositoryCreateSerializer)
        repository, created = services.repository_get_or_create_flagged(
            principal=self.principal, slug=data["slug"], name=data.get("name", "")
        )
        return Response(s.RepositorySerializer(repository).data, status=created_status(created))


class RepositoryDetailView(ApiView):
    @extend_schema(
        tags=["organization"],
        operation_id="repositories_retrieve",
        summary="Get a repository",
        parameters=[OpenApiParameter("slug", OpenApiTypes.STR, OpenApiParameter.PATH)],
        responses={200: s.RepositorySerializer},
    )
    def get(self, request: Request, slug: str) -> Response:
        return Response(s.RepositorySerializer(selectors.repository_get(self.principal, slug)).data)


class TokenListView(ApiView):
    @extend_schema(
        tags=["organization"],
        operation_id="tokens_list",
        summary="List API tokens (admins)",
        description="Every token of the organization, newest first, without secrets (only hashes are stored).",
        responses={200: s.TokenSerializer(many=True)},
    )
    def get(self, request: Request) -> Response:
        return Response(s.TokenSerializer(selectors.token_list(self.principal), many=True).data)

    @extend_schema(
        tags=["organization"],
        operation_id="tokens_create",
        summary="Create an API token (admins)",
        description="The response holds the secret token, once. Store it: it cannot be shown again.",
        request=s.TokenCreateSerializer,
        responses={201: s.IssuedTokenSerializer},
    )
    def post(self, request: Request) -> Response:
        data = self.body(s.TokenCreateSerializer)
        user = selectors.member_by_username(self.principal, data["user"]) if data.get("user") else None
        issued = tokens.token_create(
            principal=self.principal,
            role=data["role"],
            name=data.get("name", ""),
            user=user,
            expires_at=data.get("expires_at"),
        )
        body = {**s.TokenSerializer(issued.token).data, "token": issued.raw}
        location = reverse("api:token-detail", kwargs={"prefix": issued.token.prefix})
        return Response(body, status=status.HTTP_201_CREATED, headers={"Location": location})


class TokenDetailView(ApiView):
    @extend_schema(
        tags=["organization"],
        operation_id="tokens_revoke",
        summary="Revoke an API token (admins)",
        description="It stops working at once. Revoking twice is harmless.",
        parameters=[OpenApiParameter("prefix", OpenApiTypes.STR, OpenApiParameter.PATH, pattern="^[-a-zA-Z0-9_]+$")],
        responses={200: s.TokenSerializer},
    )
    def delete(self, request: Request, prefix: str) -> Response:
        token = tokens.token_revoke(principal=self.principal, prefix=prefix)
        return Response(s.TokenSerializer(token).data)


TextKeyParameter = OpenApiParameter(
    "key", OpenApiTypes.STR, OpenApiParameter.PATH, enum=[key.value for key in InstructionKey]
)


class TextListView(ApiView):
    @extend_schema(
        tags=["organization"],
        operation_id="texts_list",
        summary="Prompt and doc texts",
        description="The texts agents receive over MCP (prompts and docs://), as your organization serves them.",
        responses={200: s.TextSerializer(many=True)},
    )
    def get(self, request: Request) -> Response:
        return Response(s.TextSerializer(instruction_text_list(self.principal), many=True).data)


class TextDetailView(ApiView):
    @extend_schema(
        tags=["organization"],
        operation_id="texts_retrieve",
        summary="Get a text",
        parameters=[TextKeyParameter],
        responses={200: s.TextSerializer},
    )
    def get(self, request: Request, key: str) -> Response:
        return Response(s.TextSerializer(instruction_text_get(self.principal, key)).data)

    @extend_schema(
        tags=["organization"],
        operation_id="texts_update",
        summary="Reword a text (admins)",
        parameters=[TextKeyParameter],
        request=s.TextUpdateSerializer,
        responses={200: s.TextSerializer},
    )
    def put(self, request: Request, key: str) -> Response:
        data = self.body(s.TextUpdateSerializer)
        entry = instruction_text_set(principal=self.principal, key=key, text=data["text"])
        return Response(s.TextSerializer(entry).data)

    @extend_schema(
        tags=["organization"],
        operation_id="texts_reset",
        summary="Back to the default text (admins)",
        parameters=[TextKeyParameter],
        responses={200: s.TextSerializer},
    )
    def delete(self, request: Request, key: str) -> Response:
        return Response(s.TextSerializer(instruction_text_reset(principal=self.principal, key=key)).data)


class StatusView(ApiView):
    @extend_schema(
        tags=["organization"],
        operation_id="status",
        summary="Who am I, and is search healthy",
        description=(
            "Your organization and role, database and embedding model state, memory counts, open proposals "
            "and the last lifecycle runs."
        ),
        responses={200: s.StatusSerializer},
    )
    def get(self, request: Request) -> Response:
        return Response(platform_status(self.principal))


class WritePolicyView(ApiView):
    @extend_schema(
        tags=["organization"],
        operation_id="write_policy_retrieve",
        summary="The organization's write policy",
        description=(
            "What agents (every role below curator) may write without a curator's review: which memory types they "
            "may make active, the highest importance they may set, whether a pin waits for a curator, and what "
            "happens to a write holding a credential. Writes outside it are stored as drafts or capped, and say so."
        ),
        responses={200: s.WritePolicySerializer},
    )
    def get(self, request: Request) -> Response:
        return Response(write_policy_values(write_policy_get(self.principal)))

    @extend_schema(
        tags=["organization"],
        operation_id="write_policy_update",
        summary="Change the write policy (admins)",
        description="Only the fields sent change; the change is audited with the values before and after.",
        request=s.WritePolicyUpdateSerializer,
        responses={200: s.WritePolicySerializer},
    )
    def patch(self, request: Request) -> Response:
        data = self.body(s.WritePolicyUpdateSerializer)
        reason = data.pop("reason", "")
        policy = write_policy_update(principal=self.principal, data=data, reason=reason)
        return Response(write_policy_values(policy))
