"""POST /memories/batch/: each entry stored on its own, and a header makes the batch retryable."""

from __future__ import annotations

from typing import Any

from memories.models import Memory
from tests.rest_api.conftest import API, Api, error_of, memory_body


def test_a_bad_entry_does_not_block_the_others(api: Api) -> None:
    entries = [
        memory_body(current_content="Deploys run at noon."),
        memory_body(scope_type="repository"),  # no repository
        memory_body(memory_type="poem"),
        memory_body(current_content=""),
        memory_body(current_content="Rollbacks need a ticket.", tags=["ops"]),
    ]

    response = api("agent").post(f"{API}/memories/batch/", {"memories": entries})

    assert response.status_code == 200, response.content
    data = response.json()
    assert (data["created"], data["failed"]) == (2, 3)
    results = data["results"]
    assert [r["index"] for r in results] == [0, 1, 2, 3, 4]
    assert [r["ok"] for r in results] == [True, False, False, False, True]
    assert results[0]["memory"]["current_content"] == "Deploys run at noon."
    assert results[4]["memory"]["tags"] == ["ops"]
    for failed in (results[1], results[2], results[3]):
        assert failed["memory"] is None
        assert set(failed["error"]) == {"code", "message", "details"}
        assert failed["error"]["code"] == "invalid"
    assert "needs a repository slug" in results[1]["error"]["message"]
    assert "poem" in results[2]["error"]["message"]
    assert "current_content is required" in results[3]["error"]["message"]
    assert set(Memory.objects.values_list("current_content", flat=True)) == {
        "Deploys run at noon.",
        "Rollbacks need a ticket.",
    }


def test_a_refused_entry_does_not_block_the_others(api: Api) -> None:
    entries = [memory_body(status="locked"), memory_body(current_content="Standups are at ten.")]

    data = api("agent").post(f"{API}/memories/batch/", {"memories": entries}).json()

    assert (data["created"], data["failed"]) == (1, 1)
    assert data["results"][0]["error"]["code"] == "permission_denied"
    assert data["results"][1]["ok"] is True


def test_a_retried_batch_with_the_header_returns_the_same_memories(api: Api) -> None:
    entries = [memory_body(current_content=f"Rule {n} of the release train.") for n in range(3)]
    agent = api("agent")

    first = agent.post(f"{API}/memories/batch/", {"memories": entries}, HTTP_IDEMPOTENCY_KEY="import-7")
    again = agent.post(f"{API}/memories/batch/", {"memories": entries}, HTTP_IDEMPOTENCY_KEY="import-7")

    ids = [r["memory"]["id"] for r in first.json()["results"]]
    assert [r["memory"]["id"] for r in again.json()["results"]] == ids
    assert again.json()["created"] == 3
    assert Memory.objects.count() == 3
    assert sorted(Memory.objects.values_list("idempotency_key", flat=True)) == [
        "import-7:0",
        "import-7:1",
        "import-7:2",
    ]


def test_a_batch_without_the_header_is_not_deduplicated(api: Api) -> None:
    agent = api("agent")
    body = {"memories": [memory_body()]}
    agent.post(f"{API}/memories/batch/", body)
    agent.post(f"{API}/memories/batch/", body)
    assert Memory.objects.count() == 2


def test_an_entry_key_wins_over_the_header(api: Api) -> None:
    agent = api("agent")
    agent.post(f"{API}/memories/", memory_body(current_content="Kept."), HTTP_IDEMPOTENCY_KEY="own")

    data = agent.post(
        f"{API}/memories/batch/",
        {"memories": [memory_body(current_content="Kept.", idempotency_key="own"), memory_body()]},
        HTTP_IDEMPOTENCY_KEY="batch",
    ).json()

    assert data["created"] == 2
    assert Memory.objects.filter(current_content="Kept.").count() == 1
    assert set(Memory.objects.values_list("idempotency_key", flat=True)) == {"own", "batch:1"}


def test_batch_shape_is_checked(api: Api) -> None:
    agent = api("agent")
    error_of(agent.post(f"{API}/memories/batch/", {"memories": []}), 400, "invalid")
    error_of(agent.post(f"{API}/memories/batch/", {"memories": memory_body()}), 400, "invalid")
    error_of(agent.post(f"{API}/memories/batch/", {"entries": [memory_body()]}), 400, "invalid")
    error = error_of(agent.post(f"{API}/memories/batch/", {"memories": [memory_body(), "text"]}), 400, "invalid")
    assert error["details"] == {"memories": {"1": ['Expected a dictionary of items but got type "str".']}}
    error_of(
        agent.post(f"{API}/memories/batch/", {"memories": [memory_body()]}, HTTP_IDEMPOTENCY_KEY="k" * 199),
        400,
        "invalid",
    )
    error_of(api("reader").post(f"{API}/memories/batch/", {"memories": [memory_body()]}), 403, "permission_denied")
    assert not Memory.objects.exists()


def test_more_entries_than_documented_is_400(api: Api, settings: Any) -> None:
    entries = [memory_body()] * (settings.MEMORY_BATCH_MAX_ENTRIES + 1)

    error = error_of(api("agent").post(f"{API}/memories/batch/", {"memories": entries}), 400, "invalid")

    assert "memories" in error["details"]
    assert not Memory.objects.exists()
