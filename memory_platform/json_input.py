"""The one way a request's JSON is read, by every interface (REST, MCP over HTTP and stdio).

Two rules hold before anything else sees the data:

- **Depth**: at most ``JSON_MAX_DEPTH`` nested arrays and objects. Nothing the platform accepts is
  deeper than a handful of levels, and a body nested thousands of levels deep would otherwise
  exhaust the interpreter's recursion (in the decoder, in validation, in the database driver).
- **Text**: every string (keys included) is valid Unicode. JSON can spell a lone UTF-16 surrogate
  (``"\\ud800"``), which Python decodes to a string no encoder, database or tokenizer accepts.

Both are checked in one pass without recursion, and a refusal says where and what to send
instead, without echoing the offending text.
"""

from __future__ import annotations

import json
import re
from typing import Any

from django import forms
from django.conf import settings
from django.forms.fields import InvalidJSONInput

_SURROGATE = re.compile("[\ud800-\udfff]")


class JsonInputError(ValueError):
    """The body is not JSON the platform reads; ``message`` says what to send instead."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def loads(body: str | bytes | bytearray) -> Any:
    """Decode a request body, then check it (see the module's rules)."""
    try:
        value = json.loads(body)
    except RecursionError:
        raise _too_deep() from None
    except UnicodeDecodeError:
        raise JsonInputError("the body is not UTF-8 text; send JSON encoded as UTF-8") from None
    except ValueError as error:
        raise JsonInputError(f"the body is not valid JSON ({error})") from None
    check(value)
    return value


def check(value: Any) -> None:
    """Refuse data nested deeper than ``JSON_MAX_DEPTH`` or holding a string that is not valid Unicode."""
    limit = settings.JSON_MAX_DEPTH
    stack: list[tuple[Any, int, str]] = [(value, 0, "")]
    while stack:
        item, depth, path = stack.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item):
                where = f" at {path}" if path else ""
                raise JsonInputError(
                    f"the text{where} is not valid Unicode (it holds a lone surrogate such as \\ud800); "
                    "send UTF-8 text, with surrogate pairs only as pairs"
                )
            continue
        if isinstance(item, dict | list):
            if depth >= limit:
                raise _too_deep()
            entries = item.items() if isinstance(item, dict) else enumerate(item)
            for key, child in entries:
                if isinstance(key, str) and _SURROGATE.search(key):
                    raise JsonInputError(
                        f"a key in {path or 'the body'} is not valid Unicode (a lone surrogate); send UTF-8 text"
                    )
                stack.append((child, depth + 1, f"{path}.{key}" if path else str(key)))


def _too_deep() -> JsonInputError:
    limit = settings.JSON_MAX_DEPTH
    return JsonInputError(f"the body is nested more than {limit} levels deep; nothing the platform reads is that deep")


class CheckedJSONFormField(forms.JSONField):
    """A form's JSON field held to the same rules, so the admin answers a too deep or broken value
    with a form error (not a server error)."""

    def to_python(self, value: Any) -> Any:
        if self.disabled or value in self.empty_values or not isinstance(value, str):
            return super().to_python(value)
        try:
            loads(value)
        except JsonInputError as error:
            raise forms.ValidationError(error.message.replace("the body", "this value"), code="invalid") from None
        return super().to_python(value)

    def bound_data(self, data: Any, initial: Any) -> Any:
        # The form shown again after an error holds what was typed: not decoded again (a deep value
        # would exhaust recursion once more), and with lone surrogates replaced (no page can encode them).
        if self.disabled or not isinstance(data, str):
            return super().bound_data(data, initial)
        try:
            loads(data)
        except JsonInputError:
            return InvalidJSONInput(_SURROGATE.sub("\ufffd", data))
        return super().bound_data(data, initial)

    def has_changed(self, initial: Any, data: Any) -> bool:
        if isinstance(data, str):
            try:
                loads(data)
            except JsonInputError:
                return True
        return bool(super().has_changed(initial, data))
