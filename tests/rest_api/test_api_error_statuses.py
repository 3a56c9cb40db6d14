"""Every failure answers in the one error shape, with the status code errors.py documents."""

from __future__ import annotations

import json
import uuid

import pytest
from django.test import override_settings

from memories.models import Memory
from tests.conftest import Tenant
from tests.rest_api.conftest import API, Api, World, client_with, error_of, memory_body

# --- 400: the request does not match the schema ------------------------------------------------


def test_malformed_json_is_400(api: Api) -> None:
    written_before = Memory.objects.count()
    response = api("agent").post(f"{API}/memories/", '{"scope_type": ', content_type="application/json")

    error = error_of(response, 400, "parse_error")
    assert "not valid JSON" in error["message"] and "line 1 column 16" in error["message"]
    assert Memory.objects.count() == written_before, "nothing is written"


def test_body_that_is_not_an_object_is_400(api: Api) -> None:
    response = api("agent").post(f"{API}/memories/", [memory_body()])

    error = error_of(response, 400, "invalid")
    assert "must be a JSON object, got list" in error["message"]


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"importance": "very"}, "importance"),
        ({"tags": "payments"}, "tags"),
        ({"metadata": ["a", "b"]}, "metadata"),
        ({"scope_type": "galaxy"}, "scope_type"),
        ({"valid_from": "next tuesday"}, "valid_from"),
        ({"current_content": None}, "current_content"),
    ],
)
def test_wrong_types_are_400_naming_the_field(api: Api, fields: dict[str, object], field: str) -> None:
    written_before = Memory.objects.count()
    response = api("agent").post(f"{API}/memories/", memory_body(**fields))

    error = error_of(response, 400, "invalid")
    assert field in error["details"]
    assert error["message"].startswith(f"invalid request: {field}: ")
    assert Memory.objects.count() == written_before, "nothing is written"


def test_missing_required_field_is_400(api: Api) -> None:
    body = memory_body()
    del body["memory_type"]

    error = error_of(api("agent").post(f"{API}/memories/", body), 400, "invalid")

    assert error["details"] == {"memory_type": ["This field is required."]}


def test_unknown_field_is_400_listing_the_known_ones(api: Api) -> None:
    error = error_of(api("agent").post(f"{API}/memories/", memory_body(colour="blue")), 400, "invalid")

    assert list(error["details"]) == ["colour"]
    assert "known fields:" in error["details"]["colour"][0]
    assert "current_content" in error["details"]["colour"][0]


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/memories/", memory_body(importance=11), "importance"),
        ("/memories/", memory_body(importance=0), "importance"),
        ("/memories/", memory_body(current_content="x" * 100_001), "current_content"),
        ("/memories/search/", {"query": "x", "limit": 0}, "limit"),
        ("/memories/search/", {"query": "x", "limit": 1001}, "limit"),
        ("/memories/search/", {"query": "x", "vector_weight": -1}, "vector_weight"),
        ("/memories/search/", {"query": "x" * 2001}, "query"),
        ("/triples/", {"subject": "a", "predicate": "b", "object": "c", "confidence": 1.5}, "confidence"),
    ],
)
def test_out_of_range_values_are_400(api: Api, path: str, body: dict[str, object], field: str) -> None:
    error = error_of(api("agent").post(API + path, body), 400, "invalid")
    assert field in error["details"]


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/memories/{memory}/verify/", {"reason": "x" * 2000 + " "}, "reason"),
        ("/memories/{memory}/invalidate/", {"reason": " " + "x" * 2000}, "reason"),
        ("/memories/", memory_body(tags=["t" * 64 + " "]), "tags"),
        ("/triples/", {"subject": "a" * 200 + "\n", "predicate": "b", "object": "c"}, "subject"),
    ],
)
def test_max_length_counts_the_whitespace_that_was_sent(
    api: Api, world: World, path: str, body: dict[str, object], field: str
) -> None:
    # The schema's maxLength applies to the string as sent; DRF would trim first and accept it.
    before = world.memory.versions.count()

    error = error_of(api("curator").post(API + path.format(**world.paths()), body), 400, "invalid")

    assert field in error["details"]
    assert "at most" in json.dumps(error["details"])
    assert world.memory.versions.count() == before


def test_max_length_of_a_query_parameter_counts_the_whitespace_too(api: Api) -> None:
    error = error_of(api("reader").get(f"{API}/memories/", {"tag": "t" * 64 + " "}), 400, "invalid")
    assert "at most 64 characters" in error["details"]["tag"][0]


@pytest.mark.parametrize(
    "query",
    ["limit=0", "limit=1001", "min_importance=11", "memory_type=poem", "include_deleted=perhaps", "colour=blue"],
)
def test_bad_query_parameters_are_400(api: Api, query: str) -> None:
    name = query.split("=", maxsplit=1)[0]
    error = error_of(api("reader").get(f"{API}/memories/?{query}"), 400, "invalid")
    assert name in error["details"]


def test_bad_graph_and_related_parameters_are_400(api: Api, world: World) -> None:
    reader = api("reader")
    error = error_of(reader.get(f"{API}/memories/{world.memory.pk}/graph/?max_hops=9"), 400, "invalid")
    assert "max_hops" in error["details"]
    error = error_of(reader.get(f"{API}/entities/{world.entity.pk}/related/?direction=sideways"), 400, "invalid")
    assert "direction" in error["details"]


# --- 404 -----------------------------------------------------------------------------------------


def test_unknown_url_under_api_is_json_404(api: Api) -> None:
    error = error_of(api("agent").get(f"{API}/widgets/"), 404, "not_found")
    assert error["message"] == "no endpoint at /api/v1/widgets/"


def test_unknown_url_without_credentials_is_json_404_too(api: Api) -> None:
    error_of(api(None).get("/api/v2/memories/"), 404, "not_found")


def test_missing_trailing_slash_is_a_404_that_names_the_right_url(api: Api) -> None:
    written_before = Memory.objects.count()
    # No redirect: a client following it would lose its POST body.
    response = api("agent").post(f"{API}/memories", memory_body())

    error = error_of(response, 404, "not_found")
    assert "did you mean /api/v1/memories/ (with the trailing slash)?" in error["message"]
    assert Memory.objects.count() == written_before, "nothing is written"


def test_unknown_memory_is_404(api: Api) -> None:
    missing = uuid.uuid4()
    error = error_of(api("agent").get(f"{API}/memories/{missing}/"), 404, "not_found")
    assert str(missing) in error["message"]


def test_malformed_memory_id_is_404(api: Api) -> None:
    error_of(api("agent").get(f"{API}/memories/not-a-uuid/"), 404, "not_found")


def test_unknown_text_key_is_404_listing_the_keys(api: Api) -> None:
    error = error_of(api("admin").get(f"{API}/texts/nonsense/"), 404, "not_found")
    assert "memory-rules" in error["message"]


def test_deleted_memory_is_404_unless_asked_for(api: Api, world: World) -> None:
    reader = api("reader")
    error_of(reader.get(f"{API}/memories/{world.deleted.pk}/"), 404, "not_found")

    response = reader.get(f"{API}/memories/{world.deleted.pk}/?include_deleted=true")

    assert response.status_code == 200
    assert response.json()["deleted_at"] is not None


# --- 405, 409, 413, 415, 422 ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path"),
    [("delete", "/status/"), ("get", "/memories/search/"), ("put", "/memories/{memory}/"), ("get", "/links/")],
)
def test_method_not_allowed_is_405(api: Api, world: World, method: str, path: str) -> None:
    response = getattr(api("admin"), method)(API + path.format(memory=world.memory.pk))

    error = error_of(response, 405, "method_not_allowed")
    assert method.upper() in error["message"]


def test_conflict_is_409(api: Api, world: World) -> None:
    error = error_of(api("curator").post(f"{API}/memories/{world.memory.pk}/unlock/", {}), 409, "conflict")
    assert "is not locked" in error["message"]


@override_settings(API_MAX_BODY_BYTES=1000)
def test_body_over_the_limit_is_413(api: Api) -> None:
    written_before = Memory.objects.count()
    response = api("agent").post(f"{API}/memories/", memory_body(current_content="word " * 400))

    error = error_of(response, 413, "too_large")
    assert "larger than 1000 bytes" in error["message"]
    assert Memory.objects.count() == written_before, "nothing is written"


@override_settings(API_MAX_BODY_BYTES=1000)
def test_body_under_the_limit_is_accepted(api: Api) -> None:
    assert api("agent").post(f"{API}/memories/", memory_body()).status_code == 201


@pytest.mark.parametrize(
    ("content_type", "payload"),
    [
        ("application/x-www-form-urlencoded", "scope_type=organization"),
        ("text/plain", json.dumps(memory_body())),
        ("application/xml", "<memory/>"),
    ],
)
def test_body_that_is_not_json_is_415(api: Api, content_type: str, payload: str) -> None:
    written_before = Memory.objects.count()
    response = api("agent").post(f"{API}/memories/", payload, content_type=content_type)

    error = error_of(response, 415, "unsupported_media_type")
    assert content_type in error["message"]
    assert Memory.objects.count() == written_before, "nothing is written"


def test_repository_scope_without_repository_is_422(api: Api) -> None:
    response = api("agent").post(f"{API}/memories/", memory_body(scope_type="repository"))

    error = error_of(response, 422, "invalid")
    assert "needs a repository slug" in error["message"]
    assert error["details"] == {"field": "repository"}


def test_invalid_cursor_is_422(api: Api) -> None:
    error = error_of(api("reader").get(f"{API}/memories/?cursor=not-a-cursor"), 422, "invalid")
    assert error["details"] == {"field": "cursor"}
    error = error_of(api("reader").post(f"{API}/memories/search/", {"query": "x", "cursor": "bm90LWpzb24"}), 422)
    assert "cursor is not valid" in error["message"]


def test_rule_violations_of_other_endpoints_are_422(api: Api, world: World) -> None:
    agent = api("agent")
    body = {"source_id": str(world.memory.pk), "target_id": str(world.memory.pk)}
    error = error_of(agent.post(f"{API}/links/", body), 422, "invalid")
    assert "cannot be linked to itself" in error["message"]

    body = {"role": "agent", "expires_at": "2001-01-01T00:00:00Z"}
    error = error_of(api("admin").post(f"{API}/tokens/", body), 422, "invalid")
    assert "expires_at must be in the future" in error["message"]


def test_bad_include_deleted_on_a_memory_is_400_naming_it(api: Api, world: World) -> None:
    response = api("reader").get(f"{API}/memories/{world.deleted.pk}/?include_deleted=perhaps")

    error = error_of(response, 400, "invalid")
    assert list(error["details"]) == ["include_deleted"]
    assert error["message"].startswith("invalid request: include_deleted: ")


# --- 500 -----------------------------------------------------------------------------------------


def test_unexpected_failure_is_a_json_500_without_internals(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(principal: object) -> dict[str, object]:
        raise RuntimeError("secret internal detail")

    # The failure is injected below the view; the handler that answers for it is under test.
    monkeypatch.setattr("rest_api.views.organization.platform_status", broken)

    response = api("reader").get(f"{API}/status/")

    error = error_of(response, 500, "server_error")
    assert "secret internal detail" not in response.content.decode()
    assert "logged" in error["message"]


def test_unknown_host_is_a_json_400(acme: Tenant) -> None:
    response = client_with(acme.raw_tokens["agent"], HTTP_HOST="evil.example").get(f"{API}/status/")

    error_of(response, 400, "bad_request")


def test_a_value_outside_a_choice_lists_the_allowed_ones(api: Api) -> None:
    body = api("agent").post(f"{API}/memories/", memory_body(memory_type="rule"))
    error = error_of(body, 400, "invalid")
    assert "memory_type" in error["details"]
    assert '"rule" is not one of: business_rule, decision_log' in error["details"]["memory_type"][0]

    query = api("reader").get(f"{API}/memories/?status=gone")
    error = error_of(query, 400, "invalid")
    assert "is not one of: draft, verified, locked, deprecated, active" in error["details"]["status"][0]


@pytest.fixture
def world(shared_world: World) -> World:
    """The module's world, built once for its tests (tests/rest_api/conftest.py, shared_world)."""
    return shared_world
