"""Admin access follows organization roles, not Django's per-model permissions.

Platform superusers see everything. Anyone else sees only the organizations they are a member of,
and what they may do there follows their role: readers look, curators curate memories, admins
manage tokens and members. A curator of one organization sees nothing of another.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.contrib.admin.utils import get_fields_from_path
from django.db import models
from django.db.models import Model, QuerySet
from django.http import HttpRequest

from memory_platform.json_input import CheckedJSONFormField
from organizations.models import Membership, Organization, Repository, Role


def organizations_for(request: HttpRequest, minimum_role: str = Role.READER) -> QuerySet[Organization]:
    user = request.user
    if not user.is_authenticated or not user.is_active:
        return Organization.objects.none()
    if user.is_superuser:
        return Organization.objects.all()
    allowed = [role for role in Role.values if Role.rank(role) >= Role.rank(minimum_role)]
    org_ids = Membership.objects.filter(user=user, role__in=allowed).values("organization_id")
    return Organization.objects.filter(pk__in=org_ids)


def organization_ids_for(request: HttpRequest, minimum_role: str) -> frozenset[int]:
    """The ids of ``organizations_for``, read once per request and role: every admin page asks
    for each model whether the person may see, add and change it, and the answer is the same."""
    cache: dict[str, frozenset[int]] = request.__dict__.setdefault("_organization_ids_by_role", {})
    if minimum_role not in cache:
        cache[minimum_role] = frozenset(organizations_for(request, minimum_role).values_list("pk", flat=True))
    return cache[minimum_role]


class OrganizationScopedAdmin(admin.ModelAdmin):
    """Base for every model that belongs to an organization."""

    organization_path = "organization"
    # JSON typed into a form is held to the same rules as any request's (depth, valid Unicode).
    formfield_overrides = {models.JSONField: {"form_class": CheckedJSONFormField}}
    view_role = Role.READER
    change_role = Role.CURATOR
    add_role = Role.CURATOR

    def _organization_of(self, obj: Model) -> Organization:
        value: Any = obj
        for part in self.organization_path.split("__"):
            value = getattr(value, part)
        if not isinstance(value, Organization):
            raise TypeError(f"{self.organization_path} of {obj!r} is not an organization")
        return value

    def _allowed(self, request: HttpRequest, role: str, obj: Model | None) -> bool:
        if request.user.is_superuser:
            return True
        if not request.user.is_staff:
            return False
        allowed = organization_ids_for(request, role)
        if obj is None:
            return bool(allowed)
        return self._organization_of(obj).pk in allowed

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        queryset = super().get_queryset(request)
        if request.user.is_superuser:
            return queryset
        return queryset.filter(**{f"{self.organization_path}__in": organizations_for(request)})

    def has_module_permission(self, request: HttpRequest) -> bool:
        return self._allowed(request, self.view_role, None)

    def has_view_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return self._allowed(request, self.view_role, obj)

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return self._allowed(request, self.change_role, obj)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return self._allowed(request, self.add_role, None)

    def has_delete_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        # Nothing is hard-deleted through the admin: memories are soft-deleted, tokens revoked.
        return False

    def get_list_filter(self, request: HttpRequest) -> Any:
        # Django's filter for a relation lists every row of the related table, which would show
        # other organizations' names; list only the values found among the objects shown here.
        return [
            (entry, admin.RelatedOnlyFieldListFilter)
            if isinstance(entry, str) and get_fields_from_path(self.model, entry)[-1].is_relation
            else entry
            for entry in super().get_list_filter(request)
        ]

    def formfield_for_foreignkey(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        if not request.user.is_superuser:
            organizations = organizations_for(request, self.add_role)
            if db_field.related_model is Organization:
                kwargs["queryset"] = organizations
            elif db_field.related_model is Repository:
                kwargs["queryset"] = Repository.objects.filter(organization__in=organizations)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)


class ReadOnlyInline(admin.TabularInline):
    """A table shown on a parent's page that nobody edits there (history, links, facts)."""

    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # Whoever may see the parent sees its rows, whatever Django's per-model permissions say
        # (the admin follows organization roles instead, and the parent's admin checks those).
        return True
