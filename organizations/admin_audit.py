"""Audit events as a person reads them: who (by name), did what, to which object (by its title,
linked), from what to what, and why; filtered by actor, action, kind of object and date.

The titles and status changes are read in the page's own query (subqueries by primary key).
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable
from dataclasses import dataclass
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

# What each kind of audited object is called and where its page is: registered by the app that owns
# the kind (``audit_target``), so this module names no other app's models.
# (target ids, the person looking) -> names and links: a kind may name less to some people (another
# person's personal memory is "someone's personal memory" to everyone else).
TargetResolver = Callable[[list[str], Any], dict[str, "Target"]]
_RESOLVERS: dict[str, TargetResolver] = {}


@dataclass(frozen=True)
class Target:
    label: str
    url: str | None = None


def audit_target(target_type: str) -> Callable[[TargetResolver], TargetResolver]:
    """Register how the events' ``target_id``s of one kind become names and links, a page at a time
    (one query per kind, whatever the number of events)."""

    def register(resolver: TargetResolver) -> TargetResolver:
        _RESOLVERS[target_type] = resolver
        return resolver

    return register


def admin_url(name: str, *args: object) -> str | None:
    try:
        return reverse(name, args=args)
    except NoReverseMatch:
        return None


def integer_ids(ids: list[str]) -> list[int]:
    return [int(i) for i in ids if i.isdigit()]


def uuid_ids(ids: list[str]) -> list[uuid.UUID]:
    parsed = []
    for value in ids:
        with contextlib.suppress(ValueError):
            parsed.append(uuid.UUID(value))
    return parsed


def resolve_targets(events: list[AuditEvent], user: Any) -> None:
    """Give each event of a page its ``target_object``: the object's name and link, or None when
    the object is gone (the event's own data still names it)."""
    by_type: dict[str, set[str]] = {}
    for event in events:
        by_type.setdefault(event.target_type, set()).add(event.target_id)
    found: dict[tuple[str, str], Target] = {}
    for target_type, ids in by_type.items():
        resolver = _RESOLVERS.get(target_type)
        if resolver is not None:
            for target_id, target in resolver(sorted(ids), user).items():
                found[(target_type, target_id)] = target
    for event in events:
        event.target_object = found.get((event.target_type, event.target_id))  # type: ignore[attr-defined]


def actor_label(actor: str, token_name: str | None, username: str | None) -> str:
    """How a person reads an actor: the agent token's name, or the person's (the raw label otherwise)."""
    if token_name:
        return f"{token_name} ({actor.removeprefix('token ')})"
    return username or actor


class ActorFilter(admin.SimpleListFilter):
    """The people and agents who acted in the organizations this person may see."""

    title = "actor"
    parameter_name = "actor"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        events = AuditEvent.objects.filter(organization__in=organizations_for(request, Role.CURATOR))
        actors = events.order_by("actor").values_list("actor", "token__name", "user__username").distinct()[:100]
        named = {actor: actor_label(actor, token_name, username) for actor, token_name, username in actors}
        return sorted(named.items(), key=lambda item: item[1].lower())

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        return queryset.filter(actor=self.value()) if self.value() else queryset


def _memory_of_event() -> Cast:
    return Cast(OuterRef("target_id"), UUIDField())


def with_targets(events: QuerySet[AuditEvent]) -> QuerySet[AuditEvent]:
    """Each event with, for a status change, the status before and after (read from the versions
    the event names), in the query of the page itself."""
    version_model = apps.get_model("memories", "MemoryVersion")
    version = Cast(KeyTextTransform("version", "data"), IntegerField())

    def status_at(offset: int) -> Subquery:
        return Subquery(
            version_model.objects.filter(
                organization=OuterRef("organization"),
                memory_id=_memory_of_event(),
                version=Cast(OuterRef("event_version"), IntegerField()) + offset,
            )
            .annotate(status=KeyTextTransform("status", "snapshot"))
            .values("status")[:1]
        )

    about_memory = Q(target_type="memory")
    return events.annotate(
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

    @admin.display(description="object")
    def target(self, obj: AuditEvent) -> str:
        found: Target | None = getattr(obj, "target_object", None)
        if found is None:  # gone since (a removed member, a deleted row): the event's own data names it
            return self._named_by_data(obj)
        if found.url is None:
            return found.label
        return format_html('<a href="{}">{}</a>', found.url, found.label)

    @staticmethod
    def _named_by_data(obj: AuditEvent) -> str:
        data = obj.data if isinstance(obj.data, dict) else {}
        kind = obj.target_type.replace("_", " ")
        name = data.get("user") or data.get("username") or data.get("slug") or data.get("name")
        return f"{kind} {name} (gone)" if name else f"{kind} {obj.target_id[:8]}"

    @admin.display(description="who", ordering="actor")
    def actor_name(self, obj: AuditEvent) -> str:
        """The person's name, or the agent token's name with its prefix."""
        if obj.token_id is not None and obj.token is not None:
            owner = f" for {obj.token.user.get_username()}" if obj.token.user else ""
            return f"{actor_label(obj.actor, obj.token.name, None)}{owner}"
        if obj.user is not None:
            return obj.user.get_username()
        return obj.actor

    def get_changelist_instance(self, request: HttpRequest) -> Any:
        changelist = super().get_changelist_instance(request)
        changelist.result_list = list(changelist.result_list)
        resolve_targets(changelist.result_list, request.user)
        return changelist

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
