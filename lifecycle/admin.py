"""Curators' view of what the lifecycle workers propose, and of their runs.

Apply, dismiss and undo go through the same services as REST, ask for a reason on a page that
lists what will change, and record that reason in every version and audit event.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.db.models import QuerySet
from django.http import HttpRequest
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.timesince import timesince

from lifecycle.merge import REASON_MAX, proposal_undo
from lifecycle.models import ConsolidationProposal, LifecycleRun, ProposalState, with_members
from lifecycle.selectors import naming
from lifecycle.services import proposal_apply, proposal_dismiss
from memories.admin_parts import hidden_from, memory_label
from memories.models import Memory
from memories.selectors import memories_personal_to_others
from memory_platform.exceptions import DomainError
from memory_platform.reasons import confirmation
from memory_platform.timefmt import iso
from organizations.admin_audit import Target, admin_url, audit_target, uuid_ids
from organizations.admin_scoping import OrganizationScopedAdmin
from organizations.selectors import principal_for_user

Decision = Callable[..., ConsolidationProposal]


@admin.register(ConsolidationProposal)
class ConsolidationProposalAdmin(OrganizationScopedAdmin):
    # Two columns a person reads at a glance, between the admin's sidebar and the filters: what is
    # proposed (its memories one per line, the suggested survivor starred; how alike they are, who
    # found it, when) and what became of it (or the button to decide it).
    list_display = ("proposal", "outcome")
    list_display_links = ("proposal",)
    list_filter = ("state", "kind")
    ordering = ("-created_at",)
    actions = ["apply_proposals", "dismiss_proposals", "undo_proposals"]
    readonly_fields = (
        "organization", "kind", "state", "members", "survivor", "evidence", "applied", "run",
        "created_at", "created_by", "decided_at", "decided_by", "reason",
    )  # fmt: skip
    fields = readonly_fields

    def get_queryset(self, request: HttpRequest) -> QuerySet[ConsolidationProposal]:
        queryset = super().get_queryset(request).prefetch_related(with_members())
        if request.user.is_superuser:
            return queryset
        # A proposal naming someone else's personal memory is not shown at all.
        return queryset.exclude(naming(memories_personal_to_others(request.user)))

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # decided by the actions, never edited

    @admin.display(description="memories")
    def members(self, obj: ConsolidationProposal) -> str:
        return format_html_join(
            "", "<div>{}{}</div>", ((("★ " if m.pk == obj.survivor_id else ""), m.title) for m in _survivor_first(obj))
        )

    @admin.display(description="proposal", ordering="created_at")
    def proposal(self, obj: ConsolidationProposal) -> str:
        similarity = obj.evidence.get("similarity")
        alike = f"similarity {similarity:.3f} · " if isinstance(similarity, int | float) else ""
        return format_html(
            '<strong class="proposal-kind">{}</strong><div class="proposal-members">{}</div>'
            '<small class="proposal-found">{}found by {} <span title="{}">{} ago</span></small>',
            obj.get_kind_display(), self.members(obj), alike, obj.created_by, iso(obj.created_at),
            timesince(obj.created_at).split(",")[0],
        )  # fmt: skip

    @admin.display(description="outcome", ordering="state")
    def outcome(self, obj: ConsolidationProposal) -> str:
        chip = format_html('<span class="chip chip-proposal-{}">{}</span>', obj.state, obj.get_state_display())
        if obj.decided_at is None:
            return format_html("{}<br>{}", chip, self.review(obj)) if obj.state == ProposalState.OPEN else chip
        return format_html(
            '{}<br>by {} <small title="{}">{} ago</small>{}',
            chip, obj.decided_by or "unknown", iso(obj.decided_at), timesince(obj.decided_at).split(",")[0],
            format_html('<br><small class="proposal-reason">“{}”</small>', obj.reason) if obj.reason else "",
        )  # fmt: skip

    @admin.display(description="")
    def review(self, obj: ConsolidationProposal) -> str:
        if obj.state != ProposalState.OPEN:
            return ""
        return format_html(
            '<a class="button" href="{}">Review side by side</a>', reverse("admin:review_proposal", args=[obj.pk])
        )

    def _decide(
        self, request: HttpRequest, queryset: QuerySet[ConsolidationProposal], decision: Decision, *, action: str,
        title: str, explanation: str, confirm: str,
    ) -> TemplateResponse | None:  # fmt: skip
        if not self._allowed(request, self.change_role, None):
            self.message_user(request, "Deciding on proposals needs the curator role.", messages.ERROR)
            return None
        confirmed = confirmation(request, "every version and audit event")
        reason = confirmed.reason
        if not reason:
            return TemplateResponse(
                request,
                "admin/lifecycle/confirm_decision.html",
                {
                    **self.admin_site.each_context(request),
                    "opts": self.model._meta,
                    "title": title,
                    "explanation": explanation,
                    "confirm": confirm,
                    "proposals": queryset,
                    "action": action,
                    "error": confirmed.error,
                    "reason_max": REASON_MAX,
                    "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
                },
            )
        done = 0
        for proposal in queryset.select_related("organization"):
            principal = principal_for_user(user=request.user, organization=proposal.organization)  # type: ignore[arg-type]
            try:
                decision(principal=principal, proposal_id=proposal.pk, reason=reason)
                done += 1
            except DomainError as error:
                self.message_user(request, f"{proposal}: {error.message}", messages.ERROR)
        if done:
            self.message_user(request, f"{confirm}: {done} proposal(s).", messages.SUCCESS)
        return None

    @admin.action(description="Apply selected proposals (merge / deprecate)")
    def apply_proposals(
        self, request: HttpRequest, queryset: QuerySet[ConsolidationProposal]
    ) -> TemplateResponse | None:
        return self._decide(
            request, queryset, proposal_apply, action="apply_proposals", title="Apply proposals",
            explanation=(
                "Merges keep the starred memory; the others are superseded by it (kept, deprecated) and it takes "
                "their tags, the highest importance and their metadata. Stale memories are deprecated. "
                "Everything can be undone."
            ),
            confirm="Applied",
        )  # fmt: skip

    @admin.action(description="Dismiss selected proposals (not duplicates)")
    def dismiss_proposals(
        self, request: HttpRequest, queryset: QuerySet[ConsolidationProposal]
    ) -> TemplateResponse | None:
        return self._decide(
            request, queryset, proposal_dismiss, action="dismiss_proposals", title="Dismiss proposals",
            explanation="Nothing changes, and these memories will not be proposed together again.",
            confirm="Dismissed",
        )  # fmt: skip

    @admin.action(description="Undo selected applied proposals")
    def undo_proposals(
        self, request: HttpRequest, queryset: QuerySet[ConsolidationProposal]
    ) -> TemplateResponse | None:
        return self._decide(
            request, queryset, proposal_undo, action="undo_proposals", title="Undo proposals",
            explanation="Every memory these proposals changed goes back exactly as it was before, as a new version.",
            confirm="Undone",
        )  # fmt: skip


@admin.register(LifecycleRun)
class LifecycleRunAdmin(OrganizationScopedAdmin):
    list_display = ("kind", "status", "started_at", "finished_at", "seconds_used", "counted", "errors")
    list_filter = ("kind", "status")
    ordering = ("-started_at",)
    readonly_fields = (
        "organization", "kind", "status", "full", "watermark", "started_at", "finished_at", "counts", "errors",
        "time_budget_seconds", "seconds_used",
    )  # fmt: skip
    fields = readonly_fields

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.display(description="counts")
    def counted(self, obj: LifecycleRun) -> str:
        return obj.counts_summary or self.get_empty_value_display()


@audit_target("consolidation_proposal")
def _proposals(ids: list[str], user: Any) -> dict[str, Target]:
    found = list(ConsolidationProposal.objects.filter(pk__in=uuid_ids(ids)).prefetch_related(with_members()))
    members = [memory.pk for proposal in found for memory in proposal.members]
    hidden = hidden_from(user, members)
    return {
        str(p.pk): Target(
            f"{p.get_kind_display().lower()} proposal: "
            + " / ".join(memory_label(m, hidden) for m in _survivor_first(p)),
            admin_url("admin:lifecycle_consolidationproposal_change", p.pk),
        )
        for p in found
    }


def _survivor_first(proposal: ConsolidationProposal) -> list[Memory]:
    return sorted(proposal.members, key=lambda m: (m.pk != proposal.survivor_id, m.title))
