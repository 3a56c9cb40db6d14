"""The Streamable HTTP endpoint, hardened around the MCP SDK's request handler.

Stateless: every POST carries its bearer token and is answered on its own, so any number of web
processes can serve /mcp. Both protocol eras are served: clients of 2025-11-25 and older
``initialize`` first (each later POST is answered without a session), clients of 2026-07-28 send
each request with its own ``_meta`` envelope and the ``MCP-Protocol-Version`` header. Before the
SDK sees a request we refuse, with a JSON-RPC error body: other methods than POST (405 at once: no
open event streams), browser origins that are not allowed (403, against DNS rebinding), bodies
over the size limit (413), missing or bad tokens (401 with ``WWW-Authenticate: Bearer``),
unparsable JSON (400, parse error) and parameters that do not fit the method (-32602, saying what).
"""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from mcp_api import bridge, sdk
from mcp_api.context import reset_principal, set_principal
from mcp_api.registry import get_server, offered
from memory_platform import json_input, logs
from memory_platform.exceptions import (
    DATABASE_RETRY_AFTER_SECONDS,
    DATABASE_UNAVAILABLE,
    AuthenticationFailed,
    database_unavailable,
)
from memory_platform.json_input import JsonInputError
from memory_platform.throttling import retry_after
from organizations.tokens import BEARER_HINT, bearer_token, principal_for_token

PARSE_ERROR = sdk.PARSE_ERROR
INVALID_REQUEST = sdk.INVALID_REQUEST
logger = logging.getLogger(__name__)

UNAUTHORIZED = -32001
# Over API_THROTTLE_RATE (counted with REST's requests): an implementation-defined server error code.
RATE_LIMITED = -32029
DATABASE_DOWN = -32003


def _error(status: int, code: int, message: str, request_id: object = None, **headers: str) -> JsonResponse:
    body = {"jsonrpc": "2.0", "error": {"code": code, "message": message}, "id": request_id}
    response = JsonResponse(body, status=status)
    for name, value in headers.items():
        response[name.replace("_", "-")] = value
    return response


def _origin_allowed(request: HttpRequest) -> bool:
    origin = request.headers.get("Origin")
    if not origin:
        return True  # not a browser: DNS rebinding needs one
    if origin in settings.MCP_ALLOWED_ORIGINS:
        return True
    # The server's own origin: scheme and host both (http://host is not https://host's page).
    parts = urlsplit(origin)
    return bool(parts.netloc) and (parts.scheme, parts.netloc) == (request.scheme, request.get_host())


def _resource(request: HttpRequest) -> str:
    """This endpoint's URI: the resource OAuth access tokens for it are bound to (RFC 8707)."""
    return request.build_absolute_uri(request.path)


def _bearer_challenge(request: HttpRequest, description: str | None = None) -> str:
    """``WWW-Authenticate`` for a 401: where the protected-resource metadata is (RFC 9728), which
    names the authorization server an MCP host signs in with; and what was wrong, if anything."""
    metadata = request.build_absolute_uri(f"/.well-known/oauth-protected-resource{request.path}")
    challenge = f'Bearer realm="memory-platform", resource_metadata="{metadata}"'
    if description is None:
        return challenge
    safe = description.replace('"', "'")
    return f'{challenge}, error="invalid_token", error_description="{safe}"'


@csrf_exempt
def mcp_endpoint(request: HttpRequest) -> HttpResponse:
    """/mcp; the database not answering is a 503 in JSON-RPC's shape, as every other refusal here."""
    try:
        return _mcp_endpoint(request)
    except Exception as error:
        if not database_unavailable(error):
            raise
        logger.warning("database unavailable: %s", str(error).strip().splitlines()[0] if str(error).strip() else error)
        retry = str(DATABASE_RETRY_AFTER_SECONDS)
        return _error(503, DATABASE_DOWN, DATABASE_UNAVAILABLE, Retry_After=retry)


def _mcp_endpoint(request: HttpRequest) -> HttpResponse:  # noqa: PLR0911 - one early refusal per check
    if request.method != "POST":
        return _error(
            405,
            INVALID_REQUEST,
            "this MCP endpoint is stateless and takes JSON-RPC over POST only (no event stream on GET)",
            Allow="POST",
        )
    if not _origin_allowed(request):
        return _error(403, INVALID_REQUEST, "Origin not allowed; add it to MCP_ALLOWED_ORIGINS if it is yours")
    length = request.headers.get("Content-Length")
    limit = settings.MCP_MAX_BODY_BYTES
    if (length and length.isdigit() and int(length) > limit) or len(request.body) > limit:
        return _error(413, INVALID_REQUEST, f"request body is larger than {limit} bytes; send smaller batches")

    try:
        credential = bearer_token(request.headers.get("Authorization", ""))
        if credential is None:
            return _error(
                401,
                UNAUTHORIZED,
                f"missing bearer token: {BEARER_HINT} (an API token, or an OAuth access token)",
                WWW_Authenticate=_bearer_challenge(request),
            )
        principal = principal_for_token(credential, resource=_resource(request))
    except AuthenticationFailed as error:
        return _error(401, UNAUTHORIZED, error.message, WWW_Authenticate=_bearer_challenge(request, error.message))

    logs.bind_caller(principal.organization.slug, principal)
    wait = retry_after(principal)
    if wait is not None:
        return _error(429, RATE_LIMITED, f"too many requests; retry in {wait} s", Retry_After=str(wait))

    try:
        payload: Any = json_input.loads(request.body or b"null")
    except JsonInputError as error:
        return _error(400, PARSE_ERROR, error.message, json_input.top_level_id(request.body))
    request.metrics_endpoint = _metrics_endpoint(payload)  # type: ignore[attr-defined]
    if not isinstance(payload, dict | list):
        return _error(400, INVALID_REQUEST, "the body must be a JSON-RPC request object")
    if isinstance(payload, dict) and isinstance(payload.get("method"), str) and "id" in payload:
        problem = sdk.http_precheck(request.headers, payload)
        if problem is not None:  # answered as the SDK would, saying what is wrong
            status, code, said = problem
            body = {"jsonrpc": "2.0", "id": payload["id"], "error": {"code": code, "message": said}}
            return JsonResponse(body, status=status)

    token = set_principal(principal)
    try:
        answer = bridge.run(sdk.http_exchange(get_server(), _asgi_scope(request), request.body))
    finally:
        reset_principal(token)
    response = HttpResponse(answer.body, status=answer.status)
    for name, value in answer.headers:
        if name.lower() != "content-length":
            response[name] = value
    return response


# The methods /metrics names; any other is counted as "other" (a client chooses what it sends).
_METHODS = frozenset({
    "initialize", "ping", "server/discover", "tools/list", "tools/call", "resources/list", "resources/read",
    "resources/templates/list", "prompts/list", "prompts/get", "completion/complete", "logging/setLevel",
    "notifications/initialized", "notifications/cancelled",
})  # fmt: skip


def _metrics_endpoint(payload: Any) -> str:
    """The request as /metrics counts it: the method, and for a tool call or prompt its name (names
    the server does not offer are "unknown", so a client cannot invent labels)."""
    if isinstance(payload, list):
        return "batch"
    if not isinstance(payload, dict) or payload.get("method") not in _METHODS:
        return "other"
    method = str(payload["method"])
    params = payload.get("params")
    name = params.get("name") if isinstance(params, dict) else None
    if method == "tools/call":
        return f"tools/call {name if name in offered().tools else 'unknown'}"
    if method == "prompts/get":
        known = {prompt.name for prompt in offered().prompts}
        return f"prompts/get {name if name in known else 'unknown'}"
    return method


def _asgi_scope(request: HttpRequest) -> dict[str, Any]:
    """The request as the SDK's ASGI handler reads it (the body is handed over whole)."""
    host, _, port = request.get_host().partition(":")
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": request.method,
        "scheme": request.scheme,
        "path": request.path,
        "raw_path": request.path.encode(),
        "root_path": "",
        "query_string": request.META.get("QUERY_STRING", "").encode("latin-1"),
        "headers": [
            (name.lower().encode("latin-1"), value.encode("latin-1"))
            for name, value in request.headers.items()
            if name.lower() != "content-length"
        ]
        + [(b"content-length", str(len(request.body)).encode())],
        "client": (request.META.get("REMOTE_ADDR", ""), 0),
        "server": (host, int(port) if port.isdigit() else (443 if request.is_secure() else 80)),
    }
