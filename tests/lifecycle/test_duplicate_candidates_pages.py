"""memory-consolidate's listing comes in pages: open proposals, then the latest writes, each page
bounded in clusters and in time, the next one reached with its cursor; nothing repeated or lost."""

from __future__ import annotations

from typing import Any

import pytest

from lifecycle import selectors
from lifecycle.selectors import Cluster, duplicate_candidates
from lifecycle.services import proposal_create
from memory_platform.exceptions import ValidationError
from tests.conftest import MemoryFactory, Tenant
from tests.mcp.inprocess import InProcessMcpClient

pytestmark = [pytest.mark.django_db, pytest.mark.real_embedder]

# Five statements about different things, each written twice (the second time in other case and
# punctuation): five exact duplicates, nothing else alike.
STATEMENTS = [
    "Every pull request needs one approving review before it is merged.",
    "The billing service stores money as integer cents.",
    "Staging is rebuilt from scratch each night by the platform team.",
    "Customer emails are answered within one business day.",
    "Secrets live in the vault and never in the repository.",
]


@pytest.fixture
def pairs(acme: Tenant, make_memory: MemoryFactory) -> list[frozenset[str]]:
    written = []
    for text in STATEMENTS:
        first = make_memory(current_content=text)
        second = make_memory(current_content=text.upper().rstrip(".") + "!")
        written.append(frozenset({str(first.pk), str(second.pk)}))
    return written


def _all_pages(acme: Tenant, *, limit: int) -> list[list[Cluster]]:
    pages, cursor = [], None
    for _ in range(20):
        found = duplicate_candidates(acme.agent, limit=limit, cursor=cursor)
        pages.append(found.clusters)
        cursor = found.next_cursor
        if cursor is None:
            return pages
    raise AssertionError("the listing never ended")


def _pairs_of(pages: list[list[Cluster]]) -> list[frozenset[str]]:
    return [frozenset(str(pk) for pk in cluster.memory_ids) for page in pages for cluster in page]


def test_pages_list_proposals_then_recent_writes_each_once(
    acme: Tenant, pairs: list[frozenset[str]], make_memory: MemoryFactory
) -> None:
    timeout = [make_memory(current_content=f"The HTTP timeout is {n} seconds.", status="active") for n in (30, 60)]
    proposal, _ = proposal_create(
        organization_id=acme.organization.pk, kind="contradiction", memory_ids=[m.pk for m in timeout],
        created_by="consolidation", evidence={"similarity": 0.93},
    )  # fmt: skip
    assert proposal is not None

    pages = _all_pages(acme, limit=2)

    found = _pairs_of(pages)
    assert found[0] == frozenset(str(m.pk) for m in timeout)  # the open proposal comes first
    assert pages[0][0].proposal_id == proposal.pk
    assert len(found) == len(set(found)), "a cluster was listed twice"
    assert set(pairs) <= set(found)
    assert all(0 < len(page) <= 2 for page in pages[:-1]) and len(pages) >= 3


def test_a_page_out_of_time_still_moves_on(
    acme: Tenant, pairs: list[frozenset[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no time at all, each page looks at one chunk of writes, and the cursor goes on from it."""
    monkeypatch.setattr(selectors, "LISTING_SECONDS", 0.0)
    monkeypatch.setattr(selectors, "CANDIDATE_CHUNK", 2)

    pages = _all_pages(acme, limit=20)

    assert len(pages) > 1
    assert set(pairs) <= set(_pairs_of(pages))


@pytest.mark.parametrize(
    ("cursor", "said"),
    [
        ("not-a-cursor", "pass back the next_cursor"),
        ("eyJmIjoiMDAwMDAwMDAwMDAwMDAwMCIsImsiOltdLCJwIjoicmVjZW50In0", "different search"),
        ("\x00", "pass back the next_cursor"),
    ],
)
def test_a_bad_cursor_says_what_to_pass(acme: Tenant, cursor: str, said: str) -> None:
    with pytest.raises(ValidationError, match=said):
        duplicate_candidates(acme.agent, cursor=cursor)


def test_over_mcp_the_listing_says_whether_more_follow(
    acme: Tenant, pairs: list[frozenset[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(selectors, "CANDIDATES_PER_PAGE", 3)
    agent = InProcessMcpClient(acme.raw_tokens["agent"])

    first: dict[str, Any] = agent.ok("memory-consolidate", {})
    second = agent.ok("memory-consolidate", {"cursor": first["next_cursor"]})

    assert len(first["clusters"]) == 3 and first["next_cursor"]
    listed = [frozenset(c["memory_ids"]) for c in first["clusters"] + second["clusters"]]
    assert len(listed) == len(set(listed)) == 5 and set(listed) == set(pairs)
    assert second["next_cursor"] is None
    assert "next_cursor" in agent.error("memory-consolidate", {"cursor": "garbage"})


def test_another_organization_following_a_cursor_sees_none_of_its_memories(
    acme: Tenant, globex: Tenant, pairs: list[frozenset[str]]
) -> None:
    cursor = duplicate_candidates(acme.agent, limit=2).next_cursor
    assert cursor is not None

    theirs = duplicate_candidates(globex.admin, limit=2, cursor=cursor)

    assert theirs.clusters == []
