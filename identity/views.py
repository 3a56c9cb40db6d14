"""Sign-in pages for people: the consent page an OAuth client sends them to, and the login before it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib.auth.views import LoginView
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.decorators import method_decorator
from django.views.decorators.csrf import csrf_exempt
from oauth2_provider.models import get_application_model
from oauth2_provider.views import AuthorizationView, DynamicClientRegistrationView

from identity.forms import ConsentForm, grantable
from memory_platform.throttling import RegistrationRateThrottle, retry_after
from organizations.grants import grant_scope


class ConsentView(AuthorizationView):
    """/oauth/authorize/: a person approves a client, naming the organization and the role it gets.

    The role offered is never above the person's membership (checked again when a token is used:
    organizations.oauth). What they choose becomes the grant's scope."""

    template_name = "identity/consent.html"
    form_class = ConsentForm

    def get_form_kwargs(self) -> dict[str, Any]:
        return super().get_form_kwargs() | {"user": self.request.user}

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        if "application" not in context:  # a refused answer, shown again: the client it was for
            client_id = self.request.POST.get("client_id", "")
            context["application"] = get_application_model().objects.filter(client_id=client_id).first()
        context["memberships"] = grantable(self.request.user)
        context["title"] = "Allow access to your organization's memory"
        return context

    def form_valid(self, form: ConsentForm) -> HttpResponse:
        if form.cleaned_data.get("allow"):
            form.cleaned_data["scope"] = grant_scope(form.cleaned_data["organization"], form.cleaned_data["role"])
        return super().form_valid(form)


@dataclass(frozen=True)
class _Address:
    rate_key: str


@method_decorator(csrf_exempt, name="dispatch")
class RegistrationView(DynamicClientRegistrationView):
    """/oauth/register/ (RFC 7591): open to any host, as MCP needs, and so counted per address
    (``OAUTH_REGISTRATION_RATE``); over it, 429 with Retry-After in the registration error shape."""

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        address = _Address(rate_key=f"address:{request.META.get('REMOTE_ADDR', '')}")
        wait = retry_after(address, RegistrationRateThrottle)
        if wait is not None:
            error = {
                "error": "too_many_requests",
                "error_description": f"too many client registrations from this address; retry in {wait} s",
            }
            response = JsonResponse(error, status=429)
            response["Retry-After"] = str(wait)
            return response
        return super().post(request, *args, **kwargs)


class SignInView(LoginView):
    """/accounts/login/: any member signs in here (the admin's login is for staff)."""

    template_name = "admin/login.html"
    extra_context = {"site_header": "Memory Platform", "title": "Sign in"}
