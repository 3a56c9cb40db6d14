"""The review queue: what waits for a curator, newest and most important first.

Two kinds of item wait: unreviewed memories a curator should decide on (drafts, and active
memories the write policy flagged: an agent's rule, a pin, text addressed to other agents, a change
to a verified memory; memories.trust) and open consolidation proposals (what the lifecycle workers
and the writes' contradiction checks found). Each decision goes through the same
services as MCP and REST, with the curator's reason, and brings the curator back to the queue,
whose first item is then the next one to decide.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from uuid import UUID

from django.contrib import admin, messages
from django.db.models import Exists, OuterRef, QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from lifecycle.models import ConsolidationProposal, ProposalKind, ProposalMemory, ProposalState, with_members
from lifecycle.selectors import naming
from lifecycle.services import proposal_apply, proposal_dismiss
from memories import decisions, validation
from memories.diff import word_ops
from memories.hints import Hint, write_hints
from memories.models import AWAITING_REVIEW, Memory
from memories.selectors import memories_personal_to_others, personal_to_others_q
from memory_platform import reasons
from memory_platform.db.tenancy import outer_organization, same_organization
from memory_platform.exceptions import DomainError
from organizations.admin_scoping import organizations_for
from organizations.models import Organization, Role, User
from organizations.selectors import principal_for_user

PAGE = 25
# What the detection found different between the memories of a proposal (lifecycle.detection).
DIFFERENCE_KINDS = {"numbers": "numbers", "values": "named values", "negations": "negations"}
EXCERPT_CHARS = 280


def memory_author(memory: Memory) -> str:
    """Who wrote the memory's text, as a curator knows them: "ci-bot (agent)", "ana (person)"."""
    return f"{memory.author_name or 'unknown'} ({memory.author_kind})"


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"


# --- what waits --------------------------------------------------------------------------------


def waiting_drafts(user: User | Any, organizations: QuerySet[Organization]) -> QuerySet[Memory]:
    """Unreviewed memories waiting for a curator: every draft, and active ones with review flags.

    A memory an open proposal names waits as part of that proposal, not a second time on its own;
    once the proposal is decided, a memory still unreviewed comes back here.
    """
    in_open_proposal = ProposalMemory.objects.filter(
        same_organization("consolidationproposal"),
        memory_id=OuterRef("pk"),
        organization=outer_organization(),
        consolidationproposal__state=ProposalState.OPEN,
    )
    return (
        Memory.objects.filter(AWAITING_REVIEW, organization__in=organizations)
        .exclude(Exists(in_open_proposal))
        .exclude(personal_to_others_q(user))
        .order_by("-importance", "-created_at", "pk")
    )


def waiting_proposals(user: User | Any, organizations: QuerySet[Organization]) -> QuerySet[ConsolidationProposal]:
    return (
        ConsolidationProposal.objects.filter(organization__in=organizations, state=ProposalState.OPEN)
        .exclude(naming(memories_personal_to_others(user)))
        .order_by("-created_at", "pk")
    )


def waiting_count(request: HttpRequest) -> int:
    """How many items wait in the queue of this person (only curators have a queue)."""
    organizations = organizations_for(request, Role.CURATOR)
    return waiting_drafts(request.user, organizations).count() + waiting_proposals(request.user, organizations).count()


@dataclass
class ReviewItem:
    kind: str  # draft, proposal
    key: str
    organization: Organization
    importance: int
    created_at: datetime
    memory: Memory | None = None
    proposal: ConsolidationProposal | None = None
    members: list[Memory] = field(default_factory=list)
    hints: list[Hint] = field(default_factory=list)
    conflicts: list[Hint] = field(default_factory=list)

    @property
    def flags(self) -> list[dict[str, Any]]:
        return [flag for flag in (self.memory.review_flags if self.memory else []) if isinstance(flag, dict)]

    @property
    def author(self) -> str:
        return memory_author(self.memory) if self.memory is not None else ""

    @property
    def title(self) -> str:
        if self.memory is not None:
            return self.memory.title
        return " / ".join(member.title for member in self.members)


def review_items(
    request: HttpRequest, *, organization: str | None = None, limit: int = PAGE, offset: int = 0
) -> list[ReviewItem]:
    """``limit`` waiting items from ``offset`` on: the most important first, then the newest."""
    organizations = organizations_for(request, Role.CURATOR)
    if organization:
        organizations = organizations.filter(slug=organization)
    # Each kind's first offset + limit hold every item of the merged page.
    wanted = offset + limit
    drafts = list(waiting_drafts(request.user, organizations).select_related("organization", "repository")[:wanted])
    proposals = list(
        waiting_proposals(request.user, organizations)
        .select_related("organization")
        .prefetch_related(with_members("created_by", "created_by_token", "repository"))[:wanted]
    )
    hints = write_hints(drafts)
    items = [
        ReviewItem(
            kind="draft", key=f"draft-{memory.pk}", organization=memory.organization, importance=memory.importance,
            created_at=memory.created_at, memory=memory, hints=hints[memory.pk].possible_duplicates,
            conflicts=hints[memory.pk].conflicts,
        )
        for memory in drafts
    ]  # fmt: skip
    for proposal in proposals:
        members = sorted(proposal.members, key=lambda m: (m.pk != proposal.survivor_id, -m.importance))
        items.append(
            ReviewItem(
                kind="proposal", key=f"proposal-{proposal.pk}", organization=proposal.organization,
                importance=max((m.importance for m in members), default=0), created_at=proposal.created_at,
                proposal=proposal, members=members,
            )
        )  # fmt: skip
    items.sort(key=lambda item: (-item.importance, -item.created_at.timestamp()))
    return items[offset:wanted]


# --- pages -------------------------------------------------------------------------------------

DRAFT_DECISIONS = {
    "verify": ("Verified", decisions.memory_verify),
    "lock": ("Locked", decisions.memory_lock),
    "deprecate": ("Deprecated", decisions.memory_deprecate),
}


def queue_view(request: HttpRequest) -> HttpResponse:
    if not organizations_for(request, Role.CURATOR).exists():
        # Readers and agents decide nothing: their landing page is the dashboard.
        return HttpResponseRedirect(reverse("admin:index"))
    organization = request.GET.get("organization") or None
    page = _page_number(request.GET.get("page"))
    items = review_items(request, organization=organization, offset=(page - 1) * PAGE)
    return TemplateResponse(
        request,
        "admin/curation/review_queue.html",
        {
            **admin.site.each_context(request),
            "title": "Review queue",
            "items": items,
            "organizations": organizations_for(request, Role.CURATOR),
            "organization": organization,
            "reason_max": reasons.REASON_MAX_CHARS,
            "page": page,
            "first_shown": (page - 1) * PAGE + 1,
            "last_shown": (page - 1) * PAGE + len(items),
            "next_page": page + 1 if len(items) == PAGE else None,
            "previous_page": page - 1 if page > 1 else None,
            "here": request.get_full_path(),
        },
    )


def _page_number(value: str | None) -> int:
    """The queue's page from the address: a bad or missing number is the first page."""
    return int(value) if value and value.isdigit() and 0 < int(value) < 10_000 else 1


def _back_to_queue(request: HttpRequest) -> HttpResponseRedirect:
    target = request.POST.get("next") or reverse("admin:review_queue")
    if not url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}):
        target = reverse("admin:review_queue")
    return HttpResponseRedirect(target)


@require_POST
def decide_view(request: HttpRequest) -> HttpResponse:
    """One decision on one draft (verify, lock, deprecate), with the curator's reason."""
    decision = request.POST.get("decision", "")
    if decision not in DRAFT_DECISIONS:
        messages.error(request, f"Unknown decision {decision!r}: choose verify, lock or deprecate.")
        return _back_to_queue(request)
    try:
        memory_id = validation.memory_id(request.POST.get("memory"), "memory")
        reason = reasons.reason(request.POST.get("reason", ""))
    except DomainError as error:
        messages.error(request, error.message)
        return _back_to_queue(request)
    if not reason:
        messages.error(request, "Say why: the reason is kept in the memory's history and the audit log.")
        return _back_to_queue(request)
    organizations = organizations_for(request, Role.CURATOR)
    memory = get_object_or_404(waiting_drafts(request.user, organizations).select_related("organization"), pk=memory_id)
    label, service = DRAFT_DECISIONS[decision]
    try:
        principal = principal_for_user(user=request.user, organization=memory.organization)  # type: ignore[arg-type]
        service(principal=principal, memory_id=memory.pk, reason=reason)
    except DomainError as error:
        messages.error(request, f"{memory.title}: {error.message}")
        return _back_to_queue(request)
    messages.success(request, f"{label} “{memory.title}”. Next item below.")
    return _back_to_queue(request)


# --- one proposal, side by side ------------------------------------------------------------------


@dataclass
class Column:
    memory: Memory
    is_survivor: bool
    ops: list[tuple[str, str]]  # the text's words, marked against the suggested survivor


def proposal_view(request: HttpRequest, proposal_id: UUID) -> HttpResponse:
    """The memories of one proposal side by side, differences marked; apply (choosing the survivor,
    optionally editing the merged text) or dismiss, with a reason."""
    organizations = organizations_for(request, Role.CURATOR)
    proposal = get_object_or_404(
        waiting_proposals(request.user, organizations).select_related("organization"), pk=proposal_id
    )
    members = sorted(proposal.members, key=lambda m: (m.pk != proposal.survivor_id, -m.importance))
    survivor = next((m for m in members if m.pk == proposal.survivor_id), members[0] if members else None)
    error = ""
    if request.method == "POST":
        outcome = _decide_proposal(request, proposal)
        if isinstance(outcome, HttpResponse):
            return outcome
        error = outcome
    base = survivor.current_content if survivor is not None else ""
    columns = [
        Column(memory=m, is_survivor=m.pk == proposal.survivor_id, ops=word_ops(base, m.current_content))
        for m in members
    ]
    return TemplateResponse(
        request,
        "admin/curation/proposal_review.html",
        {
            **admin.site.each_context(request),
            "title": f"{proposal.get_kind_display()} proposal",
            "proposal": proposal,
            "columns": columns,
            "survivor": survivor,
            "merges": proposal.kind != ProposalKind.STALE,
            "differences": differences(proposal.evidence),
            "error": error,
            "posted": request.POST if request.method == "POST" else {},
            "reason_max": reasons.REASON_MAX_CHARS,
        },
    )


def applied_summary(proposal: ConsolidationProposal) -> str:
    """What applying a proposal did, as the curator is told: which memory was kept, which went."""
    members = {memory.pk: memory for memory in proposal.members}
    if proposal.kind == ProposalKind.STALE:
        return f"Deprecated {', '.join(f'“{m.title}”' for m in members.values())}."
    kept = members.get(proposal.survivor_id) if proposal.survivor_id else None
    others = [m for pk, m in members.items() if pk != proposal.survivor_id]
    gone = "; ".join(f"“{m.title}”" for m in others)
    return f"Kept “{kept.title if kept else proposal.survivor_id}”; superseded by it: {gone}."


def differences(evidence: dict[str, Any]) -> list[str]:
    """The detection's differences as a curator reads them: "numbers: 30 in one, 60 in the other"."""

    def said(side: object) -> str:
        return ", ".join(str(item) for item in side) if isinstance(side, list) else str(side)

    found = []
    for key, label in DIFFERENCE_KINDS.items():
        value = evidence.get(key)
        if isinstance(value, dict):
            found.append(f"{label}: {said(value.get('first'))} in one, {said(value.get('second'))} in the other")
    return found


def _decide_proposal(request: HttpRequest, proposal: ConsolidationProposal) -> HttpResponse | str:
    """Apply or dismiss; a redirect to the queue when done, else the message to show on the page."""
    decision = request.POST.get("decision", "")
    principal = principal_for_user(user=request.user, organization=proposal.organization)  # type: ignore[arg-type]
    try:
        reason = reasons.reason(request.POST.get("reason", ""))
        if not reason:
            return "Say why: the reason is kept in every version and audit event this decision writes."
        if decision == "apply":
            content = request.POST.get("content", "")
            applied = proposal_apply(
                principal=principal,
                proposal_id=proposal.pk,
                survivor_id=request.POST.get("survivor") or None,
                content=content if content.strip() and request.POST.get("edit") == "on" else None,
                reason=reason,
            )
            messages.success(request, f"{applied_summary(applied)} Next item below.")
        elif decision == "dismiss":
            proposal_dismiss(principal=principal, proposal_id=proposal.pk, reason=reason)
            messages.success(request, "Dismissed the proposal: these memories will not be proposed together again.")
        else:
            return f"Unknown decision {decision!r}: apply or dismiss."
    except DomainError as error:
        return error.message
    return HttpResponseRedirect(reverse("admin:review_queue"))
