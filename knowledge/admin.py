from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.db.models import QuerySet
from django.forms.models import BaseInlineFormSet
from django.http import HttpRequest

from knowledge.mentions import mentioning_among
from knowledge.models import Entity, EntityAlias, MemoryLink, Mention, Predicate, Triple
from knowledge.words import alias_words, normalized_name
from memories.admin import MemoryAdmin
from memories.admin_parts import MemoryPartInline, hidden_from, memory_label
from memories.models import Memory
from memories.selectors import memories_personal_to_others, personal_to_others_q
from memory_platform.db.tenancy import same_organization
from organizations.admin_audit import Target, admin_url, audit_target, integer_ids
from organizations.admin_scoping import OrganizationScopedAdmin, ReadOnlyInline
from organizations.models import Role


class EntityAliasForm(forms.ModelForm):
    class Meta:
        model = EntityAlias
        fields = ["alias"]

    def clean_alias(self) -> str:
        # The unique (organization, normalized) constraint covers fields the form leaves out, so
        # Django would not check it: a clash must be a form error, not a failed save.
        alias = " ".join(str(self.cleaned_data["alias"]).split())
        if not alias:
            raise forms.ValidationError("An alias cannot be blank.")
        entity = self.instance.entity
        if entity.organization_id is not None:
            clash = (
                EntityAlias.objects.select_related("entity")
                .filter(
                    same_organization("entity"),
                    organization_id=entity.organization_id,
                    normalized=normalized_name(alias),
                )
                .exclude(pk=self.instance.pk)
                .first()
            )
            if clash is not None:
                owner = "this entity" if clash.entity_id == entity.pk else f"another entity ('{clash.entity.name}')"
                raise forms.ValidationError(f"'{alias}' already names {owner}.")
        return alias


class EntityAliasFormSet(BaseInlineFormSet):
    def clean(self) -> None:
        super().clean()
        seen: set[str] = set()
        for form in self.forms:
            alias = getattr(form, "cleaned_data", {}).get("alias")
            if not alias or form.cleaned_data.get("DELETE"):
                continue
            if normalized_name(alias) in seen:
                raise forms.ValidationError(f"'{alias}' is given twice.")
            seen.add(normalized_name(alias))


class EntityForm(forms.ModelForm):
    class Meta:
        model = Entity
        fields = ["organization", "name", "entity_type", "description", "created_at"]

    def clean(self) -> dict[str, Any]:
        cleaned: dict[str, Any] = super().clean() or {}
        name = " ".join(str(cleaned.get("name") or "").split())
        organization = cleaned.get("organization") or (self.instance.organization if self.instance.pk else None)
        if name and organization is not None:
            cleaned["name"] = name
            clash = (
                EntityAlias.objects.select_related("entity")
                .filter(same_organization("entity"), organization=organization, normalized=normalized_name(name))
                .exclude(entity_id=self.instance.pk)
                .first()
            )
            if clash is not None:
                self.add_error("name", f"'{name}' already names another entity ('{clash.entity.name}').")
        return cleaned


class EntityAliasInline(admin.TabularInline):
    model = EntityAlias
    form = EntityAliasForm
    formset = EntityAliasFormSet
    extra = 0
    fields = ["alias"]
    can_delete = False

    # Aliases are part of the entity: they follow the entity's organization roles, not Django's
    # per-model permissions (which no curator holds).
    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self.admin_site.get_model_admin(Entity).has_view_permission(request, obj)

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self.admin_site.get_model_admin(Entity).has_change_permission(request, obj)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self.admin_site.get_model_admin(Entity).has_change_permission(request, obj)


class TripleTimelineInline(ReadOnlyInline):
    """The subject's facts in valid-time order: what was true when, and when we learned it."""

    model = Triple
    fk_name = "subject"
    fields = (
        "predicate",
        "object",
        "valid_from",
        "valid_to",
        "recorded_at",
        "expired_at",
        "confidence",
        "invalidation_reason",
    )
    readonly_fields = fields
    ordering = ["predicate", "valid_from", "recorded_at"]
    verbose_name_plural = "fact timeline (as subject)"


@admin.register(Entity)
class EntityAdmin(OrganizationScopedAdmin):
    form = EntityForm
    list_display = ["name", "entity_type", "organization", "created_at"]
    list_filter = ["organization", "entity_type"]
    search_fields = ["name", "aliases__alias"]
    inlines = [EntityAliasInline, TripleTimelineInline]
    change_role = Role.CURATOR

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        # An entity's facts and aliases belong to its organization: it cannot move to another.
        readonly = list(super().get_readonly_fields(request, obj))
        return [*readonly, "organization"] if obj is not None else readonly

    def change_view(
        self, request: HttpRequest, object_id: str, form_url: str = "", extra_context: dict[str, Any] | None = None
    ) -> Any:
        # The memories that mention it, as far as this person may read them (never someone else's
        # personal memory): templates/admin/knowledge/entity/change_form.html lists them.
        entity = self.get_object(request, object_id)
        if entity is not None:
            readable = Memory.objects.filter(deleted_at__isnull=True).exclude(personal_to_others_q(request.user))
            memories, total = mentioning_among(readable, entity)
            extra_context = {**(extra_context or {}), "mentioning": memories, "mentioning_total": total}
        return super().change_view(request, object_id, form_url, extra_context)

    def save_related(self, request: HttpRequest, form: Any, formsets: Any, change: bool) -> None:
        super().save_related(request, form, formsets, change)
        # Entities are found by their aliases: the name must be one, as for entities made by use.
        entity = form.instance
        normalized = normalized_name(entity.name)
        if not EntityAlias.objects.filter(organization=entity.organization, normalized=normalized).exists():
            EntityAlias.objects.create(
                organization=entity.organization, entity=entity, alias=entity.name, normalized=normalized
            )

    def save_formset(self, request: HttpRequest, form: Any, formset: Any, change: bool) -> None:
        instances = formset.save(commit=False)
        for instance in instances:
            if isinstance(instance, EntityAlias):
                instance.organization = instance.entity.organization
                instance.normalized = normalized_name(instance.alias)
            instance.save()
        formset.save_m2m()


@admin.register(Triple)
class TripleAdmin(OrganizationScopedAdmin):
    list_display = [
        "subject",
        "predicate",
        "object",
        "valid_from",
        "valid_to",
        "recorded_at",
        "expired_at",
        "confidence",
    ]
    list_filter = ["organization", "predicate"]
    search_fields = ["subject__name", "object__name", "predicate"]
    list_select_related = ["subject", "object"]
    date_hierarchy = "valid_from"

    def get_queryset(self, request: HttpRequest) -> QuerySet[Triple]:
        queryset = super().get_queryset(request).filter(same_organization("subject", "object"))
        if request.user.is_superuser:
            return queryset
        # A fact learned from someone else's personal memory stays with that memory.
        return queryset.exclude(memory__in=memories_personal_to_others(request.user))

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # facts change by assertion and invalidation, which keep the history

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


@admin.register(Predicate)
class PredicateAdmin(OrganizationScopedAdmin):
    list_display = ["name", "organization", "multi_valued"]
    list_filter = ["organization", "multi_valued"]
    change_role = Role.CURATOR


@admin.register(MemoryLink)
class MemoryLinkAdmin(OrganizationScopedAdmin):
    list_display = ["source", "relation_type", "target", "organization", "created_at", "removed_at"]
    list_filter = ["organization", "relation_type"]
    # The ends are read by their ids, not joined: one may be another organization's system memory.
    list_select_related = ["organization"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[MemoryLink]:
        return _links_seen_by(request, super().get_queryset(request)).prefetch_related("source", "target")

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


def _links_seen_by(request: HttpRequest, links: QuerySet[MemoryLink]) -> QuerySet[MemoryLink]:
    """Links whose ends the person may read: none to or from someone else's personal memory."""
    if request.user.is_superuser:
        return links
    private = memories_personal_to_others(request.user)
    return links.exclude(source__in=private).exclude(target__in=private)


class OutgoingLinkInline(MemoryPartInline):
    """Links from this memory (the knowledge graph around it)."""

    def get_queryset(self, request: HttpRequest) -> QuerySet[MemoryLink]:
        return _links_seen_by(request, super().get_queryset(request))

    model = MemoryLink
    fk_name = "source"
    fields = ("relation_type", "target", "created_at", "removed_at")
    readonly_fields = fields
    verbose_name_plural = "links to other memories"


class IncomingLinkInline(OutgoingLinkInline):
    fk_name = "target"
    fields = ("relation_type", "source", "created_at", "removed_at")
    readonly_fields = fields
    verbose_name_plural = "links from other memories"


class LearnedFactInline(MemoryPartInline):
    """Temporal facts recorded from this memory (kg-assert with its memory_id)."""

    model = Triple
    fk_name = "memory"
    fields = ("subject", "predicate", "object", "valid_from", "valid_to", "recorded_at", "expired_at")
    readonly_fields = fields
    verbose_name_plural = "facts learned from this memory"


class MentionInline(MemoryPartInline):
    """The names the memory's text mentions, each with the entity it names (knowledge.mentions)."""

    model = Mention
    fk_name = "memory"
    fields = ("written", "kind", "entity")
    readonly_fields = fields
    ordering = ["pk"]
    verbose_name_plural = "names it mentions"

    @admin.display(description="entity")
    def entity(self, mention: Mention) -> str:
        return alias_words.keys(mention.organization_id).get(mention.key, "-")


# The memory's page shows its links, facts and the names it mentions. They are attached from here
# because knowledge builds on memories (its models point at Memory): memories/admin.py does not know
# this app.
MemoryAdmin.inlines = [*MemoryAdmin.inlines, OutgoingLinkInline, IncomingLinkInline, LearnedFactInline, MentionInline]


@audit_target("triple")
def _facts(ids: list[str], user: Any) -> dict[str, Target]:
    found = list(
        Triple.objects.filter(same_organization("subject", "object"), pk__in=integer_ids(ids)).select_related(
            "subject", "object"
        )
    )
    hidden = hidden_from(user, [t.memory_id for t in found if t.memory_id])
    return {
        str(t.pk): Target(
            f"fact: {t.subject.name} {t.predicate} {t.object.name}",
            None if t.memory_id in hidden else admin_url("admin:knowledge_triple_change", t.pk),
        )
        for t in found
    }


@audit_target("memory_link")
def _links(ids: list[str], user: Any) -> dict[str, Target]:
    found = list(MemoryLink.objects.filter(pk__in=integer_ids(ids)))
    ends = [pk for link in found for pk in (link.source_id, link.target_id)]
    # Read by their ids, not joined: a link's end may be another organization's system memory.
    memories = Memory.objects.in_bulk(ends)
    hidden = hidden_from(user, ends)

    def end(pk: Any) -> str:
        return memory_label(memories[pk], hidden) if pk in memories else str(pk)

    return {
        str(link.pk): Target(
            f"link: {end(link.source_id)} → {link.relation_type} → {end(link.target_id)}",
            None
            if {link.source_id, link.target_id} & hidden
            else admin_url("admin:knowledge_memorylink_change", link.pk),
        )
        for link in found
    }
