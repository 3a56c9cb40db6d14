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


_ID_VALUE = re.compile(rb'\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+)(?=\s*[,}])')


def top_level_id(body: str | bytes | bytearray) -> str | int | None:
    """The JSON-RPC id of a request the platform will not read (too deep, not valid Unicode), so that
    its error still answers that request: over stdio the id is the only way a client matches an
    answer to its question. Found without decoding the body: one pass keeping track of strings and
    nesting, the value of the key "id" at the top level only (not one inside the params)."""
    data = body.encode("utf-8", "surrogatepass") if isinstance(body, str) else bytes(body)
    depth, index, size = 0, 0, len(data)
    while index < size:
        char = data[index]
        if char == 0x22:  # a string: skip it, noting a key "id" of the top-level object
            end = index + 1
            while end < size and data[end] != 0x22:
                end += 2 if data[end] == 0x5C else 1
            if depth == 1 and data[index + 1 : end] == b"id":
                match = _ID_VALUE.match(data, end + 1)
                if match:
                    value = match.group(1)
                    try:
                        decoded = json.loads(value)
                    except ValueError:
                        return None
                    return decoded if isinstance(decoded, str | int) and not _SURROGATE.search(str(decoded)) else None
            index = end + 1
            continue
        if char in (0x7B, 0x5B):  # { [
            depth += 1
        elif char in (0x7D, 0x5D):  # } ]
            depth -= 1
        index += 1
    return None


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
