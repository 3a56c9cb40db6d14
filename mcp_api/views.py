"""The Streamable HTTP endpoint, hardened around the MCP library's request handler.

Stateless: every POST carries its bearer token and is answered on its own, so any number of
ASGI workers can serve /mcp. Before the library sees a request we refuse, with a JSON-RPC error
body: other methods than POST (405 at once: no open event streams), browser origins that are
not allowed (403, against DNS rebinding), bodies over the size limit (413), missing or bad
tokens (401 with ``WWW-Authenticate: Bearer``) and unparsable JSON (400, parse error).
"""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from mcp_api import fast
from mcp_api.context import reset_principal, set_principal
from mcp_api.registry import get_server
from mcp_api.requests import params_problem
from memory_platform import json_input
from memory_platform.exceptions import (
    DATABASE_RETRY_AFTER_SECONDS,
    DATABASE_UNAVAILABLE,
    AuthenticationFailed,
    database_unavailable,
)
from memory_platform.json_input import JsonInputError
from memory_platform.throttling import retry_after
from organizations.tokens import BEARER_HINT, bearer_token, principal_for_token

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
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


def _bearer_challenge(description: str) -> str:
    safe = description.replace('"', "'")
    return f'Bearer realm="memory-platform", error="invalid_token", error_description="{safe}"'


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
                f"missing bearer token: {BEARER_HINT}",
                WWW_Authenticate='Bearer realm="memory-platform"',
            )
        principal = principal_for_token(credential)
    except AuthenticationFailed as error:
        return _error(401, UNAUTHORIZED, error.message, WWW_Authenticate=_bearer_challenge(error.message))

    wait = retry_after(principal)
    if wait is not None:
        return _error(429, RATE_LIMITED, f"too many requests; retry in {wait} s", Retry_After=str(wait))

    try:
        payload: Any = json_input.loads(request.body or b"null")
    except JsonInputError as error:
        return _error(400, PARSE_ERROR, error.message, json_input.top_level_id(request.body))
    if not isinstance(payload, dict | list):
        return _error(400, INVALID_REQUEST, "the body must be a JSON-RPC request object")
    if isinstance(payload, dict) and isinstance(payload.get("method"), str) and "id" in payload:
        problem = params_problem(payload["method"], payload.get("params"))
        if problem is not None:  # answered as the library would (200), saying what is wrong
            code, said = problem
            body = {"jsonrpc": "2.0", "id": payload["id"], "error": {"code": code, "message": said}}
            return JsonResponse(body, status=200)
    request.data = payload  # type: ignore[attr-defined]  # the library's handler reads it

    token = set_principal(principal)
    try:
        server = get_server()  # every tool registered, with its fast path
        return fast.tool_call(request, payload) or server.handle_django_request(request)
    finally:
        reset_principal(token)
