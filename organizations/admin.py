from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.contrib.auth.admin import UserAdmin
from django.db.models import QuerySet
from django.http import HttpRequest

from memory_platform.exceptions import DomainError
from organizations.admin_audit import AuditEventAdmin
from organizations.admin_members import MembershipAdmin, MembershipsOfUserInline, MembersOfOrganizationInline
from organizations.admin_scoping import OrganizationScopedAdmin, organizations_for
from organizations.models import ApiToken, AuditEvent, Membership, Organization, Repository, Role, User
from organizations.selectors import principal_for_user
from organizations.services import token_revoke


@admin.register(User)
class PlatformUserAdmin(UserAdmin):
    inlines = [MembershipsOfUserInline]


class RepositoryInline(admin.TabularInline):
    model = Repository
    extra = 0
    fields = ["slug", "name", "created_at"]
    readonly_fields = ["created_at"]


@admin.register(Organization)
class OrganizationAdmin(OrganizationScopedAdmin):
    organization_path = "pk"
    list_display = ["slug", "name", "created_at"]
    search_fields = ["slug", "name"]
    inlines = [RepositoryInline, MembersOfOrganizationInline]
    change_role = Role.ADMIN

    def _organization_of(self, obj: Any) -> Organization:
        if not isinstance(obj, Organization):
            raise TypeError(f"{obj!r} is not an organization")
        return obj

    def get_queryset(self, request: HttpRequest) -> QuerySet[Organization]:
        if request.user.is_superuser:
            return Organization.objects.all()
        return organizations_for(request)

    def has_add_permission(self, request: HttpRequest) -> bool:
        # New organizations come from platform administrators (or `manage.py create_organization`).
        return bool(request.user.is_superuser)


@admin.register(Repository)
class RepositoryAdmin(OrganizationScopedAdmin):
    list_display = ["slug", "organization", "name", "created_at"]
    list_filter = ["organization"]
    search_fields = ["slug", "name"]


admin.site.register(Membership, MembershipAdmin)


@admin.register(ApiToken)
class ApiTokenAdmin(OrganizationScopedAdmin):
    list_display = [
        "display",
        "organization",
        "name",
        "role",
        "user",
        "created_at",
        "last_used_at",
        "expires_at",
        "revoked_at",
    ]
    list_filter = ["organization", "role"]
    search_fields = ["prefix", "name"]
    readonly_fields = [
        "organization",
        "name",
        "role",
        "user",
        "prefix",
        "created_at",
        "created_by",
        "expires_at",
        "revoked_at",
        "last_used_at",
    ]
    fields = tuple(readonly_fields)
    actions = ["revoke"]
    view_role = Role.ADMIN
    change_role = Role.ADMIN

    def has_add_permission(self, request: HttpRequest) -> bool:
        # A token's secret is shown once, at creation, by `manage.py create_token` or the API.
        return False

    @admin.action(description="Revoke selected tokens")
    def revoke(self, request: HttpRequest, queryset: QuerySet[ApiToken]) -> None:
        revoked = 0
        for token in queryset.select_related("organization"):
            try:
                principal = principal_for_user(user=request.user, organization=token.organization)  # type: ignore[arg-type]
                token_revoke(principal=principal, prefix=token.prefix)
                revoked += 1
            except DomainError as error:
                self.message_user(request, f"{token.display}: {error.message}", messages.ERROR)
        if revoked:
            self.message_user(request, f"Revoked {revoked} token(s).", messages.SUCCESS)


admin.site.register(AuditEvent, AuditEventAdmin)
