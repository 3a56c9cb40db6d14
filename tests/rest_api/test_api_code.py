"""/api/v1/code/: index a directory, sync files in two steps, status, runs, search, delete; every
failure in the API's one error shape with its status (400 schema, 404 not yours, 409 mid-run, 422
rules); the outsider lists and finds nothing of acme's. (The role matrix and the outsider's 404s for
these routes are in test_api_role_matrix.py and test_api_outsider.py.)"""

from __future__ import annotations

from typing import Any

import pytest

from code_index import pipeline
from code_index.models import CodeChunk, CodeIndexRun, RunPhase
from tests.code_index.conftest import python_module, sha, worker_holding_the_lock
from tests.rest_api.conftest import API, NEW_FILE, Api, World, error_of

CODE = f"{API}/code"
REPO = f"{CODE}/repositories/payments-api"


def finish_the_waiting_sync(api: Api) -> dict[str, Any]:
    answer = api("agent").post(f"{REPO}/files/", {"files": [{"path": "src/new.py", "content": NEW_FILE}]})
    assert answer.status_code == 200, answer.content
    body: dict[str, Any] = answer.json()
    assert (body["phase"], body["remaining"], body["received"]) == ("queued", [], 1)
    assert pipeline.run_index(body["run_id"]) is not None
    return body


@pytest.mark.real_embedder  # which chunks a query finds
def test_a_sync_over_rest_from_manifest_to_search(api: Api, own_world: World) -> None:
    agent = api("agent")
    files = {"src/app.py": python_module("app"), "src/fees.py": python_module("fees")}

    answer = agent.post(f"{REPO}/manifest/", {"manifest": {path: sha(text) for path, text in files.items()}})

    assert answer.status_code == 200
    assert (answer.json()["needed"], answer.json()["unchanged"]) == (["src/fees.py"], 1)
    sent = agent.post(f"{REPO}/files/", {"files": [{"path": "src/fees.py", "content": files["src/fees.py"]}]})
    assert sent.json()["phase"] == "queued"
    pipeline.run_index(sent.json()["run_id"])

    status = api("reader").get(f"{REPO}/").json()
    assert (status["status"], status["total_files"], status["total_chunks"], status["last_run"]["added"]) == (
        "completed", 2, 2, 1,
    )  # fmt: skip
    found = api("reader").post(f"{CODE}/search/", {"query": "fees values", "mode": "keyword", "limit": 1}).json()
    assert found["warning"] is None
    assert [(hit["file_path"], hit["name"], hit["start_line"]) for hit in found["results"]] == [
        ("src/fees.py", "fees", 1)
    ]
    listed = api("reader").get(f"{CODE}/repositories/").json()
    assert [entry["repository"] for entry in listed] == ["payments-api"]
    nonsense = {"query": "purple elephant sings opera under the frozen moon"}
    empty = api("reader").post(f"{CODE}/search/", nonsense).json()
    assert empty["results"] == [] and empty["below_floor"]["count"] > 0
    weak = api("reader").post(f"{CODE}/search/", {**nonsense, "min_score": 0}).json()
    assert weak["results"] and "below_floor" not in weak
    assert all(0 <= hit["score"] < 0.01 for hit in weak["results"])


def test_runs_are_listed_newest_first_in_cursor_pages(api: Api, world: World) -> None:
    finish_the_waiting_sync(api)

    first = api("reader").get(f"{REPO}/runs/?limit=1").json()
    second = api("reader").get(f"{REPO}/runs/?limit=1&cursor={first['next_cursor']}").json()

    assert [run["trigger"] for run in first["results"] + second["results"]] == ["manifest", "path"]
    assert second["next_cursor"] is None
    assert first["results"][0]["added"] == 1


def test_indexing_a_directory_answers_202(api: Api, world: World) -> None:
    response = api("agent").post(f"{REPO}/index/", {"path": world.code_root, "watch": True})

    assert response.status_code == 202
    assert (response.json()["phase"], response.json()["watch"]) == ("queued", True)


def test_deleting_keeps_the_repository(api: Api, world: World) -> None:
    response = api("agent").delete(f"{REPO}/")

    assert response.status_code == 200 and response.json()["files"] == 1
    assert api("reader").get(f"{API}/repositories/payments-api/").status_code == 200
    error_of(api("reader").get(f"{REPO}/"), 404, "not_found")


@pytest.mark.parametrize(
    ("method", "path", "body", "status", "message"),
    [
        ("post", "/code/search/", {"query": "x", "qeury": "y"}, 400, "qeury: unknown field"),
        ("post", "/code/search/", {"query": "x", "limit": "5"}, 400, "limit: must be an integer"),
        ("post", "/code/search/", {"query": "x", "language": "klingon"}, 400, "is not one of"),
        ("post", "/code/search/", {"query": "x", "min_score": 1.5}, 400, "min_score: Ensure this value is less than"),
        ("post", "/code/search/", {"query": "x", "min_score": "high"}, 400, 'min_score: must be a number, not "high"'),
        ("post", "/code/search/", {"query": "x", "repository": "payment-api"}, 422, "known repositories"),
        ("post", "/code/repositories/payments-api/index/", {}, 400, "path: This field is required"),
        ("post", "/code/repositories/payments-api/index/", {"path": "/etc"}, 422, "is not under a directory"),
        ("post", "/code/repositories/payments-api/files/", {}, 400, "send files, or done: true"),
        ("post", "/code/repositories/payments-api/files/", {"files": [{"path": "a.py"}]}, 400, "content"),
        ("post", "/code/repositories/payments-api/manifest/", {"manifest": {"a.py": "xyz"}}, 422, "64 hexadecimal"),
        ("post", "/code/repositories/payments-api/manifest/", {"manifest": []}, 400, "manifest"),
        ("get", "/code/repositories/payments-api/runs/?limit=0", None, 400, "limit"),
        ("get", "/code/repositories/billing/", None, 404, "does not exist in acme"),
        ("delete", "/code/repositories/billing/", None, 404, "does not exist in acme"),
    ],
)
def test_bad_requests_get_the_error_shape(
    api: Api, world: World, *, method: str, path: str, body: Any, status: int, message: str
) -> None:
    client = api("agent")
    response = getattr(client, method)(API + path, body) if body is not None else getattr(client, method)(API + path)

    error = error_of(response, status)
    assert message in error["message"], error


def test_a_repository_without_an_index_is_not_found(api: Api, world: World) -> None:
    api("agent").post(f"{API}/repositories/", {"slug": "billing"})

    error = error_of(api("reader").get(f"{CODE}/repositories/billing/"), 404, "not_found")

    assert "has no code index yet" in error["message"]


def test_a_request_during_a_live_run_is_a_conflict(api: Api, world: World) -> None:
    run = CodeIndexRun.objects.get(status="indexing")
    CodeIndexRun.objects.filter(pk=run.pk).update(phase=RunPhase.RUNNING)

    with worker_holding_the_lock(run.index_id):
        error = error_of(api("agent").delete(f"{REPO}/"), 409, "conflict")
        error_of(api("agent").post(f"{REPO}/manifest/", {"manifest": {}}), 409, "conflict")

    assert "being indexed right now" in error["message"]


@pytest.mark.real_embedder  # which chunks a query finds
def test_the_outsider_lists_and_finds_nothing_of_acme(api: Api, world: World) -> None:
    outsider = api("outsider")

    assert outsider.get(f"{CODE}/repositories/").json() == []
    for mode in ("hybrid", "vector", "keyword"):
        found = outsider.post(f"{CODE}/search/", {"query": "app values", "mode": mode}).json()
        assert found == {"results": [], "warning": None}
    assert CodeChunk.objects.filter(organization__slug="acme").count() == 1


@pytest.fixture
def world(shared_world: World) -> World:
    """The module's world, built once for its tests (tests/rest_api/conftest.py, shared_world)."""
    return shared_world
