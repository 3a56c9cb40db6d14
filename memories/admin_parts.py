"""The memory admin's parts: the form (which saves through the services, so a refused change shows
as a form error), the list's "shown" filter and its changelist (in the search's order when searched
by meaning), and the inlines of a memory's page. memories.admin puts them together."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.db.models import Q, QuerySet
from django.http import HttpRequest

from memories import services
from memories.models import Memory, MemoryVersion, Status
from memories.selectors import memories_personal_to_others, personal_to_others_q
from memory_platform import reasons
from memory_platform.exceptions import DomainError
from organizations.admin_scoping import ReadOnlyInline
from organizations.principal import Principal
from organizations.selectors import principal_for_user

EDITABLE_FIELDS = [
    "scope_type",
    "repository",
    "memory_type",
    "title",
    "current_content",
    "status",
    "importance",
    "tags",
    "metadata",
    "source",
    "valid_from",
    "valid_until",
]


def _principal(request: HttpRequest, memory_or_org: Any) -> Principal:
    organization = getattr(memory_or_org, "organization", memory_or_org)
    return principal_for_user(user=request.user, organization=organization)  # type: ignore[arg-type]


# How the admin names a memory it does not show the person looking (another person's personal one).
HIDDEN_MEMORY = "someone's personal memory"


def hidden_from(user: Any, memory_ids: list[Any]) -> set[Any]:
    """Of ``memory_ids``, the memories the admin does not show ``user``: other people's personal
    ones (memories.selectors.personal_to_others_q); none for a superuser."""
    if user.is_superuser or not memory_ids:
        return set()
    hidden = Memory.objects.filter(personal_to_others_q(user), pk__in=memory_ids)
    return set(hidden.values_list("pk", flat=True))


def memory_label(memory: Memory, hidden: set[Any]) -> str:
    return HIDDEN_MEMORY if memory.pk in hidden else memory.title


class MemoryPartInline(ReadOnlyInline):
    """A read-only table of what belongs to the memory on its page (versions here; links and
    facts, attached by knowledge/admin.py)."""

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # Part of the memory: whoever may see the memory sees it.
        return self.admin_site.get_model_admin(Memory).has_view_permission(request, obj)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        # Only ever shown under a memory the person may read; and never a part of one they may not.
        queryset = super().get_queryset(request)
        if request.user.is_superuser:
            return queryset
        return queryset.exclude(**{f"{self.fk_name or 'memory'}__in": memories_personal_to_others(request.user)})


class MemoryVersionInline(MemoryPartInline):
    model = MemoryVersion
    fields = ("version", "change", "changed_fields", "who", "reason", "created_at")
    readonly_fields = fields
    ordering = ["-version"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[MemoryVersion]:
        return super().get_queryset(request).select_related("token", "user")

    @admin.display(description="by")
    def who(self, obj: MemoryVersion) -> str:
        return obj.who


class ShownFilter(admin.SimpleListFilter):
    """By default the list shows what is in force, as every other read does: not deleted, not
    deprecated, not superseded. The rest is one click away (or chosen by its status)."""

    title = "shown"
    parameter_name = "shown"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("retired", "Deprecated or superseded"), ("deleted", "Deleted"), ("all", "Everything")]

    def choices(self, changelist: Any) -> Any:
        for choice in super().choices(changelist):
            if choice["display"] == "All":
                choice["display"] = "In force"
            yield choice

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        value = self.value()
        if value == "all":
            return queryset
        if value == "deleted":
            return queryset.filter(deleted_at__isnull=False)
        alive = queryset.filter(deleted_at__isnull=True)
        if value == "retired":
            return alive.filter(Q(status=Status.DEPRECATED) | Q(superseded_by__isnull=False))
        if request.GET.get("status__exact") == Status.DEPRECATED:
            return alive  # a status chosen explicitly is shown
        return alive.exclude(status=Status.DEPRECATED).filter(superseded_by__isnull=True)


class MemoryAdminForm(forms.ModelForm):
    """Saves through the services during validation, so a refused change shows as a form error.

    A change needs a reason, kept in the new version and the audit event, as every other decision."""

    request: HttpRequest

    reason = forms.CharField(
        required=False,
        max_length=reasons.REASON_MAX_CHARS,
        widget=forms.Textarea(attrs={"rows": 2, "cols": 80}),
        help_text="Why this change: kept in the memory's history and the audit log.",
    )

    class Meta:
        model = Memory
        fields = ["organization", *EDITABLE_FIELDS]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.instance._state.adding and "title" in self.fields:
            # As over MCP and REST, a new memory without a title gets one derived from its content.
            self.fields["title"].required = False
            self.fields["title"].help_text = "Leave blank to derive it from the content."

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        if self.errors:
            return cleaned
        data = {field: cleaned.get(field) for field in EDITABLE_FIELDS if field in self.fields}
        repository = data.pop("repository", None)
        data["repository"] = repository.slug if repository else None
        reason = cleaned.get("reason", "")
        try:
            reason = reasons.reason(reason)
            if self.instance._state.adding:
                principal = _principal(self.request, cleaned["organization"])
                self.saved, _ = services.memory_create(
                    principal=principal, data=data, reason=reason or "written in the admin"
                )
            else:
                changed = {field: data[field] for field in self.changed_data if field in data}
                if changed and not reason:
                    raise forms.ValidationError(
                        {"reason": "Say why you change it: the reason is kept in its history and the audit log."}
                    )
                principal = _principal(self.request, self.instance)
                self.saved = services.memory_update(
                    principal=principal, memory_id=self.instance.pk, data=changed, reason=reason
                )
        except DomainError as error:
            raise forms.ValidationError(error.message) from None
        return cleaned

    def _post_clean(self) -> None:
        # Django would now check the model's constraints on the form's half-built row; the
        # services have already checked and saved the real one (they set the owner, clear the
        # repository…), so such checks only add confusing second messages.
        return None
