from __future__ import annotations

from django.db import models
from django.utils import timezone

from organizations.models import Organization, User


class SingleSignOnMembership(models.Model):
    """A membership the identity provider's groups gave (and take away at a later sign-in).

    Memberships an admin gave by hand have no row here, and single sign-on never removes them."""

    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="+", db_index=False)
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="+")
    granted_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "organization"], name="sso_membership_unique")]

    def __str__(self) -> str:
        return f"{self.user} in {self.organization} (single sign-on)"
