"""Audit events as a person reads them: who (by name), did what, to which object (by its title,
linked), from what to what, and why; filtered by actor, action, kind of object and date.

The titles and status changes are read in the page's own query (subqueries by primary key).
"""

from __future__ import annotations

from typing import Any

from django.apps import apps
from django.contrib import admin
from django.db.models import CharField, IntegerField, OuterRef, Q, QuerySet, Subquery, UUIDField, Value
from django.db.models.expressions import Case, When
from django.db.models.fields.json import KeyTextTransform
from django.db.models.functions import Cast
from django.http import HttpRequest
from django.urls import NoReverseMatch, reverse
from django.utils.formats import date_format
from django.utils.html import format_html
from django.utils.timezone import localtime

from organizations.admin_scoping import OrganizationScopedAdmin, organizations_for
from organizations.models import AuditEvent, Role

# What an event's target_type names, and the admin page of such an object.
TARGET_PAGES = {
    "memory": "admin:memories_memory_change",
    "consolidation_proposal": "admin:lifecycle_consolidationproposal_change",
    "membership": "admin:organizations_membership_change",
}


class ActorFilter(admin.SimpleListFilter):
    """The people and agents who acted in the organizations this person may see."""

    title = "actor"
    parameter_name = "actor"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        events = AuditEvent.objects.filter(organization__in=organizations_for(request, Role.CURATOR))
        actors = events.order_by("actor").values_list("actor", flat=True).distinct()[:100]
        return [(actor, actor) for actor in actors]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        return queryset.filter(actor=self.value()) if self.value() else queryset


def _memory_of_event() -> Cast:
    return Cast(OuterRef("target_id"), UUIDField())


def with_targets(events: QuerySet[AuditEvent]) -> QuerySet[AuditEvent]:
    """Each event with its memory's title and, for a status change, the status before and after
    (read from the versions the event names), in the query of the page itself."""
    memory_model = apps.get_model("memories", "Memory")
    version_model = apps.get_model("memories", "MemoryVersion")
    version = Cast(KeyTextTransform("version", "data"), IntegerField())

    def status_at(offset: int) -> Subquery:
        return Subquery(
            version_model.objects.filter(
                memory_id=_memory_of_event(), version=Cast(OuterRef("event_version"), IntegerField()) + offset
            )
            .annotate(status=KeyTextTransform("status", "snapshot"))
            .values("status")[:1]
        )

    about_memory = Q(target_type="memory")
    title = Subquery(memory_model.objects.filter(pk=_memory_of_event()).values("title")[:1])
    return events.annotate(
        target_title=Case(When(about_memory, then=title), default=Value(None), output_field=CharField()),
        event_version=Case(When(about_memory & Q(action="memory.status"), then=version), default=Value(None)),
    ).annotate(
        status_before=Case(
            When(event_version__isnull=False, then=status_at(-1)), default=Value(None), output_field=CharField()
        ),
        status_after=Case(
            When(event_version__isnull=False, then=status_at(0)), default=Value(None), output_field=CharField()
        ),
    )


class AuditEventAdmin(OrganizationScopedAdmin):
    list_display = ["when", "actor_name", "what", "target", "why"]
    list_display_links = ["when"]
    list_filter = [ActorFilter, "action", "target_type", "organization"]
    search_fields = ["target_id", "actor", "reason"]
    date_hierarchy = "created_at"
    view_role = Role.CURATOR
    list_per_page = 50

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.display(description="when", ordering="created_at")
    def when(self, obj: AuditEvent) -> str:
        return format_html(
            '<span title="{}">{}</span>', obj.created_at.isoformat(), date_format(localtime(obj.created_at), "M j, H:i")
        )

    @admin.display(description="what", ordering="action")
    def what(self, obj: AuditEvent) -> str:
        change = self.change(obj)
        return format_html("{}<br><small>{}</small>", obj.action, change) if change else obj.action

    @admin.display(description="why")
    def why(self, obj: AuditEvent) -> str:
        return format_html('<span class="audit-reason">{}</span>', obj.reason) if obj.reason else ""

    @admin.display(description="who", ordering="actor")
    def actor_name(self, obj: AuditEvent) -> str:
        """The person's name, or the agent token's name with its prefix."""
        if obj.token_id is not None and obj.token is not None:
            owner = f" for {obj.token.user.get_username()}" if obj.token.user else ""
            return f"{obj.token.name or 'token'} ({obj.token.display}){owner}"
        if obj.user is not None:
            return obj.user.get_username()
        return obj.actor

    @admin.display(description="object")
    def target(self, obj: AuditEvent) -> str:
        data = obj.data if isinstance(obj.data, dict) else {}
        person = (data.get("user") or data.get("username")) if obj.target_type in ("membership", "user") else None
        label = getattr(obj, "target_title", None) or (f"member {person}" if person else None)
        text = label or f"{obj.target_type.replace('_', ' ')} {obj.target_id[:8]}"
        page = TARGET_PAGES.get(obj.target_type)
        if page is None:
            return text
        try:
            url = reverse(page, args=[obj.target_id])
        except NoReverseMatch:
            return text
        return format_html('<a href="{}">{}</a>', url, text)

    @staticmethod
    def change(obj: AuditEvent) -> str:
        data = obj.data if isinstance(obj.data, dict) else {}
        version = data.get("version")
        if obj.action == "memory.status" and isinstance(version, int):
            before = getattr(obj, "status_before", None) or "?"
            after = getattr(obj, "status_after", None) or "?"
            return format_html(
                '<span class="chip chip-{}">{}</span> → <span class="chip chip-{}">{}</span>',
                before,
                before,
                after,
                after,
            )
        if "previous_role" in data:
            return f"{data.get('previous_role') or 'none'} → {data.get('role')}"
        fields = data.get("fields")
        return ", ".join(map(str, fields)) if isinstance(fields, list) else ""

    def get_queryset(self, request: HttpRequest) -> QuerySet[AuditEvent]:
        return with_targets(super().get_queryset(request).select_related("user", "token__user"))
