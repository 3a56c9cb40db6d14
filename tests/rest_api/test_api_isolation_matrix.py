"""Tenant isolation, generated from the live surface: every operation of the OpenAPI schema that
names an object in its path, aimed at acme's objects by every role of globex. A new endpoint is
covered here without anyone writing a test for it.

Each call must be refused (never 2xx), change nothing of acme's, and show nothing of acme's.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from drf_spectacular.generators import SchemaGenerator

from organizations.models import Role
from tests.conftest import Tenant
from tests.rest_api.conftest import World, client_with
from tests.rest_api.test_api_outsider import _acme_state

SCHEMA = SchemaGenerator().get_schema(request=None, public=True)
METHODS = ("get", "post", "put", "patch", "delete")


def _operations() -> list[tuple[str, str]]:
    """(method, path) of every operation whose path names an object, texts aside (their keys are
    the platform's, the same in every organization, not objects of one)."""
    return [
        (method, path)
        for path, item in SCHEMA["paths"].items()
        if "{" in path and not path.startswith("/api/v1/texts/")
        for method in METHODS
        if method in item
    ]


OPERATIONS = _operations()


def _acme_object(path: str, parameter: str, world: World) -> str:
    """The acme object a path parameter names, chosen by the parameter and where it is."""
    assert world.proposal is not None and world.applied is not None
    by_action = {"/unlock/": world.locked, "/restore/": world.deleted, "/reactivate/": world.deprecated}
    memory = next((target for end, target in by_action.items() if path.endswith(end)), world.memory)
    kind = path.split("/")[3]  # /api/v1/<kind>/{...}/
    objects: dict[str, object] = {
        "memory_id": memory.pk,
        "proposal_id": (world.applied if path.endswith("/undo/") else world.proposal).pk,
        "prefix": world.token_prefix,
        "slug": world.repository.slug,
        "id": {"links": world.link.pk, "triples": world.triple.pk, "entities": world.entity.pk}.get(kind),
    }
    return str(objects[parameter])


def test_the_matrix_covers_every_kind_of_object() -> None:
    parameters = {name for _, path in OPERATIONS for name in re.findall(r"{(\w+)}", path)}
    assert parameters == {"memory_id", "proposal_id", "id", "prefix", "slug"}
    assert len(OPERATIONS) >= 25


@pytest.mark.parametrize("role", Role.values)
def test_no_role_of_another_organization_reaches_acmes_objects(proposals: World, globex: Tenant, role: str) -> None:
    client = client_with(globex.raw_tokens[role])
    secrets = [proposals.memory.title, proposals.memory.current_content, proposals.locked.title]
    before = _acme_state()
    answered: dict[str, int] = {}

    for method, path in OPERATIONS:
        url = re.sub(r"{(\w+)}", lambda match, p=path: _acme_object(p, match[1], proposals), path)
        body: dict[str, Any] = {"reason": "not ours", "version": 1} if method != "get" else {}
        response = getattr(client, method)(url, body or None, format="json") if body else getattr(client, method)(url)
        answered[f"{method} {path}"] = response.status_code

        assert response.status_code in (400, 403, 404, 422), (method, url, response.status_code, response.content[:300])
        text = response.content.decode()
        assert not any(secret in text for secret in secrets), (method, url, text[:300])

    assert _acme_state() == before, "something of acme's changed"
    assert len(answered) == len(OPERATIONS)
