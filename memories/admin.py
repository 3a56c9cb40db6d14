"""Curators' view of memories. Every change goes through the same services as MCP and REST, so
the admin obeys the same rules (roles, locked memories) and writes versions and audit events."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.utils import display_for_value
from django.db.models import Q, QuerySet
from django.http import HttpRequest

from memories import services
from memories.models import Memory, MemoryVersion, ScopeType
from memory_platform.exceptions import DomainError
from organizations.admin_scoping import OrganizationScopedAdmin, ReadOnlyInline
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


class MemoryPartInline(ReadOnlyInline):
    """A read-only table of what belongs to the memory on its page (versions here; links and
    facts, attached by knowledge/admin.py)."""

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # Part of the memory: whoever may see the memory sees it.
        return self.admin_site.get_model_admin(Memory).has_view_permission(request, obj)


class MemoryVersionInline(MemoryPartInline):
    model = MemoryVersion
    fields = ("version", "change", "changed_fields", "actor", "reason", "created_at")
    readonly_fields = fields
    ordering = ["-version"]


class DeletedFilter(admin.SimpleListFilter):
    title = "deleted"
    parameter_name = "deleted"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("no", "Not deleted"), ("yes", "Deleted")]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        if self.value() == "yes":
            return queryset.filter(deleted_at__isnull=False)
        if self.value() == "no":
            return queryset.filter(deleted_at__isnull=True)
        return queryset


class MemoryAdminForm(forms.ModelForm):
    """Saves through the services during validation, so a refused change shows as a form error."""

    request: HttpRequest

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
        try:
            if self.instance._state.adding:
                principal = _principal(self.request, cleaned["organization"])
                self.saved, _ = services.memory_create(principal=principal, data=data, reason="admin")
            else:
                principal = _principal(self.request, self.instance)
                changed = {field: data[field] for field in self.changed_data if field in data}
                self.saved = services.memory_update(
                    principal=principal, memory_id=self.instance.pk, data=changed, reason="admin edit"
                )
        except DomainError as error:
            raise forms.ValidationError(error.message) from None
        return cleaned

    def _post_clean(self) -> None:
        # Django would now check the model's constraints on the form's half-built row; the
        # services have already checked and saved the real one (they set the owner, clear the
        # repository…), so such checks only add confusing second messages.
        return None


@admin.register(Memory)
class MemoryAdmin(OrganizationScopedAdmin):
    form = MemoryAdminForm
    list_display = [
        "title",
        "organization",
        "repository",
        "scope_type",
        "memory_type",
        "status",
        "importance",
        "version",
        "updated_at",
        "is_deleted",
    ]
    list_filter = ["status", "scope_type", "memory_type", "importance", DeletedFilter, "organization"]
    search_fields = ["title", "current_content", "tags"]
    list_select_related = ["organization", "repository"]
    date_hierarchy = "created_at"
    # knowledge/admin.py adds the links and facts: knowledge builds on memories, not the reverse.
    inlines = [MemoryVersionInline]
    readonly_fields = [
        "id",
        "version",
        "owner",
        "created_at",
        "created_by",
        "created_by_token",
        "updated_at",
        "updated_by",
        "updated_by_token",
        "deleted_at",
        "superseded_by",
        "last_accessed_at",
        "access_count",
        "embedding_status",
        "embedding_model",
    ]
    actions = ["verify", "lock", "unlock", "deprecate", "soft_delete", "restore"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Memory]:
        queryset = super().get_queryset(request)
        if request.user.is_superuser:
            return queryset
        # Personal (user-scope) memories stay personal, even to curators.
        return queryset.exclude(Q(scope_type=ScopeType.USER) & ~Q(owner=request.user))

    # Read from MemoryAccess (memory.access), shown as the model fields they used to be.
    @admin.display(description="access count")
    def access_count(self, obj: Memory) -> str:
        return str(display_for_value(obj.access_count, self.get_empty_value_display()))

    @admin.display(description="last accessed at")
    def last_accessed_at(self, obj: Memory) -> str:
        return str(display_for_value(obj.last_accessed_at, self.get_empty_value_display()))

    @admin.display(boolean=True, description="deleted")
    def is_deleted(self, obj: Memory) -> bool:
        return obj.deleted_at is not None

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        editable = EDITABLE_FIELDS if obj is not None else ["organization", *EDITABLE_FIELDS]
        return [*editable, *self.readonly_fields]

    def get_form(self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any) -> Any:
        form_class = super().get_form(request, obj, change=change, **kwargs)
        return type(form_class.__name__, (form_class,), {"request": request})

    def save_form(self, request: HttpRequest, form: Any, change: bool) -> Memory:
        # The form already saved through the services: the admin's messages and history name
        # the memory as saved, not the form's unsaved copy.
        saved: Memory = form.saved
        return saved

    def save_model(self, request: HttpRequest, obj: Memory, form: Any, change: bool) -> None:
        return None

    def save_related(self, request: HttpRequest, form: Any, formsets: Any, change: bool) -> None:
        # Versions are written by the services, never by the inline. The admin's change message
        # still reads what each formset saved: nothing.
        for formset in formsets:
            formset.new_objects, formset.changed_objects, formset.deleted_objects = [], [], []

    def _apply(
        self, request: HttpRequest, queryset: QuerySet[Memory], label: str, action: Callable[..., Memory]
    ) -> None:
        done = 0
        for memory in queryset.select_related("organization"):
            try:
                action(principal=_principal(request, memory), memory_id=memory.pk, reason="admin action")
                done += 1
            except DomainError as error:
                self.message_user(request, f"{memory.title}: {error.message}", messages.ERROR)
        if done:
            self.message_user(request, f"{label} {done} memory(ies).", messages.SUCCESS)

    @admin.action(description="Verify selected memories")
    def verify(self, request: HttpRequest, queryset: QuerySet[Memory]) -> None:
        self._apply(request, queryset, "Verified", services.memory_verify)

    @admin.action(description="Lock selected memories")
    def lock(self, request: HttpRequest, queryset: QuerySet[Memory]) -> None:
        self._apply(request, queryset, "Locked", services.memory_lock)

    @admin.action(description="Unlock selected memories")
    def unlock(self, request: HttpRequest, queryset: QuerySet[Memory]) -> None:
        self._apply(request, queryset, "Unlocked", services.memory_unlock)

    @admin.action(description="Deprecate selected memories")
    def deprecate(self, request: HttpRequest, queryset: QuerySet[Memory]) -> None:
        self._apply(request, queryset, "Deprecated", services.memory_deprecate)

    @admin.action(description="Soft-delete selected memories")
    def soft_delete(self, request: HttpRequest, queryset: QuerySet[Memory]) -> None:
        self._apply(request, queryset, "Deleted", services.memory_delete)

    @admin.action(description="Restore selected memories")
    def restore(self, request: HttpRequest, queryset: QuerySet[Memory]) -> None:
        self._apply(request, queryset, "Restored", services.memory_restore)
