"""REST API fixtures: clients for every persona, and helpers to read the API's answers.

``api("agent")`` is a client holding acme's token for that role (reader, agent, curator, admin,
or "person": a personal agent token of acme-person), ``api("outsider")`` globex's admin token,
``api(None)`` no credentials at all. Every client talks JSON to Host ``localhost`` (the test
server's default name, "testserver", is not an allowed host).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from django.test import override_settings
from rest_framework.test import APIClient

from code_index import pipeline, services
from knowledge.links import link_create
from knowledge.models import Entity, MemoryLink, Triple
from knowledge.services import triple_assert
from lifecycle.merge import memories_merge
from lifecycle.models import ConsolidationProposal
from lifecycle.services import proposal_create
from memories.decisions import memory_delete, memory_deprecate, memory_lock
from memories.embeddings import reset_provider
from memories.models import Memory
from organizations.models import Repository
from organizations.services import repository_get_or_create
from organizations.tokens import token_create
from tests.code_index.conftest import python_module, sha, write_tree
from tests.conftest import HASH_EMBEDDER, MemoryFactory, Tenant, load_tenant, memory_factory

API = "/api/v1"
ROLES = ("reader", "agent", "curator", "admin")

Api = Callable[[str | None], APIClient]


def client_with(token: str | None = None, **defaults: Any) -> APIClient:
    client = APIClient(**{"HTTP_HOST": "localhost", **defaults})
    client.default_format = "json"
    if token is not None:
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client


@pytest.fixture
def api(acme: Tenant, request: pytest.FixtureRequest) -> Api:
    def make(role: str | None) -> APIClient:
        if role is None:
            return client_with()
        if role == "outsider":
            globex: Tenant = request.getfixturevalue("globex")  # made only for tests that use it
            return client_with(globex.raw_tokens["admin"])
        return client_with(acme.raw_tokens[role])

    return make


def error_of(response: Any, status: int, code: str | None = None) -> dict[str, Any]:
    """Assert an error reply: its status and the one error shape; returns the inner error."""
    assert response.status_code == status, (response.status_code, getattr(response, "content", b"")[:500])
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert set(body) == {"error"}
    error = body["error"]
    assert set(error) == {"code", "message", "details"}
    assert isinstance(error["code"], str) and error["code"]
    assert isinstance(error["message"], str) and error["message"]
    if code is not None:
        assert error["code"] == code, error
    return dict(error)


def memory_body(**fields: Any) -> dict[str, Any]:
    """A valid create body: an organization fact, with any field replaced."""
    return {"scope_type": "organization", "memory_type": "fact", "current_content": "Deploys run at noon.", **fields}


@dataclass
class World:
    """A few objects of acme's, one of each kind the API addresses by id."""

    memory: Memory  # active organization memory
    other: Memory  # a second one, linked from ``memory``
    locked: Memory
    deleted: Memory
    deprecated: Memory
    link: MemoryLink
    triple: Triple
    entity: Entity  # the triple's subject
    repository: Repository  # with a code index, and a sync of it waiting for src/new.py
    token_prefix: str  # a spare agent token's
    code_root: str  # a directory under CODE_INDEX_ROOTS
    # Set by the ``proposals`` fixture, for the tests that address proposals by id.
    proposal: ConsolidationProposal | None = None  # open: memory and a duplicate of it
    applied: ConsolidationProposal | None = None  # a merge of two other duplicates, to undo

    def paths(self) -> dict[str, Any]:
        return {
            "memory": self.memory.pk,
            "other": self.other.pk,
            "locked": self.locked.pk,
            "deleted": self.deleted.pk,
            "deprecated": self.deprecated.pk,
            "link": self.link.pk,
            "triple": self.triple.pk,
            "entity": self.entity.pk,
            "repository": self.repository.slug,
            "token": self.token_prefix,
            "code_root": self.code_root,
            "proposal": self.proposal.pk if self.proposal else None,
            "applied": self.applied.pk if self.applied else None,
        }


NEW_FILE = "def new():\n    return 1\n"


def _code_index(acme: Tenant, root: Path) -> None:
    """payments-api's code: one file indexed, then a sync waiting for src/new.py."""
    write_tree(root, {"src/app.py": python_module("app")})
    run = services.code_index_path(principal=acme.agent, repository="payments-api", path=str(root))
    pipeline.run_index(run.pk)
    services.code_index_manifest(
        principal=acme.agent,
        repository="payments-api",
        manifest={"src/app.py": sha(python_module("app")), "src/new.py": sha(NEW_FILE)},
    )


def build_world(acme: Tenant, make_memory: MemoryFactory, code_root: Path) -> World:
    """acme's world (see World), its code indexed from ``code_root`` (a directory under CODE_INDEX_ROOTS)."""
    memory = make_memory(current_content="Payments store money as integer cents.", status="active")
    other = make_memory(current_content="Refunds go through the ledger service.", status="active")
    locked = memory_lock(
        principal=acme.curator, memory_id=make_memory(current_content="Releases happen on Tuesdays.").pk
    )
    deleted = memory_delete(principal=acme.agent, memory_id=make_memory(current_content="An obsolete note.").pk)
    deprecated = memory_deprecate(
        principal=acme.curator, memory_id=make_memory(current_content="Builds ran on Jenkins.", status="active").pk
    )
    link, _ = link_create(principal=acme.agent, source_id=memory.pk, target_id=other.pk, relation_type="depends_on")
    triple, _ = triple_assert(principal=acme.agent, subject="payments-api", predicate="owned_by", object="Team Atlas")
    repository = repository_get_or_create(principal=acme.agent, slug="payments-api", name="Payments API")
    spare = token_create(principal=acme.admin, role="agent", name="spare")
    _code_index(acme, code_root)
    return World(
        memory=memory,
        other=other,
        locked=locked,
        deleted=deleted,
        deprecated=deprecated,
        link=link,
        triple=triple,
        entity=triple.subject,
        repository=repository,
        token_prefix=spare.token.prefix,
        code_root=str(code_root),
    )


def add_proposals(world: World, acme: Tenant, make_memory: MemoryFactory) -> World:
    """``world`` with an open proposal (memory and a twin) and an applied merge of two other memories."""
    twin = make_memory(current_content="Payments store money as integer cents!", status="active")
    world.proposal, _ = proposal_create(
        organization_id=acme.organization.pk, kind="merge", memory_ids=[world.memory.pk, twin.pk], created_by="tests"
    )
    pair = [make_memory(current_content="Invoices are numbered per year.") for _ in range(2)]
    world.applied = memories_merge(
        principal=acme.curator,
        organization_id=acme.organization.pk,
        memory_ids=[m.pk for m in pair],
        actor=acme.curator,
    )
    return world


@pytest.fixture
def own_world(acme: Tenant, make_memory: MemoryFactory, tmp_path: Path, settings: Any) -> World:
    """A world built for the test alone (0.2 s): also for a test in a module whose ``world`` is the
    shared one, when what it asserts is that world exactly (no proposals, its own code index)."""
    settings.CODE_INDEX_ROOTS = [str(tmp_path)]
    return build_world(acme, make_memory, tmp_path)


@pytest.fixture
def world(own_world: World) -> World:
    """The test's world; a module of many tests may make it the shared one (``shared_world``)."""
    return own_world


@pytest.fixture
def proposals(acme: Tenant, world: World, make_memory: MemoryFactory) -> World:
    """The world with an open proposal (memory and a twin) and an applied merge of two other memories."""
    return add_proposals(world, acme, make_memory)


@pytest.fixture(scope="module")
def _module_world(module_db: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    acme = load_tenant("acme")
    code_root = tmp_path_factory.mktemp("code")
    reset_provider(HASH_EMBEDDER)  # as the world of a test not marked real_embedder is built
    with override_settings(CODE_INDEX_ROOTS=[str(code_root)]):
        make_memory = memory_factory(acme)
        yield add_proposals(build_world(acme, make_memory, code_root), acme, make_memory)


@pytest.fixture
def shared_world(_module_world: World, db: None) -> World:
    """The world with its proposals (as the ``proposals`` fixture has it), built once for the module
    that asks for it (tests.conftest.module_db): for a module of many tests that each change little.
    A copy per test; what a test changes in the database is undone when it ends."""
    return copy.deepcopy(_module_world)
