"""The write policy in the admin: an organization's admins choose what agents may write unreviewed."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.http import HttpRequest

from memories.models import MemoryType, WritePolicy
from memories.write_policy import POLICY_FIELDS, write_policy_update
from memory_platform.exceptions import DomainError
from organizations.admin_scoping import OrganizationScopedAdmin
from organizations.models import Role
from organizations.selectors import principal_for_user


class WritePolicyForm(forms.ModelForm):
    agent_active_types = forms.MultipleChoiceField(
        choices=MemoryType.choices,
        widget=forms.CheckboxSelectMultiple,
        required=False,
        help_text="Types an agent may make active without review; any other type is stored as a draft.",
    )
    reason = forms.CharField(
        required=False, max_length=2000, widget=forms.Textarea(attrs={"rows": 2}), help_text="Kept in the audit log."
    )

    class Meta:
        model = WritePolicy
        fields = ["organization", *POLICY_FIELDS]


@admin.register(WritePolicy)
class WritePolicyAdmin(OrganizationScopedAdmin):
    form = WritePolicyForm
    list_display = ["organization", "agent_max_importance", "pin_requires_curator", "credentials", "updated_at"]
    readonly_fields = ["updated_at", "updated_by"]
    change_role = Role.ADMIN
    add_role = Role.ADMIN

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        # One policy per organization: it stays the one it was made for.
        return [*self.readonly_fields, "organization"] if obj is not None else self.readonly_fields

    def save_model(self, request: HttpRequest, obj: WritePolicy, form: Any, change: bool) -> None:
        # Through the service, as over REST: the admin role is checked and the change is audited.
        principal = principal_for_user(user=request.user, organization=obj.organization)  # type: ignore[arg-type]
        data = {name: form.cleaned_data[name] for name in POLICY_FIELDS if name in form.cleaned_data}
        try:
            saved = write_policy_update(principal=principal, data=data, reason=form.cleaned_data.get("reason", ""))
        except DomainError as error:
            raise forms.ValidationError(error.message) from None
        obj.updated_at, obj.updated_by = saved.updated_at, saved.updated_by
