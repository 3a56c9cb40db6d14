"""Every endpoint for every role: the roles allowed get the success status, lower ones a 403.

Reads are open to every member (reader and up); writes need the agent role; curation (verify,
lock, unlock, deprecate, restore, reactivate, revert) the curator role; tokens and text edits the admin role. A
refused request changes nothing: no audit event is written. Every answer, success or refusal,
has a status and a body that the OpenAPI schema documents for that operation.
"""

from __future__ import annotations

import re
from typing import Any

import jsonschema
import pytest
from django.db import transaction
from django.urls import resolve
from drf_spectacular.generators import SchemaGenerator

from organizations.models import AuditEvent, Role
from rest_api.urls import urlpatterns
from tests.rest_api.conftest import API, ROLES, Api, World, error_of, memory_body


@pytest.fixture
def proposals(shared_world: World) -> World:
    """The module's tests share one world, built once (tests/rest_api/conftest.py: shared_world)."""
    return shared_world


# name: (minimal role, method, path, body, success status)
ENDPOINTS: dict[str, tuple[str, str, str, Any, int]] = {
    "memories list": ("reader", "get", "/memories/", None, 200),
    "memories retrieve": ("reader", "get", "/memories/{memory}/", None, 200),
    "memories versions": ("reader", "get", "/memories/{memory}/versions/", None, 200),
    "memories links": ("reader", "get", "/memories/{memory}/links/", None, 200),
    "memories mentions": ("reader", "get", "/memories/{memory}/mentions/", None, 200),
    "memories graph": ("reader", "get", "/memories/{memory}/graph/", None, 200),
    "memories search": ("reader", "post", "/memories/search/", {"query": "money"}, 200),
    "triples query": ("reader", "get", "/triples/?subject=payments-api", None, 200),
    "entities list": ("reader", "get", "/entities/", None, 200),
    "entities retrieve": ("reader", "get", "/entities/{entity}/", None, 200),
    "entities related": ("reader", "get", "/entities/{entity}/related/", None, 200),
    "repositories list": ("reader", "get", "/repositories/", None, 200),
    "repositories retrieve": ("reader", "get", "/repositories/{repository}/", None, 200),
    "texts list": ("reader", "get", "/texts/", None, 200),
    "texts retrieve": ("reader", "get", "/texts/memory-rules/", None, 200),
    "status": ("reader", "get", "/status/", None, 200),
    "write policy retrieve": ("reader", "get", "/write-policy/", None, 200),
    "proposals list": ("reader", "get", "/proposals/?state=all", None, 200),
    "proposals retrieve": ("reader", "get", "/proposals/{proposal}/", None, 200),
    "lifecycle runs": ("reader", "get", "/lifecycle/runs/", None, 200),
    "code indexes list": ("reader", "get", "/code/repositories/", None, 200),
    "code index status": ("reader", "get", "/code/repositories/{repository}/", None, 200),
    "code index runs": ("reader", "get", "/code/repositories/{repository}/runs/", None, 200),
    "code search": ("reader", "post", "/code/search/", {"query": "app values"}, 200),
    "memories consolidate": (
        "agent",
        "post",
        "/memories/consolidate/",
        {"memory_ids": ["{memory}", "{other}"], "dry_run": True},
        200,
    ),
    "memories create": ("agent", "post", "/memories/", memory_body(), 201),
    "memories batch": ("agent", "post", "/memories/batch/", {"memories": [memory_body()]}, 200),
    "memories patch": ("agent", "patch", "/memories/{memory}/", {"importance": 7}, 200),
    "memories delete": ("agent", "delete", "/memories/{memory}/", None, 204),
    "memories invalidate": ("agent", "post", "/memories/{memory}/invalidate/", {"reason": "no longer true"}, 200),
    "links create": ("agent", "post", "/links/", {"source_id": "{other}", "target_id": "{memory}"}, 201),
    "links delete": ("agent", "delete", "/links/{link}/", None, 204),
    "triples assert": (
        "agent",
        "post",
        "/triples/",
        {"subject": "ledger", "predicate": "owned_by", "object": "Ops"},
        201,
    ),
    "triples invalidate": ("agent", "post", "/triples/{triple}/invalidate/", {"reason": "team disbanded"}, 200),
    "entities create": ("agent", "post", "/entities/", {"name": "Team Borealis", "entity_type": "team"}, 201),
    "entities aliases": ("agent", "post", "/entities/{entity}/aliases/", {"alias": "payments service"}, 200),
    "repositories create": ("agent", "post", "/repositories/", {"slug": "billing"}, 201),
    "code index path": ("agent", "post", "/code/repositories/{repository}/index/", {"path": "{code_root}"}, 202),
    "code index manifest": ("agent", "post", "/code/repositories/{repository}/manifest/", {"manifest": {}}, 200),
    "code index files": (
        "agent",
        "post",
        "/code/repositories/{repository}/files/",
        {"files": [{"path": "src/new.py", "content": "def new():\n    return 1\n"}]},
        200,
    ),
    "code index delete": ("agent", "delete", "/code/repositories/{repository}/", None, 200),
    "memories verify": ("curator", "post", "/memories/{memory}/verify/", {}, 200),
    "memories lock": ("curator", "post", "/memories/{memory}/lock/", {"reason": "agreed"}, 200),
    "memories unlock": ("curator", "post", "/memories/{locked}/unlock/", {}, 200),
    "memories deprecate": ("curator", "post", "/memories/{memory}/deprecate/", {}, 200),
    "memories restore": ("curator", "post", "/memories/{deleted}/restore/", {}, 200),
    "memories reactivate": ("curator", "post", "/memories/{deprecated}/reactivate/", {}, 200),
    "memories revert": ("curator", "post", "/memories/{locked}/revert/", {"version": 1, "reason": "undo lock"}, 200),
    "proposals apply": ("curator", "post", "/proposals/{proposal}/apply/", {"reason": "same rule"}, 200),
    "proposals dismiss": ("curator", "post", "/proposals/{proposal}/dismiss/", {}, 200),
    "proposals undo": ("curator", "post", "/proposals/{applied}/undo/", {"reason": "not the same"}, 200),
    "tokens list": ("admin", "get", "/tokens/", None, 200),
    "tokens create": ("admin", "post", "/tokens/", {"role": "reader", "name": "ci"}, 201),
    "tokens revoke": ("admin", "delete", "/tokens/{token}/", None, 200),
    "texts put": ("admin", "put", "/texts/memory-rules/", {"text": "Our own memory rules."}, 200),
    "texts delete": ("admin", "delete", "/texts/memory-rules/", None, 200),
    "write policy update": ("admin", "patch", "/write-policy/", {"agent_max_importance": 5}, 200),
    "organization export": ("admin", "get", "/export/", None, 200),
    # Who may import, only: this body is no export, so an admin gets 400 (tests/transfer imports real ones).
    "organization import": ("admin", "post", "/import/", {"kind": "not an export"}, 400),
}


def _fill(value: Any, paths: dict[str, Any]) -> Any:
    if isinstance(value, str):
        return value.format(**paths)
    if isinstance(value, dict):
        return {key: _fill(item, paths) for key, item in value.items()}
    if isinstance(value, list):
        return [_fill(item, paths) for item in value]
    return value


def url_of(world: World, endpoint: str) -> str:
    return API + _fill(ENDPOINTS[endpoint][2], world.paths())


def call(client: Any, world: World, endpoint: str) -> Any:
    _, method, _, body, _ = ENDPOINTS[endpoint]
    if body is None:
        return getattr(client, method)(url_of(world, endpoint))
    return getattr(client, method)(url_of(world, endpoint), _fill(body, world.paths()))


def _json_schema(node: Any) -> Any:
    """OpenAPI 3.0 ``nullable`` → JSON Schema's null type (jsonschema ignores ``nullable``)."""
    if isinstance(node, list):
        return [_json_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    converted = {key: _json_schema(value) for key, value in node.items() if key != "nullable"}
    if node.get("nullable"):
        return {"anyOf": [converted, {"type": "null"}]}
    return converted


@pytest.fixture(scope="module")
def openapi() -> dict[str, Any]:
    return dict(_json_schema(SchemaGenerator().get_schema(request=None, public=True)))


def _shape(path: str) -> str:
    """A path with its parameters unnamed: drf-spectacular documents a route's <pk> as {id}."""
    return re.sub(r"\{\w+\}|<[^>]+>", "{}", path)


def documented(openapi: dict[str, Any], url: str, method: str) -> dict[str, Any]:
    """The responses the schema documents for the operation serving ``method url``."""
    route = "/" + resolve(url.split("?", maxsplit=1)[0]).route
    for path, operations in openapi["paths"].items():
        if _shape(path) == _shape(route):
            return dict(operations[method]["responses"])
    raise AssertionError(f"{method} {route} is not documented")


def as_documented(openapi: dict[str, Any], responses: dict[str, Any], response: Any) -> None:
    assert str(response.status_code) in responses, (response.status_code, sorted(responses))
    content = responses[str(response.status_code)].get("content")
    if response.status_code == 204:
        assert content is None
        assert response.content == b""
        return
    media = response["Content-Type"].split(";")[0]
    assert media in content, (media, sorted(content))
    if media != "application/json":  # an export's JSON Lines: tests/transfer reads them
        return
    schema = content["application/json"]["schema"]
    jsonschema.validate(response.json(), {**schema, "components": openapi["components"]})


@pytest.mark.parametrize("endpoint", list(ENDPOINTS))
def test_each_role_may_or_may_not(api: Api, proposals: World, openapi: dict[str, Any], endpoint: str) -> None:
    world = proposals
    minimal, method, _, _, success = ENDPOINTS[endpoint]
    responses = documented(openapi, url_of(world, endpoint), method)
    for role in ROLES:
        # Each role's attempt runs on the same state: its changes are rolled back afterwards.
        with transaction.atomic():
            audit_events = AuditEvent.objects.count()
            response = call(api(role), world, endpoint)
            if Role.rank(role) >= Role.rank(minimal):
                assert response.status_code == success, (role, response.content[:500])
            else:
                error = error_of(response, 403, "permission_denied")
                assert f"needs the {minimal} role" in error["message"], (role, error)
                assert AuditEvent.objects.count() == audit_events, role
            as_documented(openapi, responses, response)
            transaction.set_rollback(True)


def test_every_route_and_method_is_in_the_matrix() -> None:
    tested = [(method, re.sub(r"\{\w+\}", "x", path.split("?")[0])) for _, method, path, _, _ in ENDPOINTS.values()]
    for pattern in urlpatterns:
        view = pattern.callback.view_class  # type: ignore[union-attr]
        route = "/" + re.sub(r"<[^>]+>", "[^/]+", str(pattern.pattern))
        for method in ("get", "post", "put", "patch", "delete"):
            if hasattr(view, method):
                assert any(m == method and re.fullmatch(route, p) for m, p in tested), f"{method} {route} untested"
