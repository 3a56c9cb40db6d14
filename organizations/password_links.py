"""One-time links for a new person to set their own password.

No email is sent from here, so whoever adds the person hands the link over. Django's password
reset token is single-use in effect (it is derived from the password hash and the last login, so
setting a password or logging in ends it) and expires after ``PASSWORD_RESET_TIMEOUT``. A link
rather than a printed password: the secret never passes through a terminal or a chat, and the
person's first login needs no forced change.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import admin
from django.contrib.auth.tokens import default_token_generator
from django.contrib.auth.views import PasswordResetCompleteView, PasswordResetConfirmView
from django.urls import reverse, reverse_lazy
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from organizations.models import User


def set_password_path(user: User) -> str:
    """The path of a page where ``user`` sets their password, once."""
    uidb64 = urlsafe_base64_encode(force_bytes(user.pk))
    return reverse("set-password", kwargs={"uidb64": uidb64, "token": default_token_generator.make_token(user)})


def link_lifetime_days() -> int:
    return max(1, settings.PASSWORD_RESET_TIMEOUT // 86_400)


def _page_context(request: Any) -> dict[str, Any]:
    """The admin's look for a page whose visitor is not logged in yet: its header, not its sidebar
    (which would say "You don't have permission to view or edit anything")."""
    return {**admin.site.each_context(request), "is_nav_sidebar_enabled": False, "available_apps": []}


class SetPasswordView(PasswordResetConfirmView):
    template_name = "registration/set_password.html"
    success_url = reverse_lazy("set-password-done")

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        context.update(_page_context(self.request))
        account = self.user.get_username() if getattr(self, "user", None) is not None else ""
        context.update(title="Set your password", timeout_days=link_lifetime_days(), account=account)
        return context


class SetPasswordDoneView(PasswordResetCompleteView):
    template_name = "registration/set_password_done.html"

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        context.update(_page_context(self.request))
        # Staff log in at the admin (there is no site-wide login page).
        context.update(title="Password set", login_url=reverse("admin:login"))
        return context
