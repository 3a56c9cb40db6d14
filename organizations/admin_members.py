"""Members in the admin: an organization's admins add people, change roles and remove members.

Every change goes through the membership services (organizations.services), so the admin keeps
their rules: the organization keeps an admin, a new person sets their own password through a
one-time link, and each change is an audit event. An admin sees and changes only the members of
the organizations they administer.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.db.models import QuerySet
from django.http import HttpRequest
from django.template.response import TemplateResponse

from memory_platform.exceptions import DomainError
from memory_platform.reasons import REASON_MAX_CHARS, confirmation, reason
from organizations.admin_scoping import OrganizationScopedAdmin, ReadOnlyInline
from organizations.models import Membership, Role
from organizations.password_links import link_lifetime_days, set_password_path
from organizations.selectors import principal_for_user
from organizations.services import AddedMember, member_add, membership_remove, membership_set


class MemberAddForm(forms.ModelForm):
    """Who joins which organization with which role; saved by ``member_add`` during validation."""

    username = forms.CharField(max_length=150, help_text="Their login name.")
    email = forms.EmailField(required=False, help_text="Only for a new account.")
    create = forms.BooleanField(
        required=False,
        label="Create the account",
        help_text="For someone without a login yet: you get a one-time link where they set their password.",
    )
    request: HttpRequest

    class Meta:
        model = Membership
        fields = ["organization", "username", "role", "email", "create"]

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        if self.errors:
            return cleaned
        try:
            principal = principal_for_user(user=self.request.user, organization=cleaned["organization"])  # type: ignore[arg-type]
            self.added: AddedMember = member_add(
                principal=principal,
                username=cleaned["username"],
                role=cleaned["role"],
                create=bool(cleaned.get("create")),
                email=cleaned.get("email") or "",
            )
        except DomainError as error:
            raise forms.ValidationError(error.message) from None
        return cleaned

    def _post_clean(self) -> None:
        return None  # saved by the service: no half-built row to check


class MemberRoleForm(forms.ModelForm):
    """A member's new role, and why; saved by ``membership_set`` during validation."""

    request: HttpRequest

    reason = forms.CharField(
        required=False,
        max_length=REASON_MAX_CHARS,
        widget=forms.Textarea(attrs={"rows": 2, "cols": 60}),
        help_text="Why the role changes: kept in the audit log.",
    )

    class Meta:
        model = Membership
        fields = ["role", "reason"]

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        if self.errors or "role" not in self.changed_data:
            return cleaned
        membership = self.instance
        try:
            why = reason(cleaned.get("reason", ""))
            if not why:
                raise forms.ValidationError(
                    {"reason": "Say why the role changes: the reason is kept in the audit log."}
                )
            principal = principal_for_user(user=self.request.user, organization=membership.organization)  # type: ignore[arg-type]
            membership_set(principal=principal, user=membership.user, role=cleaned["role"], reason=why)
        except DomainError as error:
            raise forms.ValidationError(error.message) from None
        return cleaned

    def _post_clean(self) -> None:
        return None


class MembershipAdmin(OrganizationScopedAdmin):
    list_display = ["user", "organization", "role", "created_at"]
    list_filter = ["organization", "role"]
    search_fields = ["user__username"]
    change_role = Role.ADMIN
    add_role = Role.ADMIN
    actions = ["remove_members"]

    def get_form(self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any) -> Any:
        kwargs["form"] = MemberRoleForm if obj is not None else MemberAddForm
        kwargs["fields"] = kwargs["form"].Meta.fields
        form_class = super().get_form(request, obj, change=change, **kwargs)
        return type(form_class.__name__, (form_class,), {"request": request})

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        return ["user", "organization", "created_at"] if obj is not None else []

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        return (
            ["user", "organization", "role", "reason", "created_at"] if obj is not None else MemberAddForm.Meta.fields
        )

    def save_form(self, request: HttpRequest, form: Any, change: bool) -> Membership:
        if change:
            form.instance.refresh_from_db()
            membership: Membership = form.instance
            return membership
        added: AddedMember = form.added
        if added.needs_password:
            link = request.build_absolute_uri(set_password_path(added.membership.user))
            self.message_user(
                request,
                f"{added.membership.user.get_username()} has no password yet. Hand them this link, privately: "
                f"{link} (it works once, for {link_lifetime_days()} days). They log in at "
                f"{request.build_absolute_uri('/admin/')}.",
                messages.WARNING,
            )
        return added.membership

    def save_model(self, request: HttpRequest, obj: Membership, form: Any, change: bool) -> None:
        return None  # saved by the services

    def save_related(self, request: HttpRequest, form: Any, formsets: Any, change: bool) -> None:
        return None

    @admin.action(description="Remove selected members…", permissions=["change"])
    def remove_members(self, request: HttpRequest, queryset: QuerySet[Membership]) -> TemplateResponse | None:
        memberships = list(queryset.select_related("user", "organization")[:200])
        confirmed = confirmation(request, "the audit log")
        if confirmed.reason:
            self._remove(request, memberships, confirmed.reason)
            return None
        return TemplateResponse(
            request,
            "admin/organizations/membership/confirm_remove.html",
            {
                **self.admin_site.each_context(request),
                "opts": self.opts,
                "title": "Remove members?",
                "memberships": memberships,
                "error": confirmed.error,
                "reason_max": REASON_MAX_CHARS,
                "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
            },
        )

    def _remove(self, request: HttpRequest, memberships: list[Membership], reason: str) -> None:
        removed = 0
        for membership in memberships:
            try:
                principal = principal_for_user(user=request.user, organization=membership.organization)  # type: ignore[arg-type]
                membership_remove(principal=principal, user=membership.user, reason=reason)
                removed += 1
            except DomainError as error:
                self.message_user(request, f"{membership.user.get_username()}: {error.message}", messages.ERROR)
        if removed:
            self.message_user(request, f"Removed {removed} member(s). Reason kept: “{reason}”", messages.SUCCESS)


class MembershipsOfUserInline(ReadOnlyInline):
    """On a user's page: the organizations they belong to, with their role."""

    model = Membership
    fields = ("organization", "role", "created_at")
    readonly_fields = ("organization", "role", "created_at")
    verbose_name_plural = "memberships"


class MembersOfOrganizationInline(ReadOnlyInline):
    """On an organization's page: its members (changed on the Memberships page, through the services)."""

    model = Membership
    fields = ("user", "role", "created_at")
    readonly_fields = ("user", "role", "created_at")
    verbose_name_plural = "members (add, change and remove them on the Memberships page)"
