"""Every read of memories, already limited to what the principal may see.

Visibility: ``system`` memories are shared by every organization; ``organization`` and
``repository`` memories by the whole owning organization; ``user`` memories by their owner only.
Anything else is indistinguishable from a memory that does not exist.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime
from typing import Any

from django.db.models import Q, QuerySet
from django.db.models.functions import Now

from memories import validation
from memories.models import Memory, MemoryVersion, ScopeType, Status
from memory_platform import pagination
from memory_platform.db.tenancy import outer_organization
from memory_platform.exceptions import NotFound, ValidationError
from memory_platform.pagination import Keyset, Kind
from organizations.principal import Principal
from organizations.selectors import STATUS_REPOSITORIES_SHOWN, repository_list, repository_named


def personal_to_others_q(user: Any) -> Q:
    """Other people's personal (user-scope) memories, which nobody but their owner reads: not the
    organization's other members, nor its curators and admins. The one rule every list applies
    across organizations (the admin, the review queue); memory_visibility_q states it for one
    principal in the form the search plans best (tests/admin prove the two agree)."""
    personal = Q(scope_type=ScopeType.USER)
    if user is None or getattr(user, "pk", None) is None:
        return personal
    return personal & ~Q(owner_id=user.pk)


def memories_personal_to_others(user: Any) -> QuerySet[Memory]:
    """personal_to_others_q as a subquery, to leave out what points at such memories
    (``links.exclude(source__in=memories_personal_to_others(user))``): those of the organization
    of the row it is asked for (a memory points only at its own organization's personal ones)."""
    return Memory.objects.filter(personal_to_others_q(user), organization=outer_organization())


def memory_visibility_arms(principal: Principal) -> tuple[Q, Q]:
    """What the principal may read, in two parts that never overlap: its organization's memories
    (every scope but other people's personal ones) and the system-wide memories of the other
    organizations. Apart, each is planned with the indexes that serve it (the first with the
    organization's own search indexes, memories.search.tenant_indexes, and an estimate of its size
    the planner can trust)."""
    scopes = Q(scope_type__in=[ScopeType.SYSTEM, ScopeType.ORGANIZATION, ScopeType.REPOSITORY])
    if principal.user is not None:
        scopes |= Q(scope_type=ScopeType.USER, owner=principal.user)
    own = Q(organization=principal.organization) & scopes
    return own, Q(scope_type=ScopeType.SYSTEM) & ~Q(organization=principal.organization)


def memory_visibility_q(principal: Principal) -> Q:
    own, shared = memory_visibility_arms(principal)
    return own | shared


def memory_visible_queryset(principal: Principal, *, include_deleted: bool = False) -> QuerySet[Memory]:
    queryset = Memory.objects.filter(memory_visibility_q(principal))
    if not include_deleted:
        queryset = queryset.filter(deleted_at__isnull=True)
    return queryset


def memory_visible_arms(
    principal: Principal, *, include_deleted: bool = False
) -> tuple[QuerySet[Memory], QuerySet[Memory]]:
    """memory_visible_queryset in its two parts (memory_visibility_arms)."""
    alive = Q() if include_deleted else Q(deleted_at__isnull=True)
    own, shared = memory_visibility_arms(principal)
    return Memory.objects.filter(own & alive), Memory.objects.filter(shared & alive)


def memory_get(
    principal: Principal, memory_id: Any, *, include_deleted: bool = False, for_update: bool = False, field: str = "id"
) -> Memory:
    """The visible memory, else NotFound: every read and write finds "its" memory through here.

    ``for_update`` locks the row until the transaction ends (writes); ``field`` names the argument
    the id came from, in both the invalid-id and the not-found message.
    """
    parsed = validation.memory_id(memory_id, field)
    queryset = memory_visible_queryset(principal, include_deleted=include_deleted)
    if for_update:
        queryset = queryset.select_for_update(of=("self",))
    memory = queryset.select_related("organization", "repository", "owner").filter(pk=parsed).first()
    if memory is None:
        raise NotFound(f"memory {parsed} not found" if field == "id" else f"memory {parsed} ({field}) not found")
    return memory


def memory_get_many(principal: Principal, memory_ids: list[Any]) -> list[Memory]:
    """The visible memories among ``memory_ids``, in the order asked; unknown ids are left out."""
    parsed = [validation.memory_id(value) for value in memory_ids]
    found = {
        memory.id: memory
        for memory in memory_visible_queryset(principal)
        .select_related("organization", "repository", "owner")
        .filter(pk__in=parsed)
    }
    return [found[memory_id] for memory_id in parsed if memory_id in found]


@dataclass(frozen=True)
class MemoryFilters:
    scope_type: str | None = None
    memory_type: list[str] = field(default_factory=list)
    status: list[str] = field(default_factory=list)
    repository: str | None = None
    tags: list[str] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    min_importance: int | None = None
    include_deleted: bool = False
    # Validity: by default only memories valid now; at ``valid_at``, those valid then; with
    # ``include_expired``, all of them.
    valid_at: datetime | None = None
    include_expired: bool = False
    # Memories that mention this name (an entity by any of its names or aliases, or any name or
    # identifier as written): the keys it is mentioned by, once check_filters has read them.
    mentions: str | None = None
    mention_keys: tuple[str, ...] = ()

    FIELDS = (
        "scope_type",
        "memory_type",
        "status",
        "repository",
        "tags",
        "metadata",
        "min_importance",
        "include_deleted",
        "valid_at",
        "include_expired",
        "mentions",
    )

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any] | None) -> MemoryFilters:
        """Parse filters from an interface; every bad value gets a message naming it."""
        data = data or {}
        unknown = set(data) - set(cls.FIELDS)
        if unknown:
            raise ValidationError(
                f"unknown filter(s): {', '.join(sorted(unknown))}; available filters: {', '.join(cls.FIELDS)}"
            )

        def many(value: Any, parse: Any) -> list[str]:
            if value in (None, "", []):
                return []
            values = value if isinstance(value, list) else [value]
            return [parse(item) for item in values]

        include_deleted = _flag(data, "include_deleted")
        include_expired = _flag(data, "include_expired")
        valid_at = validation.aware_datetime(data.get("valid_at"), "valid_at")
        if valid_at is not None and include_expired:
            raise ValidationError(
                "valid_at asks what was valid at one moment and include_expired for everything; send one of them",
                details={"field": "valid_at"},
            )
        min_importance = data.get("min_importance")
        mentions = data.get("mentions")
        if mentions is not None and (not isinstance(mentions, str) or not mentions.strip() or len(mentions) > 200):
            raise ValidationError(
                "filters.mentions must be a name of at most 200 characters", details={"field": "filters.mentions"}
            )
        return cls(
            scope_type=validation.scope_type(data["scope_type"]) if data.get("scope_type") else None,
            memory_type=many(data.get("memory_type"), validation.memory_type),
            status=many(data.get("status"), validation.status),
            repository=validation.repository_slug(data.get("repository")),
            tags=validation.tags(data.get("tags")),
            metadata=validation.metadata(data.get("metadata")),
            min_importance=validation.importance(min_importance) if min_importance is not None else None,
            include_deleted=include_deleted,
            valid_at=valid_at,
            include_expired=include_expired,
            mentions=validation.without_nul(mentions, "filters.mentions").strip() if mentions else None,
        )


def _flag(data: Mapping[str, Any], name: str) -> bool:
    value = data.get(name, False)
    if not isinstance(value, bool):
        raise ValidationError(f"{name} must be true or false", details={"field": name})
    return value


def valid_q(moment: datetime | Now) -> Q:
    """Memories valid at ``moment``: valid_from <= moment < valid_until, either end open.

    Now(), not the clock's value: "valid now" is then the same SQL for every search, which the
    scope-size cache (memories.search.caches) keys on."""
    return (Q(valid_from__isnull=True) | Q(valid_from__lte=moment)) & (
        Q(valid_until__isnull=True) | Q(valid_until__gt=moment)
    )


def memory_filter(queryset: QuerySet[Memory], filters: MemoryFilters) -> QuerySet[Memory]:
    """Apply filters to an already-visible queryset (shared by list and search)."""
    if filters.scope_type:
        queryset = queryset.filter(scope_type=filters.scope_type)
    if filters.memory_type:
        queryset = queryset.filter(memory_type__in=filters.memory_type)
    if filters.status:
        queryset = queryset.filter(status__in=filters.status)
    else:
        # Deprecated and superseded knowledge stays retrievable, but only when asked for by status.
        queryset = queryset.exclude(status=Status.DEPRECATED).filter(superseded_by__isnull=True)
    if filters.repository:
        # Hierarchical: a repository sees its own memories plus everything above it.
        queryset = queryset.filter(~Q(scope_type=ScopeType.REPOSITORY) | Q(repository__slug=filters.repository))
    if filters.tags:
        queryset = queryset.filter(tags__contains=filters.tags)
    if filters.metadata:
        queryset = queryset.filter(metadata__contains=filters.metadata)
    if filters.min_importance is not None:
        queryset = queryset.filter(importance__gte=filters.min_importance)
    if not filters.include_expired:
        queryset = queryset.filter(valid_q(filters.valid_at or Now()))
    if filters.mentions is not None:
        queryset = queryset.filter(mentioning.memories(filters.mention_keys))
    return queryset


class MentionSource:
    """What the mentions filter reads, given by the knowledge app (its ready()), which keeps the names
    memories mention: the keys a name is mentioned by in an organization, and a condition on memories
    that mention one of them. Without it, no memory mentions anything."""

    def __init__(self) -> None:
        self.keys: Callable[[int, str], tuple[str, ...]] = lambda organization_id, name: ()
        self.condition: Callable[[tuple[str, ...]], Q] = lambda keys: Q(pk__in=[])

    def memories(self, keys: tuple[str, ...]) -> Q:
        return self.condition(keys) if keys else Q(pk__in=[])


mentioning = MentionSource()


def check_filters(principal: Principal, filters: MemoryFilters) -> MemoryFilters:
    """Refuse filters that name what the organization does not have (a typo'd repository would
    otherwise filter as if it were any repository, silently); the filters to apply, with the keys
    the name of ``mentions`` is mentioned by in the principal's organization."""
    if filters.repository:
        repository_named(principal, filters.repository, field="filters.repository")
    if filters.mentions is not None:
        filters = replace(filters, mention_keys=mentioning.keys(principal.organization.pk, filters.mentions))
    return filters


def memory_list(principal: Principal, filters: MemoryFilters | None = None) -> QuerySet[Memory]:
    """Visible memories matching the filters, most important and newest first."""
    filters = check_filters(principal, filters or MemoryFilters())
    queryset = memory_visible_queryset(principal, include_deleted=filters.include_deleted)
    return (
        memory_filter(queryset, filters)
        .select_related("organization", "repository", "owner")
        .order_by("-importance", "-created_at", "-id")
    )


def memory_index(principal: Principal, *, limit: int) -> QuerySet[Memory]:
    """The most recently changed memories in force now (memory://index): valid now, never deleted,
    deprecated or superseded."""
    return (
        memory_visible_queryset(principal)
        .filter(valid_q(Now()), superseded_by__isnull=True)
        .exclude(status=Status.DEPRECATED)
        .select_related("organization", "repository")
        .order_by("-updated_at", "-id")[:limit]
    )


# The orders a memory list may take; each ends in the id, so pages neither skip nor repeat.
MEMORY_SORTS = {
    "importance": Keyset.of(("-importance", Kind.WHOLE), ("-created_at", Kind.MOMENT), ("-id", Kind.UUID)),
    "created_at": Keyset.of(("-created_at", Kind.MOMENT), ("-id", Kind.UUID)),
    "updated_at": Keyset.of(("-updated_at", Kind.MOMENT), ("-id", Kind.UUID)),
    "title": Keyset.of(("title", Kind.TEXT), ("id", Kind.UUID)),
}


def memory_page(
    principal: Principal,
    *,
    filters: MemoryFilters,
    limit: int,
    cursor: str | None,
    sort_by: str = "importance",
    fingerprint: str | None = None,
) -> pagination.CursorPage[Memory]:
    """One page of ``memory_list`` in a ``MEMORY_SORTS`` order, after ``cursor``.

    ``fingerprint`` names the listing its cursors belong to; by default the filters, order and limit.
    """
    keyset = MEMORY_SORTS.get(sort_by)
    if keyset is None:
        raise ValidationError(
            f"unknown sort_by '{sort_by}'; use one of: {', '.join(MEMORY_SORTS)}", details={"field": "sort_by"}
        )
    if fingerprint is None:
        fingerprint = pagination.fingerprint({"filters": asdict(filters), "sort_by": sort_by, "limit": limit})
    return pagination.cursor_page(
        memory_list(principal, filters), keyset, limit=limit, cursor=cursor, fingerprint=fingerprint
    )


def memory_versions(principal: Principal, memory_id: Any) -> QuerySet[MemoryVersion]:
    memory = memory_get(principal, memory_id, include_deleted=True)
    return MemoryVersion.objects.filter(memory=memory).order_by("-version")


def memory_version_counts(memory_ids: list[Any]) -> dict[Any, int]:
    from django.db.models import Count

    rows = MemoryVersion.objects.filter(memory_id__in=memory_ids).values("memory_id").annotate(n=Count("id"))
    return {row["memory_id"]: row["n"] for row in rows}


@dataclass(frozen=True)
class MemoryCounts:
    """How many memories there are, by status and by type."""

    by_status: dict[str, int]
    by_type: dict[str, int]

    @property
    def total(self) -> int:
        return sum(self.by_status.values())


def memory_counts(queryset: QuerySet[Memory]) -> MemoryCounts:
    """``queryset``'s memories counted by status and by type in one pass: in a large organization the
    two counts and the total, asked apart, read every one of its rows three times."""
    from django.db.models import Count

    by_status: dict[str, int] = {}
    by_type: dict[str, int] = {}
    for status, memory_type, n in queryset.order_by().values_list("status", "memory_type").annotate(n=Count("id")):
        by_status[status] = by_status.get(status, 0) + n
        by_type[memory_type] = by_type.get(memory_type, 0) + n
    return MemoryCounts(by_status=by_status, by_type=by_type)


def memory_status_report(principal: Principal) -> dict[str, Any]:
    """Health and counts as the principal sees them (for status tools and pages)."""
    from memories.health import platform_health
    from memories.models import EmbeddingStatus

    health = platform_health()
    visible = memory_visible_queryset(principal)
    counts = memory_counts(visible)
    pending = visible.filter(embedding_status=EmbeddingStatus.PENDING).count()
    return {
        "status": health.status,
        "organization": principal.organization.slug,
        "role": principal.role,
        "principal": principal.label,
        "database": {"ok": True, "version": health.server_version, "pgvector": health.pgvector_version},
        "embedding": {**health.embedding, "pending_memories": pending},
        "worker": health.worker,
        "memories": {"total": counts.total, "by_status": counts.by_status, "by_type": counts.by_type},
        "repositories": list(repository_list(principal).values_list("slug", flat=True)[:STATUS_REPOSITORIES_SHOWN]),
    }
