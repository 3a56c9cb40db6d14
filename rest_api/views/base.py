"""What every REST view shares: the principal, the body limit, request parsing."""

from __future__ import annotations

from typing import Any, TypeVar

from django.conf import settings
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.views import APIView

from organizations.principal import Principal
from rest_api.auth import principal_of
from rest_api.errors import PayloadTooLarge

S = TypeVar("S", bound=serializers.Serializer)


class ApiView(APIView):
    # A view of /api/v1/: authenticated, throttled, JSON in and out (see settings.REST_FRAMEWORK).
    # Not a docstring: drf-spectacular would publish it as the description of every operation
    # that has none of its own.

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        length = request.META.get("CONTENT_LENGTH") or ""
        limit = settings.API_MAX_BODY_BYTES
        if length.isdigit() and int(length) > limit:
            raise PayloadTooLarge(f"request body is larger than {limit} bytes; send smaller batches")
        super().initial(request, *args, **kwargs)

    @property
    def principal(self) -> Principal:
        return principal_of(self.request)

    def body(self, serializer_class: type[S]) -> dict[str, Any]:
        """The JSON body checked against its schema (400 if it does not match)."""
        data = self.request.data
        if not isinstance(data, dict):
            raise serializers.ValidationError(
                {"non_field_errors": [f"the body must be a JSON object, got {type(data).__name__}"]}
            )
        serializer = serializer_class(data=data)
        serializer.is_valid(raise_exception=True)
        return dict(serializer.validated_data)

    def query(self, serializer_class: type[S]) -> dict[str, Any]:
        """Query parameters checked against their schema (400 if they do not match)."""
        serializer = serializer_class(data=self.request.query_params)
        serializer.is_valid(raise_exception=True)
        return dict(serializer.validated_data)


def created_status(created: bool) -> int:
    """201 for an object this request created, 200 for one that was already there (a replay),
    as the service that wrote it says (the ``created`` of its ``(obj, created)``)."""
    return status.HTTP_201_CREATED if created else status.HTTP_200_OK
