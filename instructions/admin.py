from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from instructions.models import InstructionText
from instructions.selectors import default_text
from instructions.services import instruction_text_reset, instruction_text_set
from organizations.admin_audit import Target, audit_target
from organizations.admin_scoping import OrganizationScopedAdmin
from organizations.models import Role
from organizations.selectors import principal_for_user


@admin.register(InstructionText)
class InstructionTextAdmin(OrganizationScopedAdmin):
    """Organization admins reword the prompts and docs their agents receive."""

    list_display = ["key", "organization", "updated_at", "updated_by"]
    list_filter = ["organization", "key"]
    fields = ["organization", "key", "text", "updated_at", "updated_by"]
    readonly_fields = ["updated_at", "updated_by"]
    change_role = Role.ADMIN
    add_role = Role.ADMIN

    def get_changeform_initial_data(self, request: HttpRequest) -> dict[str, Any]:
        initial = super().get_changeform_initial_data(request)
        if initial.get("key"):
            initial["text"] = default_text(str(initial["key"]))
        return initial

    def save_model(self, request: HttpRequest, obj: InstructionText, form: Any, change: bool) -> None:
        # Through the service, as over REST: the admin role is checked and the wording replaced is
        # kept in the audit event.
        principal = principal_for_user(user=request.user, organization=obj.organization)  # type: ignore[arg-type]
        instruction_text_set(principal=principal, key=obj.key, text=obj.text, reason="edited in the admin")
        obj.pk = InstructionText.objects.get(organization=obj.organization, key=obj.key).pk
        obj.refresh_from_db()

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # "Delete" here is "back to the shipped wording": the organization's own stays in the audit log.
        return self.has_change_permission(request, obj)

    def delete_model(self, request: HttpRequest, obj: InstructionText) -> None:
        principal = principal_for_user(user=request.user, organization=obj.organization)  # type: ignore[arg-type]
        instruction_text_reset(principal=principal, key=obj.key, reason="reset in the admin")

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[InstructionText]) -> None:
        for text in queryset.select_related("organization"):
            self.delete_model(request, text)


@audit_target("instruction_text")
def _texts(ids: list[str], user: Any) -> dict[str, Target]:
    return {key: Target(f"agent text {key}") for key in ids}
