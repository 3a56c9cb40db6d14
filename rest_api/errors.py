"""One error shape for every REST response: ``{"error": {"code", "message", "details"}}``.

Status codes: 400 a request that does not match the schema (bad JSON, wrong types, values out of
the documented range, unknown fields or filters); 401 no or bad credentials; 403 the role does
not allow it (or the memory is locked); 404 not found, which is also the answer for another
organization's objects; 405 the method; 409 a conflict with the current state (an idempotency key
reused for other content); 413 the body is too large; 415 not JSON; 422 a request that matches
the schema but breaks a rule (a repository memory without a repository, a stale cursor); 429 too
many requests, with ``Retry-After``; 503 search is briefly unavailable. Unexpected failures are logged
and answered 500 with the same shape: never an HTML page or a stack trace.
"""

from __future__ import annotations

import logging
import math
from typing import Any

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import RequestDataTooBig
from django.db import DataError
from django.http import Http404, HttpRequest, JsonResponse
from django.urls import Resolver404, resolve
from rest_framework import exceptions, status
from rest_framework.response import Response

from memory_platform import exceptions as domain

logger = logging.getLogger(__name__)

DOMAIN_STATUS: list[tuple[type[domain.DomainError], int]] = [
    (domain.ValidationError, status.HTTP_422_UNPROCESSABLE_ENTITY),
    (domain.NotFound, status.HTTP_404_NOT_FOUND),
    (domain.PermissionDenied, status.HTTP_403_FORBIDDEN),  # Locked included, with code "locked"
    (domain.Conflict, status.HTTP_409_CONFLICT),
    (domain.AuthenticationFailed, status.HTTP_401_UNAUTHORIZED),
    (domain.SearchUnavailable, status.HTTP_503_SERVICE_UNAVAILABLE),  # with Retry-After
]

# What the OpenAPI schema documents for every operation (rest_api.schema adds them).
ERROR_STATUSES = {
    400: "The request does not match the schema (bad JSON, wrong type, value out of range, unknown field).",
    401: "No or bad credentials (see WWW-Authenticate).",
    403: "Your role does not allow this, or the memory is locked.",
    404: "Not found (also for another organization's objects).",
    409: "Conflicts with the current state (e.g. an idempotency key reused for other content).",
    413: "The request body is too large.",
    415: "The body is not JSON.",
    422: "Well-formed but breaks a rule (e.g. a repository memory without a repository, a stale cursor).",
    429: "Too many requests: wait Retry-After seconds.",
    500: "The server failed; the failure was logged.",
    503: "Search or the database is briefly unavailable: retry after Retry-After seconds.",
}


class PayloadTooLarge(exceptions.APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_code = "too_large"
    default_detail = "request body is too large"


def error_body(code: str, message: str, details: Any = None) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "details": details}}


def _first_message(details: Any) -> str:
    """A readable one-line summary of DRF's nested validation errors: 'field: message'."""
    if isinstance(details, dict):
        for field, value in details.items():
            inner = _first_message(value)
            return inner if field == "non_field_errors" else f"{field}: {inner}"
    if isinstance(details, list) and details:
        return _first_message(details[0])
    return str(details)


def _plain(details: Any) -> Any:
    """ErrorDetail strings and lazy text become plain JSON values."""
    if isinstance(details, dict):
        return {str(key): _plain(value) for key, value in details.items()}
    if isinstance(details, list):
        return [_plain(value) for value in details]
    return str(details)


def _drf_error(exc: exceptions.APIException) -> tuple[int, str, str, Any]:
    if isinstance(exc, exceptions.ValidationError):
        details = _plain(exc.detail)
        return exc.status_code, "invalid", f"invalid request: {_first_message(details)}", details
    if isinstance(exc, exceptions.NotAuthenticated | exceptions.AuthenticationFailed):
        return status.HTTP_401_UNAUTHORIZED, "unauthenticated", str(exc.detail), None
    code = exc.default_code if isinstance(exc.default_code, str) else "error"
    return exc.status_code, code, str(exc.detail), None


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response:
    headers: dict[str, str] = {}
    if isinstance(exc, Http404):
        exc = exceptions.NotFound("not found")
    elif isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied()
    elif isinstance(exc, RequestDataTooBig):
        exc = PayloadTooLarge()

    if isinstance(exc, domain.DomainError):
        status_code = next((code for kind, code in DOMAIN_STATUS if isinstance(exc, kind)), 400)
        if status_code == status.HTTP_503_SERVICE_UNAVAILABLE:
            headers["Retry-After"] = "5"
        body = error_body(exc.code, exc.message, exc.details)
    elif isinstance(exc, exceptions.APIException):
        status_code, code, message, details = _drf_error(exc)
        body = error_body(code, message, details)
        if isinstance(exc, exceptions.Throttled) and exc.wait is not None:
            headers["Retry-After"] = str(max(1, math.ceil(exc.wait)))
            body = error_body("throttled", f"too many requests; retry in {headers['Retry-After']} s", None)
    elif domain.database_unavailable(exc):
        logger.warning("database unavailable: %s", str(exc).strip().splitlines()[0] if str(exc).strip() else exc)
        status_code = status.HTTP_503_SERVICE_UNAVAILABLE
        headers["Retry-After"] = str(domain.DATABASE_RETRY_AFTER_SECONDS)
        body = error_body("database_unavailable", domain.DATABASE_UNAVAILABLE, None)
    elif isinstance(exc, DataError):
        # A value the database cannot store that no check caught (e.g. a NUL character): the
        # transaction rolled back, nothing was written.
        status_code = status.HTTP_400_BAD_REQUEST
        body = error_body("invalid", f"invalid value: {str(exc).splitlines()[0]}", None)
    else:
        logger.exception("unexpected error in %s", context.get("view").__class__.__name__)
        status_code = status.HTTP_500_INTERNAL_SERVER_ERROR
        body = error_body("server_error", "the server failed on this request; it has been logged", None)

    if status_code == status.HTTP_401_UNAUTHORIZED:
        headers["WWW-Authenticate"] = 'Bearer realm="memory-platform"'
    return Response(body, status=status_code, headers=headers)


def json_not_found(request: HttpRequest, exception: Exception | None = None) -> JsonResponse:
    """Unknown URLs under /api/ answer in the API's shape (others get Django's page)."""
    message = f"no endpoint at {request.path}"
    if not request.path.endswith("/"):
        try:
            resolve(request.path + "/")
            message += f"; did you mean {request.path}/ (with the trailing slash)?"
        except Resolver404:
            pass
    return JsonResponse(error_body("not_found", message, None), status=404)


def json_bad_request(request: HttpRequest, exception: Exception | None = None) -> JsonResponse:
    """Requests Django refuses before any view (a Host not in ALLOWED_HOSTS, a malformed body)."""
    return JsonResponse(error_body("bad_request", "bad request: check the Host header and the body", None), status=400)


def json_server_error(request: HttpRequest) -> JsonResponse:
    return JsonResponse(error_body("server_error", "the server failed on this request; it has been logged"), status=500)
