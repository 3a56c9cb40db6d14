"""The consent form: which organization the client may act in, and with which role."""

from __future__ import annotations

from typing import Any

from django import forms
from oauth2_provider.forms import AllowForm

from organizations.models import Membership, Organization, Role, User


def grantable(user: User) -> list[tuple[Organization, str]]:
    """(organization, highest role) the person may grant: their memberships (every organization, as
    admin, for a platform superuser)."""
    if user.is_superuser:
        return [(organization, Role.ADMIN) for organization in Organization.objects.order_by("slug")]
    memberships = Membership.objects.filter(user=user).select_related("organization").order_by("organization__slug")
    return [(membership.organization, membership.role) for membership in memberships]


class ConsentForm(AllowForm):
    organization = forms.ChoiceField(label="Organization", required=False)
    role = forms.ChoiceField(label="Role", choices=Role.choices, required=False)

    def __init__(self, *args: Any, user: User, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.grantable = {organization.slug: role for organization, role in grantable(user)}
        self.fields["organization"].choices = [
            (organization.slug, f"{organization.name} ({organization.slug}), you are {role}")
            for organization, role in grantable(user)
        ]
        self.fields["role"].initial = Role.AGENT

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        slug, role = data.get("organization"), data.get("role")
        if not data.get("allow"):
            return data
        highest = self.grantable.get(slug or "")
        if highest is None:
            self.add_error("organization", "choose one of your organizations")
        elif not role:
            self.add_error("role", "choose the role the client acts with")
        elif Role.rank(role) > Role.rank(highest):
            self.add_error("role", f"you are {highest} in {slug}: you cannot grant {role}")
        return data
