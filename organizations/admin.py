from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.contrib.auth.admin import UserAdmin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.template.response import TemplateResponse

from memory_platform.exceptions import DomainError
from memory_platform.reasons import REASON_MAX_CHARS, confirmation
from organizations.admin_audit import AuditEventAdmin, Target, admin_url, audit_target, integer_ids
from organizations.admin_members import MembershipAdmin, MembershipsOfUserInline, MembersOfOrganizationInline
from organizations.admin_scoping import OrganizationScopedAdmin, organizations_for
from organizations.models import ApiToken, AuditEvent, Membership, Organization, Repository, Role, User
from organizations.selectors import principal_for_user
from organizations.tokens import token_revoke


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

    @admin.action(description="Revoke selected tokens…", permissions=["change"])
    def revoke(self, request: HttpRequest, queryset: QuerySet[ApiToken]) -> TemplateResponse | None:
        """A page listing the tokens and who loses access, asking why; then the revocation."""
        tokens = list(queryset.select_related("organization", "user")[:200])
        confirmed = confirmation(request, "the audit log")
        if confirmed.reason:
            self._revoke(request, tokens, confirmed.reason)
            return None
        return TemplateResponse(
            request,
            "admin/organizations/apitoken/confirm_revoke.html",
            {
                **self.admin_site.each_context(request),
                "opts": self.opts,
                "title": f"Revoke {len(tokens)} token{'' if len(tokens) == 1 else 's'}?",
                "tokens": tokens,
                "error": confirmed.error,
                "reason_max": REASON_MAX_CHARS,
                "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
            },
        )

    def _revoke(self, request: HttpRequest, tokens: list[ApiToken], reason: str) -> None:
        revoked = 0
        for token in tokens:
            if token.revoked_at is not None:
                continue
            try:
                principal = principal_for_user(user=request.user, organization=token.organization)  # type: ignore[arg-type]
                token_revoke(principal=principal, prefix=token.prefix, reason=reason)
                revoked += 1
            except DomainError as error:
                self.message_user(request, f"{token.display}: {error.message}", messages.ERROR)
        if revoked:
            self.message_user(request, f"Revoked {revoked} token(s). Reason kept: “{reason}”", messages.SUCCESS)


admin.site.register(AuditEvent, AuditEventAdmin)


# --- how audit events name what they are about ---------------------------------------------------


@audit_target("membership")
def _memberships(ids: list[str], user: Any) -> dict[str, Target]:
    found = Membership.objects.filter(pk__in=integer_ids(ids)).select_related("user", "organization")
    return {
        str(m.pk): Target(
            f"member {m.user.get_username()} ({m.role})", admin_url("admin:organizations_membership_change", m.pk)
        )
        for m in found
    }


@audit_target("api_token")
def _tokens(ids: list[str], user: Any) -> dict[str, Target]:
    found = ApiToken.objects.filter(prefix__in=ids)
    return {
        t.prefix: Target(
            f"token {t.name or t.display} ({t.display})", admin_url("admin:organizations_apitoken_change", t.pk)
        )
        for t in found
    }


@audit_target("user")
def _users(ids: list[str], user: Any) -> dict[str, Target]:
    # A user's page is for platform administrators; the name is for everyone.
    return {str(u.pk): Target(f"user {u.get_username()}") for u in User.objects.filter(pk__in=integer_ids(ids))}


@audit_target("repository")
def _repositories(ids: list[str], user: Any) -> dict[str, Target]:
    found = Repository.objects.filter(pk__in=integer_ids(ids))
    return {
        str(r.pk): Target(f"repository {r.slug}", admin_url("admin:organizations_repository_change", r.pk))
        for r in found
    }


@audit_target("organization")
def _organizations(ids: list[str], user: Any) -> dict[str, Target]:
    found = Organization.objects.filter(pk__in=integer_ids(ids))
    return {
        str(o.pk): Target(f"organization {o.slug}", admin_url("admin:organizations_organization_change", o.pk))
        for o in found
    }
