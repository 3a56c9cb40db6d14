"""The OpenAPI description at /api/schema/ and the interactive docs at /api/docs/."""

from __future__ import annotations

import re
from typing import Any

import pytest
from rest_framework.test import APIClient

from rest_api.urls import urlpatterns
from tests.rest_api.conftest import client_with

METHODS = ("get", "post", "put", "patch", "delete")


@pytest.fixture
def schema(db: Any) -> dict[str, Any]:
    response = client_with().get("/api/schema/?format=json")
    assert response.status_code == 200, response.content[:500]
    return dict(response.json())


def test_schema_is_openapi_3_and_needs_no_credentials(schema: dict[str, Any]) -> None:
    assert schema["openapi"].startswith("3.")
    assert schema["info"]["title"] == "Memory Platform API"
    assert set(schema["components"]["securitySchemes"]) == {"bearerAuth", "sessionAuth"}


def _shape(path: str) -> str:
    """A path with its parameters unnamed: drf-spectacular documents a route's <pk> as {id}."""
    return re.sub(r"\{\w+\}|<[^>]+>", "{}", path)


def test_every_route_and_method_is_documented(schema: dict[str, Any]) -> None:
    paths = {_shape(path): operations for path, operations in schema["paths"].items()}
    assert len(paths) == len(schema["paths"]) == len(urlpatterns)
    for pattern in urlpatterns:
        route = _shape("/api/v1/" + str(pattern.pattern))
        assert route in paths, f"{route} is not in the schema"
        view = pattern.callback.view_class  # type: ignore[union-attr]
        implemented = {method for method in METHODS if hasattr(view, method)}
        documented = {method for method in paths[route] if method in METHODS}
        assert documented == implemented, route


def test_every_operation_documents_the_error_shape(schema: dict[str, Any]) -> None:
    error_ref = {"$ref": "#/components/schemas/Error"}
    for route, operations in schema["paths"].items():
        for method, operation in operations.items():
            if method not in METHODS:
                continue
            responses = operation["responses"]
            for status in ("400", "401", "403", "422", "429"):
                assert responses[status]["content"]["application/json"]["schema"] == error_ref, (route, method)
            assert "Retry-After" in responses["429"]["headers"]
            if method in ("post", "put", "patch"):
                assert {"413", "415"} <= set(responses), (route, method)


def test_documented_success_statuses_match_the_views(schema: dict[str, Any]) -> None:
    paths = schema["paths"]
    assert "201" in paths["/api/v1/memories/"]["post"]["responses"]
    assert "204" in paths["/api/v1/memories/{memory_id}/"]["delete"]["responses"]
    assert "204" in paths["/api/v1/links/{id}/"]["delete"]["responses"]
    assert "201" in paths["/api/v1/tokens/"]["post"]["responses"]
    assert "200" in paths["/api/v1/tokens/{prefix}/"]["delete"]["responses"]
    assert "200" in paths["/api/v1/memories/batch/"]["post"]["responses"]
    assert "Idempotency-Key" in {p["name"] for p in paths["/api/v1/memories/"]["post"]["parameters"]}


def test_list_query_parameters_are_documented(schema: dict[str, Any]) -> None:
    parameters = {p["name"] for p in schema["paths"]["/api/v1/memories/"]["get"]["parameters"]}
    assert {"repository", "memory_type", "status", "scope_type", "tag", "metadata", "cursor", "limit"} <= parameters


def test_docs_page_uses_local_static_files() -> None:
    response = APIClient(HTTP_HOST="localhost").get("/api/docs/")

    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/html")
    page = response.content.decode()
    assert "/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js" in page
    # Swagger UI's start-up script is a file of its own (no inline script, for the CSP); it loads our schema.
    assert '<script src="/api/docs/?script=">' in page
    assert "/api/schema/" in APIClient(HTTP_HOST="localhost").get("/api/docs/?script=").content.decode()
    assert not re.search(r"""(?:src|href)=["']https?://""", page)
    assert "cdn.jsdelivr" not in page
    assert "unpkg.com" not in page


def test_operations_describe_themselves_not_our_internals(schema: dict[str, Any]) -> None:
    for route, operations in schema["paths"].items():
        for method, operation in operations.items():
            if method not in METHODS:
                continue
            assert operation.get("summary"), (route, method)
            assert "REST_FRAMEWORK" not in operation.get("description", ""), (route, method)
