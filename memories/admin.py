"""Curators' view of memories. Every change goes through the same services as MCP and REST, so
the admin obeys the same rules (roles, locked memories) and writes versions and audit events."""

from __future__ import annotations

from typing import Any, Literal

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.contrib.admin.utils import display_for_value
from django.contrib.admin.views.main import ORDER_VAR, SEARCH_VAR, ChangeList
from django.db.models import Case, FloatField, IntegerField, Q, QuerySet, Value, When
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html, format_html_join
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.timesince import timesince

from memories import admin_history, services
from memories.admin_decisions import DECISIONS, Decision, decide, decisions_for, status_since
from memories.models import IMPORTANCE_MAX, Memory, MemoryType, MemoryVersion, ScopeType, Status
from memories.search import SearchParams, memory_search
from memories.selectors import MemoryFilters
from memories.trust import is_pinned, review_payload
from memory_platform import reasons
from memory_platform.exceptions import DomainError, SearchUnavailable
from organizations.admin_audit import Target, admin_url, audit_target, uuid_ids
from organizations.admin_scoping import OrganizationScopedAdmin, ReadOnlyInline, organizations_for
from organizations.principal import Principal
from organizations.selectors import principal_for_user

EDITABLE_FIELDS = [
    "scope_type",
    "repository",
    "memory_type",
    "title",
    "current_content",
    "status",
    "importance",
    "tags",
    "metadata",
    "source",
    "valid_from",
    "valid_until",
]


def _principal(request: HttpRequest, memory_or_org: Any) -> Principal:
    organization = getattr(memory_or_org, "organization", memory_or_org)
    return principal_for_user(user=request.user, organization=organization)  # type: ignore[arg-type]


class MemoryPartInline(ReadOnlyInline):
    """A read-only table of what belongs to the memory on its page (versions here; links and
    facts, attached by knowledge/admin.py)."""

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # Part of the memory: whoever may see the memory sees it.
        return self.admin_site.get_model_admin(Memory).has_view_permission(request, obj)


class MemoryVersionInline(MemoryPartInline):
    model = MemoryVersion
    fields = ("version", "change", "changed_fields", "who", "reason", "created_at")
    readonly_fields = fields
    ordering = ["-version"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[MemoryVersion]:
        return super().get_queryset(request).select_related("token", "user")

    @admin.display(description="by")
    def who(self, obj: MemoryVersion) -> str:
        return obj.who


class ShownFilter(admin.SimpleListFilter):
    """By default the list shows what is in force, as every other read does: not deleted, not
    deprecated, not superseded. The rest is one click away (or chosen by its status)."""

    title = "shown"
    parameter_name = "shown"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("retired", "Deprecated or superseded"), ("deleted", "Deleted"), ("all", "Everything")]

    def choices(self, changelist: Any) -> Any:
        for choice in super().choices(changelist):
            if choice["display"] == "All":
                choice["display"] = "In force"
            yield choice

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        value = self.value()
        if value == "all":
            return queryset
        if value == "deleted":
            return queryset.filter(deleted_at__isnull=False)
        alive = queryset.filter(deleted_at__isnull=True)
        if value == "retired":
            return alive.filter(Q(status=Status.DEPRECATED) | Q(superseded_by__isnull=False))
        if request.GET.get("status__exact") == Status.DEPRECATED:
            return alive  # a status chosen explicitly is shown
        return alive.exclude(status=Status.DEPRECATED).filter(superseded_by__isnull=True)


class MemoryAdminForm(forms.ModelForm):
    """Saves through the services during validation, so a refused change shows as a form error.

    A change needs a reason, kept in the new version and the audit event, as every other decision."""

    request: HttpRequest

    reason = forms.CharField(
        required=False,
        max_length=reasons.REASON_MAX_CHARS,
        widget=forms.Textarea(attrs={"rows": 2, "cols": 80}),
        help_text="Why this change: kept in the memory's history and the audit log.",
    )

    class Meta:
        model = Memory
        fields = ["organization", *EDITABLE_FIELDS]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.instance._state.adding and "title" in self.fields:
            # As over MCP and REST, a new memory without a title gets one derived from its content.
            self.fields["title"].required = False
            self.fields["title"].help_text = "Leave blank to derive it from the content."

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        if self.errors:
            return cleaned
        data = {field: cleaned.get(field) for field in EDITABLE_FIELDS if field in self.fields}
        repository = data.pop("repository", None)
        data["repository"] = repository.slug if repository else None
        reason = cleaned.get("reason", "")
        try:
            reason = reasons.reason(reason)
            if self.instance._state.adding:
                principal = _principal(self.request, cleaned["organization"])
                self.saved, _ = services.memory_create(
                    principal=principal, data=data, reason=reason or "written in the admin"
                )
            else:
                changed = {field: data[field] for field in self.changed_data if field in data}
                if changed and not reason:
                    raise forms.ValidationError(
                        {"reason": "Say why you change it: the reason is kept in its history and the audit log."}
                    )
                principal = _principal(self.request, self.instance)
                self.saved = services.memory_update(
                    principal=principal, memory_id=self.instance.pk, data=changed, reason=reason
                )
        except DomainError as error:
            raise forms.ValidationError(error.message) from None
        return cleaned

    def _post_clean(self) -> None:
        # Django would now check the model's constraints on the form's half-built row; the
        # services have already checked and saved the real one (they set the owner, clear the
        # repository…), so such checks only add confusing second messages.
        return None


# How many memories a search by meaning shows, ranked (a changelist page holds 50), and how many it
# ranks in each organization before the list's remaining filters narrow them.
MEANING_RESULTS = 50
MEANING_CANDIDATES = 200
SEARCH_MODES = {"meaning": "by meaning", "words": "by words"}


class MemoryChangeList(ChangeList):
    """The memory list; searched by meaning, it is in the search's order (best match first) and no
    column claims to sort it, until the curator sorts by one."""

    ranked_by_meaning = False

    def get_queryset(self, request: HttpRequest, exclude_parameters: Any = None) -> QuerySet[Memory]:
        queryset: QuerySet[Memory] = super().get_queryset(request, exclude_parameters)
        # MemoryAdmin.get_search_results ranked it (and ordered it so, no column being chosen).
        self.ranked_by_meaning = "search_rank" in queryset.query.annotations and not self.params.get(ORDER_VAR)
        return queryset

    def get_ordering_field_columns(self) -> dict[int, Literal["desc", "asc"]]:
        return {} if self.ranked_by_meaning else dict(super().get_ordering_field_columns())


@admin.register(Memory)
class MemoryAdmin(OrganizationScopedAdmin):
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
        return queryset.exclude(Q(scope_type=ScopeType.USER) & ~Q(owner=request.user))

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

    def get_changelist(self, request: HttpRequest, **kwargs: Any) -> type[ChangeList]:
        return MemoryChangeList

    # --- search: by meaning (the product's hybrid search) or by words -----------------------------

    def changelist_view(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> HttpResponse:
        # ``mode`` is ours, not a field lookup: take it out before the changelist reads the query.
        query = request.GET.copy()
        mode: str = query.pop("mode", ["meaning"])[-1]
        request.GET = query  # type: ignore[assignment]
        request.memory_search_mode = mode if mode in SEARCH_MODES else "meaning"  # type: ignore[attr-defined]
        return super().changelist_view(request, extra_context)

    def get_changelist_instance(self, request: HttpRequest) -> Any:
        changelist = super().get_changelist_instance(request)
        # Read by the search form (templates/admin/memories/memory/search_form.html).
        changelist.search_mode = self._search_mode(request)  # type: ignore[attr-defined]
        changelist.search_modes = SEARCH_MODES  # type: ignore[attr-defined]
        return changelist

    @staticmethod
    def _search_mode(request: HttpRequest) -> str:
        return str(getattr(request, "memory_search_mode", "meaning"))

    def get_search_results(self, request: HttpRequest, queryset: QuerySet[Memory], search_term: str) -> Any:
        if not search_term.strip() or self._search_mode(request) != "meaning":
            return super().get_search_results(request, queryset, search_term)
        try:
            ranked = self._by_meaning(request, queryset, search_term)
        except SearchUnavailable as error:
            self.message_user(
                request, f"Search by meaning is unavailable ({error}); searched by words.", messages.WARNING
            )
            return super().get_search_results(request, queryset, search_term)
        rank = Case(*(When(pk=pk, then=Value(i)) for i, (pk, _) in enumerate(ranked)), output_field=IntegerField())
        score = Case(*(When(pk=pk, then=Value(relevance)) for pk, relevance in ranked), output_field=FloatField())
        found = queryset.filter(pk__in=[pk for pk, _ in ranked]).annotate(search_rank=rank, search_score=score)
        # Best match first, unless the curator sorted by a column.
        return (found if ORDER_VAR in request.GET else found.order_by("search_rank", "pk")), False

    def _by_meaning(self, request: HttpRequest, queryset: QuerySet[Memory], query: str) -> list[tuple[Any, float]]:
        """The best matches among the memories the list shows (its filters applied), best first, each
        with its relevance."""
        scored: list[tuple[float, Any]] = []
        filters = self._search_filters(request)
        organizations = organizations_for(request).filter(pk__in=queryset.values("organization_id"))
        for organization in organizations:
            principal = principal_for_user(user=request.user, organization=organization)  # type: ignore[arg-type]
            params = SearchParams(query=query, filters=filters, limit=MEANING_CANDIDATES)
            # A curator looking is not an agent using: the hits' access counts and freshness stay as they are.
            page = memory_search(principal, params, counts_as_read=False)
            scored.extend((hit.relevance or 0.0, hit.memory.pk) for hit in page.hits)
        scored.sort(key=lambda pair: -pair[0])
        # The list's other filters (importance, date, organization) narrow the ranked memories.
        shown = set(queryset.filter(pk__in=[pk for _, pk in scored]).values_list("pk", flat=True))
        return [(pk, relevance) for relevance, pk in scored if pk in shown][:MEANING_RESULTS]

    @staticmethod
    def _search_filters(request: HttpRequest) -> MemoryFilters:
        """The list's status, scope, type and deleted filters as the search's own, so the ranking
        is done among the memories the list shows (not among all, then narrowed to a few)."""
        chosen = request.GET
        status = chosen.get("status__exact")
        shown = chosen.get("shown")
        statuses: list[str] = []  # by default what is in force: not deprecated, not superseded
        if status in Status.values:
            statuses = [status]
        elif shown in ("retired", "deleted", "all"):
            statuses = list(Status.values)
        return MemoryFilters(
            status=statuses,
            scope_type=chosen.get("scope_type__exact") if chosen.get("scope_type__exact") in ScopeType.values else None,
            memory_type=[kind] if (kind := chosen.get("memory_type__exact")) in MemoryType.values else [],
            include_deleted=shown in ("deleted", "all"),
            include_expired=True,
        )

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
def _memories(ids: list[str]) -> dict[str, Target]:
    found = Memory.objects.filter(pk__in=uuid_ids(ids)).values_list("pk", "title")
    return {str(pk): Target(title, admin_url("admin:memories_memory_change", pk)) for pk, title in found}


# The write policy's page registers itself (memories/admin_policy.py).
from memories import admin_policy  # noqa: E402, F401
