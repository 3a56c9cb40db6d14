"""The admin site curators work in: Django's admin with a review queue and a dashboard.

Every ``admin.register`` in the project lands here (``CuratorAdminConfig`` makes this the default
site). On top of the stock site it adds:

- the review queue (``/admin/review/``, curation.review), the curator's landing page, and on every
  page the number of items waiting in it (the sidebar and the index show it);
- the dashboard (the index page, curation.dashboard) for the organizations the person belongs to;
- "View site" pointing at the API documentation, the one page of the platform outside the admin.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import admin
from django.contrib.auth import REDIRECT_FIELD_NAME
from django.http import HttpRequest
from django.urls import URLPattern, URLResolver, path, reverse


class CuratorSite(admin.AdminSite):
    site_header = "Memory Platform"
    site_title = "Memory Platform"
    index_title = "Curate your organization's memory"
    site_url = "/api/docs/"
    login_template = "admin/curation/login.html"

    def get_urls(self) -> list[URLResolver | URLPattern]:
        from curation import review

        urls: list[URLResolver | URLPattern] = [
            path("review/", self.admin_view(review.queue_view), name="review_queue"),
            path("review/decide/", self.admin_view(review.decide_view), name="review_decide"),
            path("review/proposal/<uuid:proposal_id>/", self.admin_view(review.proposal_view), name="review_proposal"),
        ]
        return urls + super().get_urls()

    def each_context(self, request: HttpRequest) -> dict[str, Any]:
        context = super().each_context(request)
        from curation.review import waiting_count

        context["review_waiting"] = waiting_count(request) if request.user.is_active and request.user.is_staff else 0
        return context

    def login(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> Any:
        # After logging in, a curator lands on the review queue (which sends anyone without a
        # queue on to the dashboard), unless the login was asked for on the way to another page.
        if REDIRECT_FIELD_NAME not in request.GET and REDIRECT_FIELD_NAME not in request.POST:
            extra_context = {REDIRECT_FIELD_NAME: reverse("admin:review_queue"), **(extra_context or {})}
        extra_context = {
            "single_sign_on": bool(settings.SSO_OIDC_ISSUER),
            "password_login": settings.PASSWORD_LOGIN,
            "sso_failed": request.GET.get("sso") == "failed",
            **(extra_context or {}),
        }
        return super().login(request, extra_context)

    def index(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> Any:
        from curation.dashboard import dashboard_context

        return super().index(request, {**dashboard_context(request), **(extra_context or {})})
