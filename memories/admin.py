"""Curators' view of memories. Every change goes through the same services as MCP and REST, so
the admin obeys the same rules (roles, locked memories) and writes versions and audit events."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import admin, messages
from django.contrib.admin.utils import display_for_value
from django.contrib.admin.views.main import SEARCH_VAR
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html, format_html_join
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.timesince import timesince

from memories import admin_history
from memories.admin_decisions import DECISIONS, Decision, decide, decisions_for, status_since
from memories.admin_parts import (
    EDITABLE_FIELDS,
    HIDDEN_MEMORY,
    MemoryAdminForm,
    MemoryVersionInline,
    ShownFilter,
    hidden_from,
)
from memories.admin_search import MeaningSearch
from memories.models import IMPORTANCE_MAX, Memory
from memories.selectors import personal_to_others_q
from memories.trust import is_pinned, review_payload
from organizations.admin_audit import Target, admin_url, audit_target, uuid_ids
from organizations.admin_scoping import OrganizationScopedAdmin, organizations_for


@admin.register(Memory)
class MemoryAdmin(MeaningSearch, OrganizationScopedAdmin):
    form = MemoryAdminForm
    list_display = ["title_and_excerpt", "importance_shown", "written"]
    list_display_links = ["title_and_excerpt"]
    list_filter = [ShownFilter, "status", "scope_type", "memory_type", "importance", "organization"]
    search_fields = ["title", "current_content", "tags"]
    search_help_text = (
        "By meaning: ask a question or describe what you look for; the best matches come first (the same search "
        "agents use). By words: memories whose title, text or tags contain every word."
    )
    list_select_related = ["organization", "repository"]
    list_per_page = 50
    date_hierarchy = "created_at"
    # knowledge/admin.py adds the links and facts: knowledge builds on memories, not the reverse.
    inlines = [MemoryVersionInline]
    readonly_fields = [
        "id",
        "version",
        "author_kind",
        "author_name",
        "reviewed_by",
        "reviewed_at",
        "review_flags",
        "owner",
        "created_at",
        "created_by",
        "created_by_token",
        "updated_at",
        "updated_by",
        "updated_by_token",
        "deleted_at",
        "lineage",
        "access_count",
        "last_accessed_at",
        "freshness",
        "embedding_status",
        "embedding_model",
    ]
    actions = [f"{name}_selected" for name in DECISIONS]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Memory]:
        queryset = super().get_queryset(request)
        if request.user.is_superuser:
            return queryset
        # Personal (user-scope) memories stay personal, even to curators.
        return queryset.exclude(personal_to_others_q(request.user))

    # --- the list -------------------------------------------------------------------------------

    @admin.display(description="memory", ordering="title")
    def title_and_excerpt(self, obj: Memory) -> str:
        """Three short lines: the title, the start of the text, then type, scope and tags."""
        text = " ".join(obj.current_content.split())
        scope = f"repository {obj.repository.slug}" if obj.repository else obj.get_scope_type_display().lower()
        return format_html(
            '<span class="memory-title" title="{}">{}</span><span class="memory-excerpt">{}</span>'
            '<span class="memory-meta">{} {} · {} {}</span>',
            obj.title, obj.title, text[:200], self.status_chip(obj), obj.get_memory_type_display(), scope,
            self.tag_list(obj),
        )  # fmt: skip

    @staticmethod
    def status_chip(obj: Memory) -> str:
        status = "deleted" if obj.deleted_at else obj.status
        return format_html('<span class="chip chip-{}">{}</span>', status, status)

    @staticmethod
    def tag_list(obj: Memory) -> str:
        chips = format_html_join(" ", '<span class="chip chip-tag">{}</span>', ((tag,) for tag in obj.tags[:3]))
        if len(obj.tags) <= 3:
            return chips
        return format_html('{} <span class="chip chip-tag" title="{}">+{}</span>', chips, ", ".join(obj.tags[3:]),
                           len(obj.tags) - 3)  # fmt: skip

    @admin.display(description="importance", ordering="importance")
    def importance_shown(self, obj: Memory) -> str:
        chip = format_html('<br><span class="chip chip-tag">pinned</span>') if is_pinned(obj.tags, obj.metadata) else ""
        return format_html(
            '<span class="importance" title="importance {} of {}">{}</span>{}',
            obj.importance, IMPORTANCE_MAX, obj.importance, chip,
        )  # fmt: skip

    @admin.display(description="match")
    def match(self, obj: Memory) -> str:
        """How well the memory answers the search by meaning (the search's relevance, 1 is best)."""
        score = getattr(obj, "search_score", None)
        return f"{score:.2f}" if isinstance(score, float) else self.get_empty_value_display()

    @admin.display(description="written", ordering="updated_at")
    def written(self, obj: Memory) -> str:
        """Who wrote the memory's text (an agent's token name, a person, the platform), how far curators
        stand behind it, and when it last changed."""
        review = review_payload(obj)
        standing = (
            format_html('<span class="chip chip-{}">{} by {}</span>', review["state"], review["state"], review["by"])
            if review["by"]
            else format_html('<span class="chip chip-{}">{}</span>', review["state"], review["state"])
        )
        ago = timesince(obj.updated_at).split(",")[0]
        return format_html(
            '{} <small>({})</small><br>{}<br><small title="{}">changed {} ago</small>',
            obj.author_name or "unknown", obj.author_kind, standing, obj.updated_at.isoformat(), ago,
        )  # fmt: skip

    def get_list_display(self, request: HttpRequest) -> Any:
        columns = list(super().get_list_display(request))
        if request.user.is_superuser or organizations_for(request).count() > 1:
            columns.insert(1, "organization")
        if self._search_mode(request) == "meaning" and request.GET.get(SEARCH_VAR, "").strip():
            columns.insert(1, "match")
        return columns

    # --- one memory's page --------------------------------------------------------------------

    @admin.display(description="access count")
    def access_count(self, obj: Memory) -> str:
        return str(display_for_value(obj.access_count, self.get_empty_value_display()))

    @admin.display(description="last read")
    def last_accessed_at(self, obj: Memory) -> str:
        return str(display_for_value(obj.last_accessed_at, self.get_empty_value_display()))

    @admin.display(description="freshness")
    def freshness(self, obj: Memory) -> str:
        value = obj.freshness
        if value is None:
            return "not computed yet (the daily decay run computes it)"
        return (
            f"{value:.2f}: 1 means in use today, 0.5 one half-life ({settings.DECAY_HALF_LIFE_DAYS:g} days) without a "
            "read or a change; each doubling of its reads adds a half-life. Reviewed memories, rules, conventions "
            "and decisions stay at 1. A signal for curators, never a ranking weight."
        )

    @admin.display(description="lineage")
    def lineage(self, obj: Memory) -> str:
        parts = []
        if obj.superseded_by_id is not None:
            url = reverse("admin:memories_memory_change", args=[obj.superseded_by_id])
            parts.append(format_html('Replaced by <a href="{}">{}</a>.', url, obj.superseded_by))
        replaced = list(obj.supersedes.order_by("-updated_at").values_list("pk", "title")[:20])
        if replaced:
            links = format_html_join(
                ", ", '<a href="{}">{}</a>',
                ((reverse("admin:memories_memory_change", args=[pk]), title) for pk, title in replaced),
            )  # fmt: skip
            parts.append(format_html("Replaces {}.", links))
        return format_html_join(" ", "{}", ((part,) for part in parts)) if parts else "Replaces nothing; not replaced."

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        if obj is None:
            return ["organization", *EDITABLE_FIELDS, "reason", *self.readonly_fields]
        # A memory's status changes by its decision buttons (each with its reason page), not by a select.
        return [*self._fields_changed_here, "reason", "status", *self.readonly_fields]

    _fields_changed_here = [field for field in EDITABLE_FIELDS if field != "status"]

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        readonly = list(super().get_readonly_fields(request, obj))
        return readonly if obj is None else ["status", *readonly]

    @staticmethod
    def _back_to(request: HttpRequest) -> str:
        """Where the page was opened from (the review queue), if it said so and is one of ours."""
        back_to = request.POST.get("next") or request.GET.get("next") or ""
        return back_to if url_has_allowed_host_and_scheme(back_to, allowed_hosts={request.get_host()}) else ""

    def response_change(self, request: HttpRequest, obj: Memory) -> HttpResponse:
        # Edited from the review queue: back to it, whose first item is then the next to decide.
        back_to = self._back_to(request)
        stays = any(key in request.POST for key in ("_continue", "_addanother", "_saveasnew"))
        if back_to and not stays:
            self.message_user(request, f"Saved “{obj.title}”.", messages.SUCCESS)
            return HttpResponseRedirect(back_to)
        return super().response_change(request, obj)

    def get_form(self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any) -> Any:
        form_class = super().get_form(request, obj, change=change, **kwargs)
        return type(form_class.__name__, (form_class,), {"request": request})

    def save_form(self, request: HttpRequest, form: Any, change: bool) -> Memory:
        # The form already saved through the services: the admin's messages and history name
        # the memory as saved, not the form's unsaved copy.
        saved: Memory = form.saved
        return saved

    def save_model(self, request: HttpRequest, obj: Memory, form: Any, change: bool) -> None:
        return None

    def save_related(self, request: HttpRequest, form: Any, formsets: Any, change: bool) -> None:
        # Versions are written by the services, never by the inline. The admin's change message
        # still reads what each formset saved: nothing.
        for formset in formsets:
            formset.new_objects, formset.changed_objects, formset.deleted_objects = [], [], []

    def change_view(
        self, request: HttpRequest, object_id: str, form_url: str = "", extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        memory = self.get_object(request, object_id)
        if memory is not None:
            can_decide = self.has_change_permission(request, memory)
            extra_context = {
                **(extra_context or {}),
                "decisions": decisions_for(memory) if can_decide else [],
                "status_since": status_since(memory),
                "back_to": self._back_to(request),
            }
        return super().change_view(request, object_id, form_url, extra_context)

    # --- decisions: the list's actions and the page's buttons, both through a reason page -------

    def get_urls(self) -> list[URLPattern]:
        def memory_view(view: Any, change: bool = False) -> Any:
            def wrapped(request: HttpRequest, object_id: str, **kwargs: Any) -> HttpResponse:
                memory = self.get_object(request, object_id)
                allowed = self.has_change_permission if change else self.has_view_permission
                if memory is None or not allowed(request, memory):
                    return self._missing(request, object_id)
                response: HttpResponse = view(request, memory, **kwargs)
                return response

            return self.admin_site.admin_view(wrapped)

        return [
            path("<path:object_id>/decide/<str:name>/", memory_view(self._decide_one, change=True),
                 name="memories_memory_decide"),
            path("<path:object_id>/versions/compare/", memory_view(admin_history.compare),
                 name="memories_memory_compare"),
            path("<path:object_id>/versions/<str:number>/revert/", memory_view(admin_history.revert, change=True),
                 name="memories_memory_revert"),
            path("<path:object_id>/versions/<str:number>/", memory_view(admin_history.version_detail),
                 name="memories_memory_version"),
            *super().get_urls(),
        ]  # fmt: skip

    def history_view(self, request: HttpRequest, object_id: str, extra_context: dict[str, Any] | None = None) -> Any:
        # The memory's own versions (full snapshots, who and why), not Django's log of admin edits.
        memory = self.get_object(request, object_id)
        if memory is None or not self.has_view_permission(request, memory):
            return self._missing(request, object_id)
        return admin_history.history(request, memory, can_revert=self.has_change_permission(request, memory))

    def _missing(self, request: HttpRequest, object_id: str) -> HttpResponse:
        """As Django answers for a memory that does not exist (or is not this person's to see)."""
        response: HttpResponse = self._get_obj_does_not_exist_redirect(request, self.opts, object_id)  # type: ignore[attr-defined]
        return response

    def _decide_one(self, request: HttpRequest, memory: Memory, name: str) -> HttpResponse:
        decision = DECISIONS.get(name)
        if decision is None:
            self.message_user(request, f"Unknown decision {name!r}.", messages.ERROR)
            return HttpResponseRedirect(reverse("admin:memories_memory_change", args=[memory.pk]))
        page = decide(request, [memory], decision)
        if page is not None:
            return page
        return HttpResponseRedirect(reverse("admin:memories_memory_change", args=[memory.pk]))

    def _bulk(self, request: HttpRequest, queryset: QuerySet[Memory], decision: Decision) -> TemplateResponse | None:
        memories = list(queryset.select_related("organization")[:500])
        return decide(request, memories, decision, action=f"{decision.name}_selected")

    @admin.action(description="Verify selected memories…", permissions=["change"])
    def verify_selected(self, request: HttpRequest, queryset: QuerySet[Memory]) -> TemplateResponse | None:
        return self._bulk(request, queryset, DECISIONS["verify"])

    @admin.action(description="Lock selected memories…", permissions=["change"])
    def lock_selected(self, request: HttpRequest, queryset: QuerySet[Memory]) -> TemplateResponse | None:
        return self._bulk(request, queryset, DECISIONS["lock"])

    @admin.action(description="Unlock selected memories…", permissions=["change"])
    def unlock_selected(self, request: HttpRequest, queryset: QuerySet[Memory]) -> TemplateResponse | None:
        return self._bulk(request, queryset, DECISIONS["unlock"])

    @admin.action(description="Deprecate selected memories…", permissions=["change"])
    def deprecate_selected(self, request: HttpRequest, queryset: QuerySet[Memory]) -> TemplateResponse | None:
        return self._bulk(request, queryset, DECISIONS["deprecate"])

    @admin.action(description="Reactivate selected deprecated memories…", permissions=["change"])
    def reactivate_selected(self, request: HttpRequest, queryset: QuerySet[Memory]) -> TemplateResponse | None:
        return self._bulk(request, queryset, DECISIONS["reactivate"])

    @admin.action(description="Delete selected memories (kept, can be restored)…", permissions=["change"])
    def delete_selected(self, request: HttpRequest, queryset: QuerySet[Memory]) -> TemplateResponse | None:
        return self._bulk(request, queryset, DECISIONS["delete"])

    @admin.action(description="Restore selected deleted memories…", permissions=["change"])
    def restore_selected(self, request: HttpRequest, queryset: QuerySet[Memory]) -> TemplateResponse | None:
        return self._bulk(request, queryset, DECISIONS["restore"])


@audit_target("memory")
def _memories(ids: list[str], user: Any) -> dict[str, Target]:
    found = list(Memory.objects.filter(pk__in=uuid_ids(ids)).only("pk", "title"))
    hidden = hidden_from(user, [memory.pk for memory in found])
    return {
        str(m.pk): Target(HIDDEN_MEMORY)
        if m.pk in hidden
        else Target(m.title, admin_url("admin:memories_memory_change", m.pk))
        for m in found
    }


# The write policy's page registers itself (memories/admin_policy.py).
from memories import admin_policy  # noqa: E402, F401
