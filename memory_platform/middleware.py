"""Project middleware."""

from __future__ import annotations

from django.http import HttpRequest
from django.middleware.common import CommonMiddleware as DjangoCommonMiddleware

# Machine clients would lose a POST body to a redirect: they get a 404 that names the right URL.
NO_SLASH_REDIRECT_PREFIXES = ("/api/", "/mcp")


class CommonMiddleware(DjangoCommonMiddleware):
    """Django's, minus the trailing-slash redirect for API paths."""

    def should_redirect_with_slash(self, request: HttpRequest) -> bool:
        if request.path_info.startswith(NO_SLASH_REDIRECT_PREFIXES):
            return False
        return super().should_redirect_with_slash(request)
