"""Who may write what: the role, scope and status rules every memory write checks."""

from __future__ import annotations

from memories.models import Memory, ScopeType, Status
from memory_platform.exceptions import Conflict, Locked, PermissionDenied, ValidationError
from organizations.models import Role
from organizations.principal import Principal

AGENT_STATUSES = frozenset({Status.DRAFT, Status.ACTIVE})


def check_can_write(principal: Principal) -> None:
    principal.require(Role.AGENT, "writing memories")


def check_scope(principal: Principal, scope_type: str) -> None:
    if scope_type == ScopeType.SYSTEM and not principal.is_superuser:
        raise PermissionDenied(
            "only platform administrators may write system-scope memories; "
            "use scope_type 'organization' for knowledge shared across your organization"
        )
    if scope_type == ScopeType.USER and principal.user is None:
        raise ValidationError(
            "user-scope memories belong to a person, and this token has no user; "
            "use scope_type 'organization' or 'repository', or a personal token",
            details={"field": "scope_type"},
        )


def check_status_allowed(principal: Principal, new_status: str, current: str | None = None) -> None:
    if principal.has_role(Role.CURATOR):
        return
    if new_status not in AGENT_STATUSES:
        raise PermissionDenied(
            f"setting status '{new_status}' needs the curator role; agents may use 'draft' or 'active'. "
            "Ask a curator to verify, lock or deprecate it."
        )
    if current is not None and current not in AGENT_STATUSES:
        raise PermissionDenied(f"this memory is '{current}'; only a curator can move it back to '{new_status}'")


def check_mutable(principal: Principal, memory: Memory, action: str) -> None:
    if memory.status == Status.LOCKED and not principal.has_role(Role.CURATOR):
        raise Locked(
            f"memory {memory.id} is locked; {action} needs a curator. "
            "Ask a curator to unlock it, or write a new draft memory that proposes the change."
        )
    if memory.scope_type == ScopeType.SYSTEM and not principal.is_superuser:
        raise PermissionDenied(f"memory {memory.id} is a system memory; only platform administrators may change it")


def check_writable(principal: Principal, memory: Memory) -> None:
    """A superseded memory is not changed (its survivor is); a deprecated one only by a curator."""
    if memory.superseded_by_id is not None:
        raise Conflict(
            f"memory {memory.id} was superseded by memory {memory.superseded_by_id}; change that one instead "
            "(a curator can undo the merge or reactivate this one)",
            details={"superseded_by": str(memory.superseded_by_id)},
        )
    if memory.status == Status.DEPRECATED and not principal.has_role(Role.CURATOR):
        raise Conflict(
            f"memory {memory.id} is deprecated; write a new memory, or ask a curator to reactivate it",
            details={"status": memory.status},
        )
