from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest
from django.utils import timezone

from instructions.models import InstructionText
from instructions.selectors import default_text
from organizations.admin_scoping import OrganizationScopedAdmin
from organizations.models import Role


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
        obj.updated_by = request.user  # type: ignore[assignment]
        obj.updated_at = timezone.now()
        super().save_model(request, obj, form, change)
