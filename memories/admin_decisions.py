"""What a curator can decide about a memory in the admin, and the page that asks why.

Every decision (verify, lock, unlock, deprecate, reactivate, delete, restore) first shows a page
listing the memories it applies to and what changes for each ("draft → verified"), asks for a
reason, and only then calls the service, which keeps the reason in the new version and the audit
event. The same page serves the list's bulk actions and the buttons on a memory's page.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.http import HttpRequest
from django.template.response import TemplateResponse

from memories import decisions, workflow
from memories.models import Memory, MemoryVersion
from memory_platform import reasons
from memory_platform.exceptions import DomainError
from memory_platform.reasons import confirmation
from organizations.selectors import principal_for_user


@dataclass(frozen=True)
class Decision:
    """A decision of the workflow's table (memories.workflow) as the admin offers it."""

    name: str
    label: str  # the button
    done: str  # the message: "Verified 3 memories."
    service: Callable[..., Memory]
    applies: Callable[[Memory], bool]
    outcome: Callable[[Memory], str]  # what the memory becomes


def _outcome(name: str) -> Callable[[Memory], str]:
    if name == "reactivate":
        return decisions.reactivated_status
    if name == "restore":
        return lambda memory: f"restored ({memory.status})"
    becomes = workflow.decision(name).becomes
    return lambda memory: becomes


_SERVICES: dict[str, Callable[..., Memory]] = {
    "verify": decisions.memory_verify,
    "lock": decisions.memory_lock,
    "unlock": decisions.memory_unlock,
    "deprecate": decisions.memory_deprecate,
    "reactivate": decisions.memory_reactivate,
    "delete": decisions.memory_delete,
    "restore": decisions.memory_restore,
}
DECISIONS: dict[str, Decision] = {
    name: Decision(name, rule.label, rule.done, _SERVICES[name], rule.applies, _outcome(name))
    for name, rule in workflow.DECISIONS.items()
}


def decisions_for(memory: Memory) -> list[Decision]:
    """The buttons a memory's page shows."""
    return [decision for decision in DECISIONS.values() if decision.applies(memory)]


@dataclass(frozen=True)
class Row:
    memory: Memory
    before: str
    after: str | None  # None: the decision does not apply (nothing will change)


def _rows(memories: Iterable[Memory], decision: Decision) -> list[Row]:
    return [
        Row(
            memory=memory,
            before="deleted" if memory.deleted_at else memory.status,
            after=decision.outcome(memory) if decision.applies(memory) else None,
        )
        for memory in memories
    ]


def decide(
    request: HttpRequest, memories: list[Memory], decision: Decision, *, action: str | None = None
) -> TemplateResponse | None:
    """The reason page, or (once a reason was posted) the decision carried out with it.

    ``action``: the changelist action this page answers (bulk), whose form fields it posts back;
    None for a memory's own page, which posts to itself. Returns None when done: the caller
    redirects (the changelist does so itself).
    """
    confirmed = confirmation(request, "each memory's history and in the audit log")
    if confirmed.reason:
        _carry_out(request, memories, decision, confirmed.reason)
        return None
    rows = _rows(memories, decision)
    return TemplateResponse(
        request,
        "admin/memories/memory/confirm_decision.html",
        {
            **admin.site.each_context(request),
            "opts": Memory._meta,
            "title": f"{decision.label} {len(memories)} memor{'y' if len(memories) == 1 else 'ies'}?",
            "decision": decision,
            "rows": rows,
            "changing": sum(1 for row in rows if row.after is not None),
            "action": action,
            "error": confirmed.error,
            "reason": request.POST.get("reason", ""),
            "reason_max": reasons.REASON_MAX_CHARS,
            "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
            "select_across": request.POST.get("select_across", "0"),
        },
    )


def _carry_out(request: HttpRequest, memories: list[Memory], decision: Decision, reason: str) -> None:
    done = 0
    for memory in memories:
        if not decision.applies(memory):
            continue
        try:
            principal = principal_for_user(user=request.user, organization=memory.organization)  # type: ignore[arg-type]
            decision.service(principal=principal, memory_id=memory.pk, reason=reason)
            done += 1
        except DomainError as error:
            messages.error(request, f"{memory.title}: {error.message}")
    if done:
        noun = "memory" if done == 1 else "memories"
        messages.success(request, f"{decision.done} {done} {noun}. Reason kept: “{reason}”")


def status_since(memory: Memory) -> MemoryVersion | None:
    """The version that gave the memory its current status: who, when and why (for the banner)."""
    statuses = memory.versions.order_by("-version").values_list("version", "snapshot__status")
    since: int | None = None
    for number, status in statuses:
        if status != memory.status:
            break
        since = number
    if since is None:
        return None
    return memory.versions.select_related("token", "user").get(version=since)
