"""The curation workflow in one table: which decision applies to a memory in which state, what it
becomes, and who may take it. The services check it, the admin's buttons and confirmation pages read
it, and the docs print it (``table_markdown``), so the three cannot disagree.

Edits (memory-update, PATCH, the admin's form) are not decisions: below the curator role they change
draft and active memories only, a locked one never, and a change to a verified one makes it
unreviewed again (memories.trust). Statuses an agent sets itself (draft, active) go through the write
policy, not this table.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from memories.models import Memory, Status
from memory_platform.exceptions import Conflict
from organizations.models import Role
from organizations.principal import Principal

DELETED = "deleted"


def state(memory: Memory) -> str:
    """A memory's state as the table reads it: its status, or "deleted"."""
    return DELETED if memory.deleted_at is not None else memory.status


@dataclass(frozen=True)
class Decision:
    name: str
    label: str  # the button
    done: str  # the message: "Verified 3 memories."
    doing: str  # as a refusal names it: "verifying a memory"
    role: str  # the least role that may take it
    sources: frozenset[str]  # the states it applies to
    becomes: str  # what the memory becomes, as people read it
    instead: str  # what to do when it does not apply
    who: str = ""  # as the docs say who may take it, when the role alone does not (locked memories)

    def applies(self, memory: Memory) -> bool:
        return state(memory) in self.sources

    def check(self, principal: Principal, memory: Memory) -> None:
        """Refuse a decision its taker may not take, or one that does not apply, saying what instead."""
        principal.require(self.role, self.doing)
        if not self.applies(memory):
            now = state(memory)
            if len(self.sources) == 1:
                said = f"memory {memory.pk} is not {next(iter(self.sources))} (it is {now}): {self.instead}"
            else:
                said = (
                    f"memory {memory.pk} is {now}: '{self.name}' applies to {', '.join(sorted(self.sources))} "
                    f"memories; {self.instead}"
                )
            raise Conflict(said, details={"status": now, "decision": self.name})


_ALIVE = frozenset({Status.DRAFT, Status.ACTIVE, Status.VERIFIED, Status.LOCKED, Status.DEPRECATED})
DECISIONS: dict[str, Decision] = {
    decision.name: decision
    for decision in (
        Decision("verify", "Verify", "Verified", "verifying a memory", Role.CURATOR,
                 frozenset({Status.DRAFT, Status.ACTIVE}), Status.VERIFIED,
                 "a locked one is verified already (unlock it to let it change again); reactivate a deprecated one"),
        Decision("lock", "Lock", "Locked", "locking a memory", Role.CURATOR,
                 frozenset({Status.DRAFT, Status.ACTIVE, Status.VERIFIED}), Status.LOCKED,
                 "reactivate a deprecated one first"),
        Decision("unlock", "Unlock", "Unlocked", "unlocking a memory", Role.CURATOR, frozenset({Status.LOCKED}),
                 Status.VERIFIED, "there is nothing to unlock"),
        Decision("deprecate", "Deprecate", "Deprecated", "deprecating a memory", Role.CURATOR,
                 _ALIVE - {Status.DEPRECATED}, Status.DEPRECATED, "it is deprecated already"),
        Decision("reactivate", "Reactivate", "Reactivated", "reactivating a deprecated memory", Role.CURATOR,
                 frozenset({Status.DEPRECATED}), "its status before it was deprecated (verified if none)",
                 "it is in force already"),
        Decision("delete", "Delete", "Deleted", "deleting a memory", Role.AGENT, _ALIVE,
                 "deleted (kept, can be restored)", "it is deleted already; a curator can restore it",
                 who="agent and up; a locked one, curator and up"),
        Decision("restore", "Restore", "Restored", "restoring a deleted memory", Role.CURATOR, frozenset({DELETED}),
                 "its status before deletion", "there is nothing to restore"),
    )
}  # fmt: skip


def decision(name: str) -> Decision:
    return DECISIONS[name]


def decisions_for(memory: Memory, allowed: Callable[[str], bool] = lambda role: True) -> list[Decision]:
    """The decisions that apply to a memory (and that ``allowed`` lets its taker take)."""
    return [d for d in DECISIONS.values() if d.applies(memory) and allowed(d.role)]


def table_markdown() -> str:
    """The table as the docs print it."""
    rows = ["| decision | applies to | becomes | who |", "|---|---|---|---|"]
    for d in DECISIONS.values():
        rows.append(f"| {d.name} | {', '.join(sorted(d.sources))} | {d.becomes} | {d.who or d.role + ' and up'} |")
    return "\n".join(rows)


# The statuses that are a curator's decision to set.
STATUS_DECISIONS: dict[str, str] = {Status.VERIFIED: "verify", Status.LOCKED: "lock", Status.DEPRECATED: "deprecate"}
