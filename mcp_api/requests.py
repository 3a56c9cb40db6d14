"""Checking a JSON-RPC request's parameters against the MCP method it names, before the library does.

The library answers a request whose parameters do not fit with a bare "Invalid request parameters"
and logs every union member's validation error (kilobytes per request, on stderr for stdio). Both
transports check here first and answer -32602 with what is wrong, in a line.
"""

from __future__ import annotations

import typing
from typing import Any

from mcp import types
from mcp.types import INVALID_PARAMS
from pydantic import BaseModel
from pydantic import ValidationError as PydanticValidationError


def _by_method() -> dict[str, type[BaseModel]]:
    members = typing.get_args(types.ClientRequest.model_fields["root"].annotation)
    return {typing.get_args(member.model_fields["method"].annotation)[0]: member for member in members}


REQUEST_TYPES = _by_method()


def params_problem(method: str, params: Any) -> tuple[int, str] | None:
    """(JSON-RPC code, message) when ``params`` do not fit ``method``'s request, else None.

    A method MCP does not have is left to the library, which answers "method not found"."""
    model = REQUEST_TYPES.get(method)
    if model is None:
        return None
    request: dict[str, Any] = {"method": method}
    if params is not None:
        request["params"] = params
    try:
        model.model_validate(request)
    except PydanticValidationError as error:
        problems = []
        for problem in error.errors(include_url=False, include_input=False)[:3]:
            where = ".".join(str(part) for part in problem["loc"]) or "params"
            said = "missing" if problem["type"] == "missing" else problem["msg"][0].lower() + problem["msg"][1:]
            problems.append(f"{where}: {said}")
        return INVALID_PARAMS, f"invalid parameters for {method} ({'; '.join(problems)})"
    return None
