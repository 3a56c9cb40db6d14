"""Tenancy: organizations own everything; people and agents act in them through roles."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from typing import ClassVar

from django.contrib.auth.models import AbstractUser
from django.core.validators import RegexValidator
from django.db import models
from django.utils import timezone

slug_validator = RegexValidator(
    r"^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$",
    "Use 1-64 lowercase letters, digits and hyphens, starting and ending with a letter or digit.",
)


class User(AbstractUser):
    """The platform's user. Custom from the first migration so it can grow without pain."""


class Role(models.TextChoices):
    READER = "reader", "Reader"
    AGENT = "agent", "Agent"
    CURATOR = "curator", "Curator"
    ADMIN = "admin", "Admin"

    @classmethod
    def rank(cls, role: str) -> int:
        return [choice.value for choice in cls].index(role)


class Organization(models.Model):
    slug = models.SlugField(max_length=64, unique=True, validators=[slug_validator])
    name = models.CharField(max_length=200)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.slug


class Repository(models.Model):
    """A code repository (or any sub-area) of an organization: the ``repository`` memory scope."""

    organization = models.ForeignKey(
        Organization, on_delete=models.CASCADE, related_name="repositories", db_index=False
    )
    slug = models.SlugField(max_length=100, validators=[slug_validator])
    name = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["organization", "slug"]
        verbose_name_plural = "repositories"
        constraints = [
            models.UniqueConstraint(fields=["organization", "slug"], name="repository_slug_unique_per_org"),
        ]

    def __str__(self) -> str:
        return f"{self.organization.slug}/{self.slug}"


class Membership(models.Model):
    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="memberships", db_index=False)
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.READER)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "organization"], name="membership_unique_user_org"),
        ]

    def __str__(self) -> str:
        return f"{self.user} in {self.organization} as {self.role}"


TOKEN_PREFIX_LENGTH = 8
TOKEN_SECRET_BYTES = 32
TOKEN_SCHEME = "mp"  # noqa: S105 - a label, not a secret


def hash_token_secret(raw_token: str) -> str:
    # The token is 256 bits of randomness, so a fast hash is as safe here as a slow one.
    return hashlib.sha256(raw_token.encode()).hexdigest()


class ApiTokenQuerySet(models.QuerySet["ApiToken"]):
    def active(self) -> ApiTokenQuerySet:
        now = timezone.now()
        return self.filter(revoked_at__isnull=True).filter(
            models.Q(expires_at__isnull=True) | models.Q(expires_at__gt=now)
        )


class ApiToken(models.Model):
    """A bearer token. ``mp_<prefix>_<secret>``: the prefix finds the row, the hash proves the secret."""

    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="tokens")
    name = models.CharField(max_length=200, blank=True)
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.AGENT)
    user = models.ForeignKey(User, null=True, blank=True, on_delete=models.CASCADE, related_name="api_tokens")
    prefix = models.CharField(max_length=16, unique=True, editable=False)
    secret_hash = models.CharField(max_length=64, editable=False)
    created_at = models.DateTimeField(default=timezone.now)
    created_by = models.ForeignKey(
        User, null=True, blank=True, on_delete=models.SET_NULL, related_name="+", editable=False
    )
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)

    objects: ClassVar[ApiTokenQuerySet] = ApiTokenQuerySet.as_manager()  # type: ignore[assignment]

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{TOKEN_SCHEME}_{self.prefix}_… ({self.organization.slug}, {self.role})"

    @staticmethod
    def generate() -> tuple[str, str, str]:
        """Return (raw token, prefix, secret hash) for a new token."""
        prefix = secrets.token_hex(TOKEN_PREFIX_LENGTH // 2)
        raw = f"{TOKEN_SCHEME}_{prefix}_{secrets.token_urlsafe(TOKEN_SECRET_BYTES)}"
        return raw, prefix, hash_token_secret(raw)

    @staticmethod
    def split(raw_token: str) -> str | None:
        """The prefix of a well-formed raw token, or None."""
        parts = raw_token.split("_", 2)
        if len(parts) != 3 or parts[0] != TOKEN_SCHEME or len(parts[1]) != TOKEN_PREFIX_LENGTH:
            return None
        return parts[1]

    def matches(self, raw_token: str) -> bool:
        return hmac.compare_digest(self.secret_hash, hash_token_secret(raw_token))

    @property
    def is_active(self) -> bool:
        if self.revoked_at is not None:
            return False
        return self.expires_at is None or self.expires_at > timezone.now()

    @property
    def display(self) -> str:
        return f"{TOKEN_SCHEME}_{self.prefix}_…"


class AuditEvent(models.Model):
    """Append-only record of every change: who did what to which object, and why."""

    organization = models.ForeignKey(
        Organization, on_delete=models.CASCADE, related_name="audit_events", db_index=False
    )
    action = models.CharField(max_length=64)
    target_type = models.CharField(max_length=64)
    target_id = models.CharField(max_length=64)
    actor = models.CharField(max_length=200)
    user = models.ForeignKey(User, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    token = models.ForeignKey(ApiToken, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    reason = models.TextField(blank=True)
    data = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["organization", "target_type", "target_id"], name="audit_target_idx")]

    def __str__(self) -> str:
        return f"{self.action} {self.target_type} {self.target_id} by {self.actor}"
