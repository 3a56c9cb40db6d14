"""Tenant isolation, generated from the live surface and run against a live server.

Every operation of the OpenAPI schema the running server publishes is sent by every principal of
globex (a token of each role, a person's token, and a person logged in with a session, naming
their own organization or acme in ``X-Organization``), aimed at acme's objects wherever the
operation names one: in its path, in its body (ids of memories, links, facts, proposals; acme's
repository, entity and texts) or in its query. A new endpoint is covered without anyone writing
a test for it.

No answer is a server error; an operation whose path names an acme object is refused (never 2xx);
no answer shows anything of acme's; nothing of acme's changes. How many requests went out is
recorded in test-artifacts/hardening.json.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from django.contrib.auth.hashers import PBKDF2PasswordHasher

from organizations.models import Membership, Role, User
from tests.artifacts import record
from tests.conftest import Tenant
from tests.rest_api.conftest import World
from tests.rest_api.test_api_outsider import _acme_state

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.mcp_live]

METHODS = ("get", "post", "put", "patch", "delete")
# What the matrix writes where a body or query names an object, beyond the path's parameters.
MEMORY_ID_FIELDS = {"id", "memory_id", "source_id", "target_id", "superseded_by", "survivor_id"}
MEMORY_IDS_FIELDS = {"memory_ids", "ids"}
PASSWORD = "globex-password-1"


def _secrets(world: World) -> list[str]:
    """Text only acme's objects hold: an answer showing any of it leaked."""
    return [
        world.memory.current_content,
        world.other.current_content,
        world.locked.current_content,
        world.deprecated.current_content,
        "Team Atlas",
        "Invoices are numbered per year",
    ]


def _resolve(schema: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return dict(spec["components"]["schemas"][name])
    return schema


def _plain(schema: dict[str, Any], spec: dict[str, Any]) -> Any:
    """A value of the schema's type (the first choice of an enum)."""
    schema = _resolve(schema, spec)
    if "enum" in schema:
        return schema["enum"][0]
    if "allOf" in schema:
        return _plain(schema["allOf"][0], spec)
    if "oneOf" in schema:
        return _plain(schema["oneOf"][0], spec)
    kind = schema.get("type")
    return {
        "string": "x",
        "integer": max(int(schema.get("minimum", 1)), 1),
        "number": 0.5,
        "boolean": False,
        "array": [],
        "object": {},
    }.get(kind, "x")


def _body(schema: dict[str, Any], spec: dict[str, Any], world: World) -> dict[str, Any]:
    """A request body the operation accepts, naming acme's objects wherever it takes one."""
    schema = _resolve(schema, spec)
    properties: dict[str, Any] = schema.get("properties", {})
    acme: dict[str, Any] = {
        "memories": [
            {
                "id": str(world.memory.pk),
                "scope_type": "organization",
                "memory_type": "fact",
                "current_content": "Globex overwrites acme's memory.",
            }
        ],
        "filters": {"repository": world.repository.slug},
        "query": world.memory.current_content,
        "repository": world.repository.slug,
        "subject": world.entity.name,
        "object": "Team Atlas",
        "predicate": "owned_by",
        "name": world.entity.name,
        "slug": world.repository.slug,
        "successor_id": world.triple.pk,
        "user": "acme-person",
        "version": 1,
        "reason": "not ours",
    }
    body: dict[str, Any] = {}
    for name, part in properties.items():
        if name in MEMORY_ID_FIELDS:
            body[name] = str(world.memory.pk)
        elif name in MEMORY_IDS_FIELDS:
            body[name] = [str(world.memory.pk), str(world.other.pk)]
        elif name in acme:
            body[name] = acme[name]
        elif name in schema.get("required", []):
            body[name] = _plain(part, spec)
    if {"scope_type", "memory_type", "current_content"} <= set(properties):
        body.update(scope_type="organization", memory_type="fact", current_content="Globex writes with acme's id.")
    return body


def _query(operation: dict[str, Any], world: World) -> dict[str, str]:
    wanted = {"repository": world.repository.slug, "subject": world.entity.name, "name": world.entity.name}
    return {
        parameter["name"]: wanted[parameter["name"]]
        for parameter in operation.get("parameters", [])
        if parameter["in"] == "query" and parameter["name"] in wanted
    }


def _path(path: str, world: World) -> str:
    """The path with acme's object in each parameter, chosen by the parameter and where it is."""
    assert world.proposal is not None and world.applied is not None
    by_action = {"/unlock/": world.locked, "/restore/": world.deleted, "/reactivate/": world.deprecated}
    memory = next((target for end, target in by_action.items() if path.endswith(end)), world.memory)
    kind = path.split("/")[3]  # /api/v1/<kind>/{...}/
    objects: dict[str, object] = {
        "memory_id": memory.pk,
        "proposal_id": (world.applied if path.endswith("/undo/") else world.proposal).pk,
        "prefix": world.token_prefix,
        "slug": world.repository.slug,
        "key": "memory-agent-core",
        "id": {"links": world.link.pk, "triples": world.triple.pk, "entities": world.entity.pk}.get(kind),
    }
    return re.sub(r"{(\w+)}", lambda match: str(objects[match[1]]), path)


def _requests(spec: dict[str, Any], world: World) -> Iterator[tuple[str, str, bool, dict[str, Any]]]:
    """(method, url, names an acme object in its path, httpx arguments) for every operation."""
    for path, item in spec["paths"].items():
        for method in METHODS:
            if method not in item:
                continue
            operation = item[method]
            arguments: dict[str, Any] = {"params": _query(operation, world)}
            content = operation.get("requestBody", {}).get("content", {}).get("application/json")
            if content is not None:
                arguments["json"] = _body(content["schema"], spec, world)
            # Texts are addressed by keys every organization shares: the caller's own are changed.
            names_acme = "{" in path and not path.startswith("/api/v1/texts/")
            yield method, _path(path, world), names_acme, arguments


@pytest.fixture
def principals(globex: Tenant, mcp_server: str) -> Iterator[dict[str, httpx.Client]]:
    """globex's callers: a token per role and a person's, and a person logged in by session (once
    naming globex, once naming acme in X-Organization)."""
    clients = {
        role: httpx.Client(base_url=mcp_server, headers={"Authorization": f"Bearer {token}"}, timeout=60)
        for role, token in globex.raw_tokens.items()
    }
    # Hashed as the server (with its production hashers) checks it; the tests hash with a fast one.
    gina = User.objects.create(username="gina", password=PBKDF2PasswordHasher().encode(PASSWORD, "isolation-salt"))
    Membership.objects.create(user=gina, organization=globex.organization, role=Role.ADMIN)
    for organization in ("globex", "acme"):
        session = httpx.Client(base_url=mcp_server, timeout=60)
        session.get("/api/auth/login/")  # the login form sets the CSRF cookie
        csrf = session.cookies["csrftoken"]
        logged_in = session.post(
            "/api/auth/login/",
            data={"username": "gina", "password": PASSWORD, "csrfmiddlewaretoken": csrf, "next": "/api/v1/status/"},
            headers={"Referer": f"{mcp_server}/api/auth/login/"},
        )
        assert logged_in.status_code == 302, logged_in.text[:500]
        session.headers.update({"X-CSRFToken": session.cookies["csrftoken"], "X-Organization": organization})
        clients[f"session naming {organization}"] = session
    yield clients
    for client in clients.values():
        client.close()


def test_no_principal_of_another_organization_reaches_acme(
    proposals: World, principals: dict[str, httpx.Client], mcp_server: str
) -> None:
    spec = httpx.get(f"{mcp_server}/api/schema/", params={"format": "json"}, timeout=60).json()
    # The operations naming acme's objects in their path go first, for every principal: what the
    # others create in the caller's own organization (a repository of the same slug) comes after.
    requests = sorted(_requests(spec, proposals), key=lambda request: not request[2])
    secrets = _secrets(proposals)
    before = _acme_state()
    sent = 0

    for method, url, names_acme, arguments in requests:
        for who, client in principals.items():
            response = client.request(method.upper(), url, **arguments)
            sent += 1
            where = (who, method, url, response.status_code, response.text[:300])
            assert response.status_code < 500, where
            if names_acme:
                assert response.status_code in (400, 401, 403, 404, 422), where
            assert not any(secret in response.text for secret in secrets), where

    assert _acme_state() == before, "something of acme's changed"
    operations = sum(1 for item in spec["paths"].values() for method in METHODS if method in item)
    assert len(requests) == operations >= 45
    record(
        "hardening",
        "isolation: REST operations x globex principals (live server)",
        f"{operations} x {len(principals)} = {sent}",
    )
