"""Searching the memory list by meaning (the hybrid search agents use), ranked among the memories
the list's filters show, best match first with its score; or by words, as Django's admin does."""

from __future__ import annotations

from typing import Any, Literal

from django.contrib import admin, messages
from django.contrib.admin.views.main import ORDER_VAR, ChangeList
from django.db.models import Case, FloatField, IntegerField, QuerySet, Value, When
from django.http import HttpRequest, HttpResponse

from memories.models import Memory, MemoryType, ScopeType, Status
from memories.search import SearchParams, memory_search
from memories.selectors import MemoryFilters
from memory_platform.exceptions import SearchUnavailable
from organizations.admin_scoping import organizations_for
from organizations.selectors import principal_for_user

# How many memories a search by meaning shows, ranked (a changelist page holds 50), and how many it
# ranks in each organization before the list's remaining filters narrow them.
MEANING_RESULTS = 50
MEANING_CANDIDATES = 200
SEARCH_MODES = {"meaning": "by meaning", "words": "by words"}


class MemoryChangeList(ChangeList):
    """The memory list; searched by meaning, it is in the search's order (best match first) and no
    column claims to sort it, until the curator sorts by one."""

    ranked_by_meaning = False

    def get_queryset(self, request: HttpRequest, exclude_parameters: Any = None) -> QuerySet[Memory]:
        queryset: QuerySet[Memory] = super().get_queryset(request, exclude_parameters)
        # MemoryAdmin.get_search_results ranked it (and ordered it so, no column being chosen).
        self.ranked_by_meaning = "search_rank" in queryset.query.annotations and not self.params.get(ORDER_VAR)
        return queryset

    def get_ordering_field_columns(self) -> dict[int, Literal["desc", "asc"]]:
        return {} if self.ranked_by_meaning else dict(super().get_ordering_field_columns())


class MeaningSearch(admin.ModelAdmin):
    """The memory admin's search: a ``mode`` (meaning or words) beside the search box."""

    def get_changelist(self, request: HttpRequest, **kwargs: Any) -> type[ChangeList]:
        return MemoryChangeList

    def changelist_view(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> HttpResponse:
        # ``mode`` is ours, not a field lookup: take it out before the changelist reads the query.
        query = request.GET.copy()
        mode: str = query.pop("mode", ["meaning"])[-1]
        request.GET = query  # type: ignore[assignment]
        request.memory_search_mode = mode if mode in SEARCH_MODES else "meaning"  # type: ignore[attr-defined]
        return super().changelist_view(request, extra_context)

    def get_changelist_instance(self, request: HttpRequest) -> Any:
        changelist = super().get_changelist_instance(request)
        # Read by the search form (templates/admin/memories/memory/search_form.html).
        changelist.search_mode = self._search_mode(request)  # type: ignore[attr-defined]
        changelist.search_modes = SEARCH_MODES  # type: ignore[attr-defined]
        return changelist

    @staticmethod
    def _search_mode(request: HttpRequest) -> str:
        return str(getattr(request, "memory_search_mode", "meaning"))

    def get_search_results(self, request: HttpRequest, queryset: QuerySet[Memory], search_term: str) -> Any:
        if not search_term.strip() or self._search_mode(request) != "meaning":
            return super().get_search_results(request, queryset, search_term)
        try:
            ranked = self._by_meaning(request, queryset, search_term)
        except SearchUnavailable as error:
            self.message_user(
                request, f"Search by meaning is unavailable ({error}); searched by words.", messages.WARNING
            )
            return super().get_search_results(request, queryset, search_term)
        rank = Case(*(When(pk=pk, then=Value(i)) for i, (pk, _) in enumerate(ranked)), output_field=IntegerField())
        score = Case(*(When(pk=pk, then=Value(relevance)) for pk, relevance in ranked), output_field=FloatField())
        found = queryset.filter(pk__in=[pk for pk, _ in ranked]).annotate(search_rank=rank, search_score=score)
        # Best match first, unless the curator sorted by a column.
        return (found if ORDER_VAR in request.GET else found.order_by("search_rank", "pk")), False

    def _by_meaning(self, request: HttpRequest, queryset: QuerySet[Memory], query: str) -> list[tuple[Any, float]]:
        """The best matches among the memories the list shows (its filters applied), best first, each
        with its relevance."""
        scored: list[tuple[float, Any]] = []
        filters = self._search_filters(request)
        organizations = organizations_for(request).filter(pk__in=queryset.values("organization_id"))
        for organization in organizations:
            principal = principal_for_user(user=request.user, organization=organization)  # type: ignore[arg-type]
            params = SearchParams(query=query, filters=filters, limit=MEANING_CANDIDATES)
            # A curator looking is not an agent using: the hits' access counts and freshness stay as they are.
            page = memory_search(principal, params, counts_as_read=False)
            scored.extend((hit.relevance or 0.0, hit.memory.pk) for hit in page.hits)
        scored.sort(key=lambda pair: -pair[0])
        # The list's other filters (importance, date, organization) narrow the ranked memories.
        shown = set(queryset.filter(pk__in=[pk for _, pk in scored]).values_list("pk", flat=True))
        return [(pk, relevance) for relevance, pk in scored if pk in shown][:MEANING_RESULTS]

    @staticmethod
    def _search_filters(request: HttpRequest) -> MemoryFilters:
        """The list's status, scope, type and deleted filters as the search's own, so the ranking
        is done among the memories the list shows (not among all, then narrowed to a few)."""
        chosen = request.GET
        status = chosen.get("status__exact")
        shown = chosen.get("shown")
        statuses: list[str] = []  # by default what is in force: not deprecated, not superseded
        if status in Status.values:
            statuses = [status]
        elif shown in ("retired", "deleted", "all"):
            statuses = list(Status.values)
        return MemoryFilters(
            status=statuses,
            scope_type=chosen.get("scope_type__exact") if chosen.get("scope_type__exact") in ScopeType.values else None,
            memory_type=[kind] if (kind := chosen.get("memory_type__exact")) in MemoryType.values else [],
            include_deleted=shown in ("deleted", "all"),
            include_expired=True,
        )
