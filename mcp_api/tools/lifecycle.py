"""memory-consolidate: merge duplicates now, or find them, or hand the merge to curators."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from lifecycle.selectors import duplicate_candidates
from lifecycle.services import memories_consolidate
from mcp_api.payloads import memory_payload
from mcp_api.server import tool
from organizations.principal import Principal


@tool(
    "memory-consolidate",
    title="Merge duplicate memories",
    description=(
        "Without `memory_ids`: the duplicates and contradiction candidates among the memories you can see "
        "(open proposals first, then what the latest writes look like), as clusters with their similarity, "
        "about 20 a page: pass `next_cursor` back as `cursor` for the next page. "
        "With `memory_ids` (2-50): merge them now. One survives (`survivor_id`, or the most reviewed, important "
        "and used one); the others are kept but superseded by it; it takes their tags, the highest importance "
        "and their metadata; pass `content` to write the merged text yourself (nothing is truncated or lost: "
        "the old texts stay in the superseded memories and their history). A curator can undo any merge. "
        "Locked or verified memories are only merged by curators: then the call files a proposal for one and "
        "says so. `dry_run` shows what would happen without changing anything."
    ),
)
def memory_consolidate(
    principal: Principal,
    *,
    memory_ids: Annotated[
        list[str] | None, Field(description="The memories to merge (2 to 50 ids); omit to list candidates.")
    ] = None,
    survivor_id: Annotated[str | None, Field(description="The memory that stays (one of memory_ids).")] = None,
    content: Annotated[str | None, Field(description="The merged text for the survivor (optional).")] = None,
    dry_run: Annotated[bool, Field(description="Only say what would happen.")] = False,
    reason: Annotated[str | None, Field(description="Why they are duplicates (kept in the history).")] = None,
    cursor: Annotated[
        str | None, Field(description="Listing only: the next_cursor of the previous page, to go on from there.")
    ] = None,
) -> dict[str, Any]:
    if not memory_ids:
        found = duplicate_candidates(principal, cursor=cursor)
        clusters = found.clusters
        return {
            "clusters": [
                {
                    "kind": cluster.kind,
                    "memory_ids": [str(pk) for pk in cluster.memory_ids],
                    "similarity": cluster.similarity,
                    "exact": cluster.exact,
                    "proposal_id": str(cluster.proposal_id) if cluster.proposal_id else None,
                    **({"differences": cluster.differences} if cluster.differences else {}),
                }
                for cluster in clusters
            ],
            "next_cursor": found.next_cursor,
            "hint": "pass memory_ids of one duplicate cluster to merge it; contradictions need a decision, not a merge",
        }
    done = memories_consolidate(
        principal=principal,
        memory_ids=memory_ids,
        survivor_id=survivor_id,
        content=content,
        dry_run=dry_run,
        reason=reason or "",
    )
    answer: dict[str, Any] = {"outcome": done.outcome, "message": done.message}
    if done.proposal is not None:
        answer["proposal_id"] = str(done.proposal.pk)
    if done.survivor is not None:
        answer["survivor"] = memory_payload(done.survivor)
        answer["superseded"] = [str(memory.pk) for memory in done.superseded]
    if done.result:
        answer["result"] = done.result
    return answer
