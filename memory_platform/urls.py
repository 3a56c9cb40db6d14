from typing import Any

from django.conf import settings
from django.contrib import admin
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import include, path
from django.views import defaults
from django.views.decorators.csrf import csrf_exempt
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from identity.views import SignInView
from memory_platform.views import healthz, metrics_view
from organizations.password_links import SetPasswordDoneView, SetPasswordView
from rest_api.errors import json_bad_request, json_not_found, json_server_error


@csrf_exempt
def mcp_endpoint(request: HttpRequest) -> HttpResponse:
    """/mcp, whose view and the MCP SDK under it (a second of imports) are loaded on its first
    request, not with the URLconf: the commands that load it to check it (`migrate`, `shell`, every
    management command) never need them, and a web process loads them as it starts
    (memory_platform.wsgi), before its first request."""
    from mcp_api.views import mcp_endpoint as endpoint

    return endpoint(request)


urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("metrics", metrics_view, name="metrics"),
    path("admin/", admin.site.urls),
    # A new member sets their password here, from the one-time link add_member (or the admin) gives.
    path("accounts/set-password/done/", SetPasswordDoneView.as_view(), name="set-password-done"),
    path("accounts/set-password/<uidb64>/<token>/", SetPasswordView.as_view(), name="set-password"),
    path("mcp", mcp_endpoint, name="mcp"),
    # OAuth for agents: metadata under /.well-known/, the authorization server under /oauth/.
    path("", include("identity.urls")),
    path("accounts/login/", SignInView.as_view(), name="login"),
    path("api/v1/", include("rest_api.urls")),
    # Log in and out of the browsable API (any member, not only admin staff).
    path("api/auth/", include("rest_framework.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    # The split view serves Swagger UI's start-up script as a file: no inline script, for the CSP.
    path("api/docs/", SpectacularSwaggerSplitView.as_view(url_name="api-schema"), name="api-docs"),
]

if settings.SSO_OIDC_ISSUER:  # single sign-on for people: /oidc/authenticate/, /oidc/callback/
    urlpatterns.append(path("oidc/", include("mozilla_django_oidc.urls")))

API_PREFIXES = ("/api/", "/mcp")


def handler404(request: HttpRequest, exception: Exception) -> HttpResponse:
    if request.path.startswith(API_PREFIXES):
        return json_not_found(request, exception)
    return defaults.page_not_found(request, exception)


def handler400(request: HttpRequest, exception: Exception) -> HttpResponse:
    if request.path.startswith(API_PREFIXES):
        return json_bad_request(request, exception)
    return defaults.bad_request(request, exception)


def handler500(request: HttpRequest, *args: Any) -> HttpResponse:
    if request.path.startswith("/mcp"):
        # JSON-RPC's shape, as every other answer of /mcp.
        error = {"code": -32603, "message": "the server failed on this request; it has been logged"}
        return JsonResponse({"jsonrpc": "2.0", "id": None, "error": error}, status=500)
    if request.path.startswith(API_PREFIXES):
        return json_server_error(request)
    return defaults.server_error(request)
