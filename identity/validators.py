"""The authorization server's request validator: django-oauth-toolkit's, knowing the grant scopes.

The scope a client asks for is ``mcp``; the consent page adds the organization and role the person
chose (organizations.grants), which are valid scopes only in that form. Plain-http redirect URIs
are accepted for loopback hosts only, where native hosts receive the code (RFC 8252).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from oauth2_provider.oauth2_validators import OAuth2Validator

from organizations.grants import is_grant_scope

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})


class Validator(OAuth2Validator):
    def validate_redirect_uri(self, client_id: str, redirect_uri: str, request: Any, *args: Any, **kwargs: Any) -> bool:
        """A registered redirect URI, and plain http only to this machine's loopback (RFC 8252)."""
        parts = urlsplit(redirect_uri)
        if parts.scheme == "http" and parts.hostname not in LOOPBACK_HOSTS:
            return False
        return bool(super().validate_redirect_uri(client_id, redirect_uri, request, *args, **kwargs))

    def validate_scopes(
        self, client_id: str, scopes: list[str], client: Any, request: Any, *args: Any, **kwargs: Any
    ) -> bool:
        plain = [scope for scope in scopes if not is_grant_scope(scope)]
        return bool(super().validate_scopes(client_id, plain, client, request, *args, **kwargs))
