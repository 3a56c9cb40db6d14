"""What every log line says about the request (or task) it was written for.

A request gets an id (the client's ``X-Request-ID`` when it is well-formed, else a new one), sent
back in the ``X-Request-ID`` response header; once the caller is known, its organization and
principal are bound too. Every line logged while the request runs carries the three (a logging
filter reads them from a context variable), and the id travels with the Celery tasks the request
enqueues: their lines carry it as well. Only ids and labels are bound: never a token, a secret or
a memory's text.

``LOG_FORMAT`` chooses JSON (one object a line, for a log pipeline) or text (for people); by
default JSON when the platform runs on a PostgreSQL server of its own (``DATABASE_URL``, as
deployments do) and text on the embedded database (``make run``).
"""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from types import MappingProxyType
from typing import Any, Protocol

REQUEST_ID_HEADER = "X-Request-ID"
# What a client may send as its request id: letters, digits and a few separators, at most 128.
_WELL_FORMED = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")
FIELDS = ("request_id", "organization", "principal")
_NONE = "-"

_EMPTY: Mapping[str, str] = MappingProxyType({})
_context: ContextVar[Mapping[str, str]] = ContextVar("memory_platform_log_context", default=_EMPTY)


class _Caller(Protocol):
    @property
    def label(self) -> str: ...


def request_id_from(header: str | None) -> str:
    """The client's request id when it is well-formed, else a new one."""
    if header is not None and _WELL_FORMED.fullmatch(header):
        return header
    return uuid.uuid4().hex


def current() -> Mapping[str, str]:
    """What is bound now (request_id, organization, principal; any may be missing)."""
    return _context.get()


def current_request_id() -> str | None:
    return _context.get().get("request_id")


def bind(**values: str) -> None:
    """Add to what the lines of the current request or task carry."""
    _context.set({**_context.get(), **values})


def clear() -> None:
    _context.set(_EMPTY)


def bind_caller(organization_slug: str, caller: _Caller) -> None:
    """The organization and the principal (its label: a token's prefix, a person, an OAuth client)."""
    bind(organization=organization_slug, principal=caller.label)


@contextmanager
def bound(**values: str) -> Iterator[None]:
    """Bind ``values`` (and only them) for the block: a request, a task."""
    token = _context.set(dict(values))
    try:
        yield
    finally:
        _context.reset(token)


class ContextFilter(logging.Filter):
    """Puts request_id, organization and principal on every record ("-" where unknown)."""

    def filter(self, record: logging.LogRecord) -> bool:
        values = _context.get()
        for field in FIELDS:
            if not hasattr(record, field):
                setattr(record, field, values.get(field, _NONE))
        return True


TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s [%(request_id)s %(organization)s %(principal)s]: %(message)s"
JSON_FIELDS = ("asctime", "levelname", "name", "message", *FIELDS)
FORMATS = ("json", "text")


def formatter(kind: str = "text") -> logging.Formatter:
    """A log line as JSON (time, level, logger, message, request_id, organization, principal, and
    exc_info when there is one) or as text for people."""
    if kind == "json":
        from pythonjsonlogger.json import JsonFormatter

        return JsonFormatter(
            list(JSON_FIELDS), rename_fields={"asctime": "time", "levelname": "level", "name": "logger"}
        )
    return logging.Formatter(TEXT_FORMAT)


class RequestIdMiddleware:
    """First of the middleware: the request's id, bound for its log lines and sent back."""

    def __init__(self, get_response: Callable[[Any], Any]) -> None:
        self.get_response = get_response

    def __call__(self, request: Any) -> Any:
        request_id = request_id_from(request.headers.get(REQUEST_ID_HEADER))
        request.request_id = request_id
        with bound(request_id=request_id):
            response = self.get_response(request)
            if response.status_code >= 400:
                # Django's own warning for an error answer, written here so that it carries the
                # request's context (Django writes it after the middleware, unless it was written).
                from django.utils.log import log_response

                log_response("%s: %s", response.reason_phrase, request.path, response=response, request=request)
        response[REQUEST_ID_HEADER] = request_id
        return response
