"""memory-consolidate: candidates, merges an agent may make, proposals for the ones it may not."""

from __future__ import annotations

import pytest

from tests.conftest import Tenant
from tests.mcp.client import McpClient
from tests.mcp.conftest import Connect, WriteMemory

pytestmark = [pytest.mark.django_db, pytest.mark.real_embedder]

RULE = "Every pull request needs one approving review before it is merged."


def test_without_ids_it_lists_the_duplicates_of_recent_writes(agent: McpClient, write_memory: WriteMemory) -> None:
    first = write_memory(current_content=RULE)
    second = write_memory(current_content=RULE.lower() + "!")
    write_memory(current_content="The HTTP client timeout is 30 seconds.")
    write_memory(current_content="The HTTP client timeout is 60 seconds.")

    clusters = agent.ok("memory-consolidate", {})["clusters"]

    duplicate = next(c for c in clusters if c["kind"] == "duplicate")
    assert set(duplicate["memory_ids"]) == {first["id"], second["id"]} and duplicate["exact"] is True
    contradiction = next(c for c in clusters if c["kind"] == "contradiction")
    assert contradiction["differences"]["numbers"]


def test_an_agent_merges_with_its_own_text_and_the_history_says_why(
    agent: McpClient, write_memory: WriteMemory
) -> None:
    first = write_memory(current_content=RULE, tags=["review"])
    second = write_memory(current_content="PRs need an approving review before merge.", tags=["github"])

    preview = agent.ok("memory-consolidate", {"memory_ids": [first["id"], second["id"]], "dry_run": True})
    assert preview["outcome"] == "preview" and agent.ok("memory-get", {"id": second["id"]})["status"] == "draft"

    merged = agent.ok(
        "memory-consolidate",
        {
            "memory_ids": [first["id"], second["id"]],
            "survivor_id": first["id"],
            "content": "Every pull request needs one approving review before merge.",
            "reason": "same rule twice",
        },
    )

    assert merged["outcome"] == "merged"
    assert merged["survivor"]["id"] == first["id"]
    assert merged["survivor"]["current_content"] == "Every pull request needs one approving review before merge."
    assert set(merged["survivor"]["tags"]) == {"review", "github"}
    gone = agent.ok("memory-get", {"id": second["id"]})
    assert (gone["status"], gone["superseded_by"]) == ("deprecated", first["id"])
    assert [m["id"] for m in agent.ok("memory-search", {"query": "approving review pull request"})] == [first["id"]]
    assert merged["proposal_id"]  # what a curator undoes it by
    history = agent.ok("memory-history", {"id": first["id"]})["versions"]
    assert history[0]["reason"] == "same rule twice"


def test_reviewed_memories_become_a_proposal_for_curators(
    agent: McpClient, curator: McpClient, write_memory: WriteMemory
) -> None:
    first = write_memory(current_content=RULE)
    second = write_memory(current_content=RULE + " No exceptions.")
    curator.ok("memory-update", {"id": first["id"], "status": "verified"})

    answer = agent.ok("memory-consolidate", {"memory_ids": [first["id"], second["id"]], "content": "merged text"})

    assert answer["outcome"] == "proposed"
    assert "needs a curator" in answer["message"] and answer["proposal_id"]
    assert agent.ok("memory-get", {"id": second["id"]})["status"] == "draft"


def test_bad_calls_say_what_to_fix(agent: McpClient, write_memory: WriteMemory) -> None:
    memory = write_memory()

    assert "2 to 50" in agent.error("memory-consolidate", {"memory_ids": [memory["id"]]})
    assert "not found" in agent.error(
        "memory-consolidate", {"memory_ids": [memory["id"], "00000000-0000-4000-8000-000000000000"]}
    )


def test_readers_and_outsiders_merge_nothing(
    agent: McpClient, outsider: McpClient, connect: Connect, write_memory: WriteMemory, acme: Tenant
) -> None:
    first, second = write_memory(current_content=RULE), write_memory(current_content=RULE.upper())
    reader = connect(acme.raw_tokens["reader"])

    assert "role" in reader.error("memory-consolidate", {"memory_ids": [first["id"], second["id"]]})
    assert "not found" in outsider.error("memory-consolidate", {"memory_ids": [first["id"], second["id"]]})
    assert outsider.ok("memory-consolidate", {})["clusters"] == []
    assert agent.ok("memory-get", {"id": second["id"]})["status"] == "draft"
