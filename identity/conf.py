"""Settings of identity: Sign-in: OAuth 2.1 for MCP hosts, a trusted external issuer, single sign-on for people.

Imported by memory_platform/settings.py, so each is a Django setting (read as
``django.conf.settings.NAME``, overridden in tests with the ``settings`` fixture); what each
environment variable means is in memory_platform/configuration.py and the configuration reference.
Nothing here may import a model or anything that needs the apps loaded.
"""

from __future__ import annotations

from memory_platform.env import env_bool, env_int, env_list, env_str

# OAuth 2.1 for agents (MCP hosts): this platform is the authorization server (django-oauth-toolkit:
# authorization code with PKCE, refresh, revocation, RFC 8414 and RFC 9728 metadata, dynamic client
# registration) and /mcp the protected resource. An access token maps to the Principal its grant
# names (organizations/oauth.py); people approve clients on /oauth/authorize/ after signing in.
LOGIN_URL = "/accounts/login/"
OAUTH_ACCESS_TOKEN_SECONDS = env_int("OAUTH_ACCESS_TOKEN_SECONDS", 3600)
# Client registrations (/oauth/register/, open to any host) per address; empty turns the limit off.
OAUTH_REGISTRATION_RATE = env_str("OAUTH_REGISTRATION_RATE", "30/hour")
OAUTH_REFRESH_TOKEN_SECONDS = env_int("OAUTH_REFRESH_TOKEN_SECONDS", 2_592_000)  # 30 days
OAUTH2_PROVIDER = {
    "PKCE_REQUIRED": True,
    "ALLOWED_REDIRECT_URI_SCHEMES": env_list("OAUTH_REDIRECT_URI_SCHEMES", ["http", "https"]),
    "ALLOW_LOCALHOST_LOOPBACK": True,  # RFC 8252: native clients listen on any loopback port
    "ACCESS_TOKEN_EXPIRE_SECONDS": OAUTH_ACCESS_TOKEN_SECONDS,
    "REFRESH_TOKEN_EXPIRE_SECONDS": OAUTH_REFRESH_TOKEN_SECONDS,
    "ROTATE_REFRESH_TOKEN": True,
    "REFRESH_TOKEN_REUSE_PROTECTION": True,
    "SCOPES": {"mcp": "Use an organization's shared memory over MCP"},
    "DEFAULT_SCOPES": ["mcp"],
    "OAUTH2_VALIDATOR_CLASS": "identity.validators.Validator",
    "REQUEST_APPROVAL_PROMPT": "force",
    "DCR_ENABLED": True,
    "DCR_REGISTRATION_PERMISSION_CLASSES": ("oauth2_provider.dcr.AllowAllDCRPermission",),
    # Client ID Metadata Documents: a host's client_id is an https URL of its metadata, fetched by an
    # SSRF-hardened fetcher (public addresses only, bounded size and time; replaceable, e.g. to go
    # through an egress proxy).
    "CIMD_ENABLED": True,
    "CIMD_METADATA_FETCHER": env_str("OAUTH_CIMD_FETCHER", "oauth2_provider.cimd.SafeMetadataFetcher"),
    "OAUTH2_RESPONSE_TYPES_SUPPORTED": ["code"],
    "OAUTH2_GRANT_TYPES_SUPPORTED": ["authorization_code", "refresh_token"],
    "OAUTH2_TOKEN_ENDPOINT_AUTH_METHODS_SUPPORTED": ["none", "client_secret_post", "client_secret_basic"],
    "OAUTH2_PROTECTED_RESOURCE_NAME": "Memory Platform (MCP)",
    # Every behaviour of the OAuth 2.0 Security BCP (RFC 9700) the toolkit can switch on: no implicit
    # or password grant, S256 PKCE only and required, tokens in headers only, `iss` in authorization
    # responses, exact redirect URIs, sender-bound refresh rotation, hashed token storage. Plain
    # http redirect URIs stay allowed for loopback hosts only (see SILENCED_SYSTEM_CHECKS above).
    **{
        f"COMPLIANT_BCP_RFC9700_{rule}": True
        for rule in (
            "ACCESS_TOKEN_TRANSPORT",
            "AUTHZ_RESPONSE_ISS",
            "IMPLICIT_GRANT",
            "PASSWORD_GRANT",
            "PKCE_METHOD",
            "PKCE_REQUIRED",
            "REDIRECT_URI_MATCHING",
            "REFRESH_TOKEN",
            "TOKEN_STORAGE",
        )
    },
}

# Instead of the platform's own authorization server, an organization's may issue the access tokens
# MCP hosts present (JWTs, checked against its keys, issuer and this server's resource URI); the
# protected-resource metadata then names it.
OAUTH_TRUSTED_ISSUER = env_str("OAUTH_TRUSTED_ISSUER", "")
OAUTH_TRUSTED_JWKS_URL = env_str("OAUTH_TRUSTED_JWKS_URL", "")
OAUTH_TRUSTED_USERNAME_CLAIM = env_str("OAUTH_TRUSTED_USERNAME_CLAIM", "preferred_username")
OAUTH_TRUSTED_ORGANIZATION_CLAIM = env_str("OAUTH_TRUSTED_ORGANIZATION_CLAIM", "organization")
if OAUTH_TRUSTED_ISSUER:
    OAUTH2_PROVIDER["OAUTH2_PROTECTED_RESOURCE_AUTHORIZATION_SERVERS"] = [OAUTH_TRUSTED_ISSUER]

# Single sign-on for people (the admin) through the organization's OpenID Connect provider
# (identity/sso.py, mozilla-django-oidc); off while SSO_OIDC_ISSUER is unset. SSO_GROUP_ROLES maps the
# provider's groups to memberships: "group=organization-slug:role,...".
SSO_OIDC_ISSUER = env_str("SSO_OIDC_ISSUER", "")
SSO_GROUPS_CLAIM = env_str("SSO_GROUPS_CLAIM", "groups")
SSO_USERNAME_CLAIM = env_str("SSO_USERNAME_CLAIM", "preferred_username")
SSO_GROUP_ROLES = dict(item.partition("=")[::2] for item in env_list("SSO_GROUP_ROLES", []))
# Password sign-in (the admin's login form, /accounts/login/); off leaves single sign-on only.
PASSWORD_LOGIN = env_bool("PASSWORD_LOGIN", True)
