"""Request and response shapes of repositories, tokens, texts and status."""

from __future__ import annotations

from rest_framework import serializers

from organizations.models import Role, slug_validator
from organizations.selectors import STATUS_REPOSITORIES_SHOWN
from rest_api.serializers.base import StrictSerializer

# --- organization ----------------------------------------------------------------------------------


class RepositorySerializer(serializers.Serializer):
    slug = serializers.SlugField()
    name = serializers.CharField(allow_blank=True)
    created_at = serializers.DateTimeField()


class RepositoryCreateSerializer(StrictSerializer):
    # The model's rule (lowercase, 1-64 characters), so the schema documents what is accepted.
    slug = serializers.RegexField(
        slug_validator.regex, max_length=64, help_text="1-64 lowercase letters, digits and hyphens."
    )
    name = serializers.CharField(max_length=200, required=False, allow_blank=True)


class TokenSerializer(serializers.Serializer):
    prefix = serializers.CharField(help_text="Public part of the token; revoke by it.")
    name = serializers.CharField(allow_blank=True)
    role = serializers.ChoiceField(Role.choices)
    user = serializers.CharField(source="user.username", allow_null=True)
    created_at = serializers.DateTimeField()
    expires_at = serializers.DateTimeField(allow_null=True)
    revoked_at = serializers.DateTimeField(allow_null=True)
    last_used_at = serializers.DateTimeField(allow_null=True)


class IssuedTokenSerializer(TokenSerializer):
    token = serializers.CharField(help_text="The secret token. Shown once: store it now.")


class TokenCreateSerializer(StrictSerializer):
    role = serializers.ChoiceField(Role.choices)
    name = serializers.CharField(max_length=200, required=False, allow_blank=True)
    user = serializers.CharField(required=False, max_length=150, help_text="Username of a member it acts for.")
    expires_at = serializers.DateTimeField(required=False, help_text="Must be in the future.")


class TextSerializer(serializers.Serializer):
    key = serializers.CharField()
    label = serializers.CharField()
    text = serializers.CharField()
    overridden = serializers.BooleanField(help_text="True when the organization replaced the shipped default.")
    updated_at = serializers.DateTimeField(allow_null=True)


class TextUpdateSerializer(StrictSerializer):
    text = serializers.CharField(max_length=100_000, help_text="The organization's wording (Markdown).")


class StatusSerializer(serializers.Serializer):
    status = serializers.ChoiceField(["ok", "degraded"])
    organization = serializers.CharField()
    role = serializers.ChoiceField(Role.choices)
    principal = serializers.CharField()
    database = serializers.DictField()
    embedding = serializers.DictField()
    worker = serializers.DictField(
        help_text="The background worker's heartbeat: ok, when it last beat, seconds ago, and the problem if any."
    )
    memories = serializers.DictField()
    repositories = serializers.ListField(
        child=serializers.CharField(),
        help_text=f"The organization's repository slugs (the first {STATUS_REPOSITORIES_SHOWN}, alphabetically).",
    )
    lifecycle = serializers.DictField(help_text="Open proposals by kind, and the last run of each lifecycle worker.")
