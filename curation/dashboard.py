"""The admin's index page as a dashboard of one organization (curation.selectors says the numbers)."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from curation import charts
from curation.review import waiting_drafts, waiting_proposals
from curation.selectors import dashboard
from organizations.admin_scoping import organizations_for
from organizations.models import Role


def dashboard_context(request: HttpRequest) -> dict[str, Any]:
    """The dashboard of the organization asked for (``?organization=slug``), else of the person's first."""
    organizations = list(organizations_for(request).order_by("slug")[:200])
    if not organizations:
        return {"dashboard": None, "dashboard_organizations": []}
    wanted = request.GET.get("organization")
    organization = next((org for org in organizations if org.slug == wanted), organizations[0])
    numbers = dashboard(organization, request.user)
    written = charts.stacked_columns(
        "Memories written per day, last 30 days",
        [day.strftime("%b %d") for day in numbers.days],
        [
            charts.Series("by agents", "agents", numbers.written_by_agents),
            charts.Series("by people", "people", numbers.written_by_people),
        ],
    )
    curates = organizations_for(request, Role.CURATOR).filter(pk=organization.pk)
    return {
        "dashboard": numbers,
        # This organization's queue (the header's badge counts every organization the person curates).
        "organization_waiting": waiting_drafts(request.user, curates).count()
        + waiting_proposals(request.user, curates).count(),
        "dashboard_organizations": organizations,
        "status_chart": charts.bar_chart("Memories by status", numbers.by_status, css="status"),
        "type_chart": charts.bar_chart("Memories by type", numbers.by_type, css="type"),
        "written_chart": written,
        "tags_chart": charts.bar_chart("Most-used tags", numbers.tags, css="tag"),
    }
