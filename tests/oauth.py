"""OAuth access tokens for tests, as the authorization server stores them after a person's consent."""

from __future__ import annotations

import secrets
from datetime import timedelta

from django.utils import timezone
from oauth2_provider.models import get_access_token_model, get_application_model

from organizations.grants import grant_scope
from organizations.models import User

# The resource an in-process MCP client calls (tests/mcp/inprocess.py's URL): tokens are bound to it.
IN_PROCESS_RESOURCE = "http://localhost/mcp"


def oauth_access_token(
    user: User,
    *,
    organization: str,
    role: str,
    resource: str | list[str] = IN_PROCESS_RESOURCE,
    scope: str | None = None,
    expires_in: int = 3600,
    client: str = "Test Host",
) -> str:
    """The raw access token a client named ``client`` holds for ``user``, granting ``role`` in ``organization``."""
    application = get_application_model().objects.create(
        name=client,
        client_type="public",
        authorization_grant_type="authorization-code",
        redirect_uris="http://127.0.0.1:8123/callback",
    )
    raw = secrets.token_urlsafe(24)
    get_access_token_model().objects.create(
        user=user,
        application=application,
        token=raw,
        scope=grant_scope(organization, role) if scope is None else scope,
        resource=[resource] if isinstance(resource, str) else resource,
        expires=timezone.now() + timedelta(seconds=expires_in),
    )
    return raw
