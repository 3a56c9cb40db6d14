"""The outsider (globex's admin) gets 404 for acme's objects and never sees acme's data."""

from __future__ import annotations

from typing import Any

import pytest

from instructions.models import InstructionText
from knowledge.models import Entity, MemoryLink, Triple
from lifecycle.models import ConsolidationProposal
from memories.models import Memory
from organizations.models import ApiToken, AuditEvent
from tests.rest_api.conftest import API, Api, World, error_of, memory_body


@pytest.fixture
def world(shared_world: World) -> World:
    """The module's tests share one world, built once (tests/rest_api/conftest.py: shared_world)."""
    return shared_world


@pytest.fixture
def proposals(shared_world: World) -> World:
    """The module's tests share one world, built once (tests/rest_api/conftest.py: shared_world)."""
    return shared_world


# Every route that names one of acme's objects: (method, path, body).
BY_ID = [
    ("get", "/memories/{memory}/", None),
    ("get", "/memories/{deleted}/?include_deleted=true", None),
    ("patch", "/memories/{memory}/", {"importance": 2}),
    ("delete", "/memories/{memory}/", None),
    ("post", "/memories/{deleted}/restore/", {}),
    ("post", "/memories/{deprecated}/reactivate/", {}),
    ("post", "/memories/{memory}/revert/", {"version": 1}),
    ("get", "/memories/{memory}/versions/", None),
    ("get", "/memories/{memory}/links/", None),
    ("get", "/memories/{memory}/mentions/", None),
    ("get", "/memories/{memory}/graph/", None),
    ("post", "/memories/{memory}/verify/", {}),
    ("post", "/memories/{memory}/lock/", {}),
    ("post", "/memories/{locked}/unlock/", {}),
    ("post", "/memories/{memory}/deprecate/", {}),
    ("post", "/memories/{memory}/invalidate/", {"reason": "not ours"}),
    ("post", "/links/", {"source_id": "{memory}", "target_id": "{other}"}),
    ("delete", "/links/{link}/", None),
    ("post", "/triples/{triple}/invalidate/", {"reason": "not ours"}),
    ("post", "/triples/", {"subject": "x", "predicate": "about", "object": "y", "memory_id": "{memory}"}),
    ("get", "/entities/{entity}/", None),
    ("post", "/entities/{entity}/aliases/", {"alias": "hijacked"}),
    ("get", "/entities/{entity}/related/", None),
    ("get", "/repositories/{repository}/", None),
    ("delete", "/tokens/{token}/", None),
    ("get", "/proposals/{proposal}/", None),
    ("post", "/proposals/{proposal}/apply/", {}),
    ("post", "/proposals/{proposal}/dismiss/", {}),
    ("post", "/proposals/{applied}/undo/", {}),
    ("post", "/memories/consolidate/", {"memory_ids": ["{memory}", "{other}"]}),
    ("get", "/code/repositories/{repository}/", None),
    ("delete", "/code/repositories/{repository}/", None),
    ("get", "/code/repositories/{repository}/runs/", None),
    ("post", "/code/repositories/{repository}/index/", {"path": "{code_root}"}),
    ("post", "/code/repositories/{repository}/manifest/", {"manifest": {}}),
    ("post", "/code/repositories/{repository}/files/", {"files": [{"path": "src/new.py", "content": "x"}]}),
]


def _fill(value: Any, paths: dict[str, Any]) -> Any:
    if isinstance(value, list):
        return [_fill(item, paths) for item in value]
    return value.format(**paths) if isinstance(value, str) else value


def _acme_state() -> tuple[Any, ...]:
    return (
        sorted(Memory.objects.filter(organization__slug="acme").values_list("pk", "version", "status", "deleted_at")),
        sorted(MemoryLink.objects.values_list("pk", "removed_at")),
        sorted(Triple.objects.values_list("pk", "expired_at")),
        sorted(ApiToken.objects.filter(organization__slug="acme").values_list("prefix", "revoked_at")),
        Entity.objects.filter(organization__slug="acme").count(),
        AuditEvent.objects.filter(organization__slug="acme").count(),
        sorted(ConsolidationProposal.objects.values_list("pk", "state")),
    )


@pytest.mark.parametrize(("method", "path", "body"), BY_ID, ids=[f"{m} {p}" for m, p, _ in BY_ID])
def test_outsider_gets_404_for_acme_objects(
    api: Api, proposals: World, method: str, path: str, body: dict[str, Any] | None
) -> None:
    paths = proposals.paths()
    url = API + path.format(**paths)
    before = _acme_state()

    if body is None:
        response = getattr(api("outsider"), method)(url)
    else:
        response = getattr(api("outsider"), method)(url, {k: _fill(v, paths) for k, v in body.items()})

    error = error_of(response, 404, "not_found")
    assert "acme" not in error["message"]
    assert _acme_state() == before


def test_outsider_lists_none_of_acme_memories(api: Api, world: World) -> None:
    outsider = api("outsider")
    own = outsider.post(f"{API}/memories/", memory_body(current_content="Globex pays in integer cents too."))

    listed = outsider.get(f"{API}/memories/?include_deleted=true").json()["results"]
    searched = [
        # min_score 0: every candidate the outsider may see, however weak the match
        outsider.post(
            f"{API}/memories/search/", {"query": "payments money cents", "mode": mode, "min_score": 0}
        ).json()["results"]
        for mode in ("hybrid", "vector", "keyword")
    ]

    assert [m["id"] for m in listed] == [own.json()["id"]]
    for results in searched:
        assert [m["id"] for m in results] == [own.json()["id"]]
    status = outsider.get(f"{API}/status/").json()
    assert (status["organization"], status["memories"]["total"]) == ("globex", 1)
    assert outsider.get(f"{API}/proposals/?state=all").json() == {"results": [], "next_cursor": None}
    assert outsider.get(f"{API}/lifecycle/runs/").json() == {"results": [], "next_cursor": None}
    assert outsider.post(f"{API}/memories/consolidate/", {}).json()["clusters"] == []


def test_outsider_sees_none_of_acme_knowledge(api: Api, world: World) -> None:
    outsider = api("outsider")

    assert outsider.get(f"{API}/entities/").json() == {"results": [], "next_cursor": None}
    assert outsider.get(f"{API}/entities/?name=payments").json()["results"] == []
    facts = outsider.get(f"{API}/triples/?subject=payments-api&records=true").json()
    assert facts == {"subject": "payments-api", "results": []}
    assert outsider.get(f"{API}/repositories/").json() == []


def test_outsider_names_get_globex_objects_of_their_own(api: Api, world: World) -> None:
    outsider = api("outsider")
    created = outsider.post(f"{API}/entities/", {"name": "payments-api"})
    repository = outsider.post(f"{API}/repositories/", {"slug": "payments-api"})

    assert created.status_code == 201
    assert created.json()["id"] != world.entity.pk
    assert repository.status_code == 201
    assert Entity.objects.filter(name="payments-api").count() == 2


def test_outsider_lists_only_globex_tokens(api: Api, world: World) -> None:
    prefixes = {t["prefix"] for t in api("outsider").get(f"{API}/tokens/").json()}

    assert prefixes == set(ApiToken.objects.filter(organization__slug="globex").values_list("prefix", flat=True))
    assert not prefixes & set(ApiToken.objects.filter(organization__slug="acme").values_list("prefix", flat=True))


def test_outsider_text_edits_stay_in_globex(api: Api) -> None:
    api("outsider").put(f"{API}/texts/memory-rules/", {"text": "Globex rules."})

    assert api("reader").get(f"{API}/texts/memory-rules/").json()["overridden"] is False
    assert InstructionText.objects.get().organization.slug == "globex"


def test_outsider_cannot_overwrite_an_acme_memory_through_upsert(api: Api, world: World) -> None:
    body = memory_body(id=str(world.memory.pk), current_content="Globex was here.")

    response = api("outsider").post(f"{API}/memories/", body)

    # The id is refused without changing acme's memory (the service answers 409: the id is taken).
    error_of(response, 409, "conflict")
    assert "acme" not in response.content.decode()
    stored = Memory.objects.get(pk=world.memory.pk)
    assert (stored.organization.slug, stored.current_content, stored.version) == (
        "acme",
        world.memory.current_content,
        1,
    )


def test_a_token_cannot_switch_organization_with_the_header(api: Api, world: World) -> None:
    response = api("outsider").get(f"{API}/memories/", HTTP_X_ORGANIZATION="acme")

    assert response.status_code == 200
    assert response.json()["results"] == []
    assert api("outsider").get(f"{API}/status/", HTTP_X_ORGANIZATION="acme").json()["organization"] == "globex"
