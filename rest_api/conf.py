"""Settings of rest_api: The REST API (/api/v1/, schema at /api/schema/, interactive docs at /api/docs/).

Imported by memory_platform/settings.py, so each is a Django setting (read as
``django.conf.settings.NAME``, overridden in tests with the ``settings`` fixture); what each
environment variable means is in memory_platform/configuration.py and the configuration reference.
Nothing here may import a model or anything that needs the apps loaded.
"""

from __future__ import annotations

from memory_platform.env import env_int

API_MAX_BODY_BYTES = env_int("API_MAX_BODY_BYTES", 10_000_000)
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_api.auth.BearerTokenAuthentication",
        "rest_api.auth.SessionPrincipalAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_api.auth.HasPrincipal"],
    "DEFAULT_THROTTLE_CLASSES": ["memory_platform.throttling.PrincipalRateThrottle"],
    "DEFAULT_PARSER_CLASSES": ["rest_api.parsers.CheckedJSONParser"],
    "DEFAULT_RENDERER_CLASSES": [
        "rest_framework.renderers.JSONRenderer",
        "rest_framework.renderers.BrowsableAPIRenderer",
    ],
    "EXCEPTION_HANDLER": "rest_api.errors.exception_handler",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "UNAUTHENTICATED_USER": None,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Memory Platform API",
    "DESCRIPTION": (
        "The REST interface of Memory Platform: the shared, governed memory of an organization's AI agents. "
        "Authenticate with `Authorization: Bearer <token>` (the same tokens as MCP). Errors always have the "
        'shape `{"error": {"code", "message", "details"}}`.'
    ),
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.AllowAny"],
    "SERVE_AUTHENTICATION": [],
    "SCHEMA_PATH_PREFIX": "/api/v1",
    "COMPONENT_SPLIT_REQUEST": True,
    "ENUM_NAME_OVERRIDES": {
        "MemoryStatusEnum": "memories.models.Status.choices",
        "MemoryTypeEnum": "memories.models.MemoryType.choices",
        "HealthEnum": [("ok", "ok"), ("degraded", "degraded")],
        "CodeRunStatusEnum": "code_index.models.RunStatus.choices",
        "CodeRunPhaseEnum": "code_index.models.RunPhase.choices",
    },
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "rest_api.schema.add_error_responses",
    ],
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}
