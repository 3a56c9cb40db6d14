"""OpenAPI description of what drf-spectacular cannot infer: our authentication and error replies."""

from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension, OpenApiSerializerExtension

from rest_api.errors import ERROR_STATUSES


class BearerTokenScheme(OpenApiAuthenticationExtension):
    target_class = "rest_api.auth.BearerTokenAuthentication"
    name = "bearerAuth"

    def get_security_definition(self, auto_schema: Any) -> dict[str, Any]:
        return {
            "type": "http",
            "scheme": "bearer",
            "bearerFormat": "mp_<prefix>_<secret>",
            "description": "An API token (the same tokens as MCP). Admins create them at POST /api/v1/tokens/.",
        }


class SessionScheme(OpenApiAuthenticationExtension):
    target_class = "rest_api.auth.SessionPrincipalAuthentication"
    name = "sessionAuth"

    def get_security_definition(self, auto_schema: Any) -> dict[str, Any]:
        return {
            "type": "apiKey",
            "in": "cookie",
            "name": "sessionid",
            "description": (
                "A login to the admin. Members of several organizations name one in the X-Organization header; "
                "unsafe methods need the X-CSRFToken header."
            ),
        }


ERROR_SCHEMA = {
    "type": "object",
    "properties": {
        "error": {
            "type": "object",
            "properties": {
                "code": {"type": "string", "description": "Stable code, e.g. invalid, not_found, locked, throttled."},
                "message": {"type": "string", "description": "What went wrong and what to send instead."},
                "details": {"description": "Per-field messages or context; null when there are none."},
            },
            "required": ["code", "message", "details"],
        }
    },
    "required": ["error"],
}


def add_error_responses(result: dict[str, Any], generator: Any, request: Any, public: bool) -> dict[str, Any]:
    """Every operation documents the error replies it can give, all in the one Error shape."""
    result.setdefault("components", {}).setdefault("schemas", {})["Error"] = ERROR_SCHEMA
    reference = {"$ref": "#/components/schemas/Error"}
    retry_after = {"Retry-After": {"schema": {"type": "integer"}, "description": "Seconds to wait."}}
    for path, operations in result.get("paths", {}).items():
        for method, operation in operations.items():
            if not isinstance(operation, dict) or "responses" not in operation:
                continue
            for code, description in ERROR_STATUSES.items():
                if not _applies(code, path, method):
                    continue
                response: dict[str, Any] = {
                    "description": description,
                    "content": {"application/json": {"schema": reference}},
                }
                if code in (429, 503):
                    response["headers"] = retry_after
                operation["responses"].setdefault(str(code), response)
    return result


def _applies(code: int, path: str, method: str) -> bool:
    has_body = method in ("post", "put", "patch")
    if code in (413, 415):
        return has_body
    if code == 404:
        return "{" in path or has_body
    if code == 409:
        return method != "get"
    if code == 503:
        return path.endswith("/search/")
    return True


class StrictSerializerScheme(OpenApiSerializerExtension):
    """Request bodies refuse unknown fields (rest_api.serializers.StrictSerializer): say so in the schema."""

    target_class = "rest_api.serializers.StrictSerializer"
    match_subclasses = True

    def map_serializer(self, auto_schema: Any, direction: Any) -> dict[str, Any]:
        schema: dict[str, Any] = auto_schema._map_serializer(self.target, direction, bypass_extensions=True)
        schema["additionalProperties"] = False
        return schema
