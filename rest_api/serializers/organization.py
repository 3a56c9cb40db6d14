"""Request and response shapes of repositories, tokens, texts, the write policy and status."""

from __future__ import annotations

from rest_framework import serializers

from memories.models import IMPORTANCE_MAX, IMPORTANCE_MIN, CredentialHandling, MemoryType
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


class WritePolicySerializer(serializers.Serializer):
    agent_active_types = serializers.ListField(
        child=serializers.ChoiceField(MemoryType.choices),
        help_text="Memory types an agent (any role below curator) may make active; other types are stored as drafts "
        "for a curator to review.",
    )
    agent_max_importance = serializers.IntegerField(
        min_value=IMPORTANCE_MIN,
        max_value=IMPORTANCE_MAX,
        help_text="The highest importance an agent may set; a higher one is stored as this and flagged.",
    )
    pin_requires_curator = serializers.BooleanField(
        help_text="An agent's pin (tag 'pinned' or metadata pinned: true) waits as a draft for a curator."
    )
    credentials = serializers.ChoiceField(
        CredentialHandling.choices,
        help_text="refuse: a write holding a credential fails, naming its kind and place; redact: it is stored with "
        "each credential replaced by [REDACTED: kind]. Either way no credential is ever stored.",
    )
    updated_at = serializers.DateTimeField(allow_null=True, read_only=True)
    updated_by = serializers.CharField(allow_null=True, read_only=True)


class WritePolicyUpdateSerializer(StrictSerializer):
    agent_active_types = serializers.ListField(child=serializers.ChoiceField(MemoryType.choices), required=False)
    agent_max_importance = serializers.IntegerField(min_value=IMPORTANCE_MIN, max_value=IMPORTANCE_MAX, required=False)
    pin_requires_curator = serializers.BooleanField(required=False)
    credentials = serializers.ChoiceField(CredentialHandling.choices, required=False)
    reason = serializers.CharField(
        required=False, allow_blank=True, max_length=2000, help_text="Kept in the audit log."
    )


class ExportQuerySerializer(serializers.Serializer):
    embeddings = serializers.BooleanField(
        default=False, help_text="Include the memories' vectors (else the importing platform computes them)."
    )


class ImportQuerySerializer(serializers.Serializer):
    keep_ids = serializers.BooleanField(
        default=False,
        help_text="Keep the file's ids (into an organization emptied for it); by default every row gets a new one.",
    )


class ImportResultSerializer(serializers.Serializer):
    organization = serializers.CharField(help_text="The organization imported into.")
    counts = serializers.DictField(child=serializers.IntegerField(), help_text="Rows imported, by kind.")
    pending_embeddings = serializers.IntegerField(help_text="Memories the worker embeds after the import.")
    run = serializers.UUIDField(help_text="The import's id (`manage.py undo_import` takes it back).")
    resumed_from = serializers.IntegerField(
        help_text="The line an import cut off earlier went on after (0: it started from the top)."
    )
