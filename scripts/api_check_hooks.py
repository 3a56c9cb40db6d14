"""Schemathesis hooks for `make api-check` (loaded through SCHEMATHESIS_HOOKS by scripts/api_check.py).

POST /api/v1/import/ takes JSON Lines (application/x-ndjson), which schemathesis has no serializer
for: whatever it generates for that body is sent as one JSON value a line, the way an export is
written, so the endpoint meets well-formed and malformed files alike.
"""

from __future__ import annotations

import json
from typing import Any

import schemathesis


@schemathesis.serializer("application/x-ndjson")
def json_lines(ctx: Any, value: Any) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass")
    items = value if isinstance(value, list) else [value]
    return "".join(json.dumps(item) + "\n" for item in items).encode()
