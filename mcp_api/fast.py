"""tools/call over HTTP without the library's per-request machinery, for calls that are plainly valid.

The library answers each stateless POST by starting a session manager, a transport and a server task
connected by in-memory streams, and by hopping between the event loop and Django's sync thread
twice; for a memory-get that costs more CPU than the tool itself. A tools/call whose headers and
arguments the library would accept as they are is answered here instead, the same way it would be:
the same JSON Schema check of the arguments, the same argument model, the same tool function in
the same thread (mcp_api.server's ``_invoke``, so domain errors become the same ``isError``
results), and the same JSON-RPC body. Anything else, an invalid argument included, goes to the
library, whose answers (and error messages) stay the reference; tests/mcp/test_fast_tool_calls.py
holds the two paths to the same bytes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jsonschema  # type: ignore[import-untyped]
from django.conf import settings
from django.http import HttpRequest, HttpResponse
from mcp.shared.version import SUPPORTED_PROTOCOL_VERSIONS
from mcp.types import JSONRPCResponse
from pydantic import ValidationError as PydanticValidationError

CONTENT_TYPE_JSON = "application/json"


@dataclass(frozen=True)
class FastTool:
    call: Callable[[dict[str, Any]], Any]  # the tool called with its arguments, its result as the library gives it
    validator: Any  # the input schema's compiled JSON Schema validator
    metadata: Any  # the library's FuncMetadata: the argument model and its JSON pre-parsing


_tools: dict[str, FastTool] = {}


def register(name: str, call: Callable[[dict[str, Any]], Any], tool: Any) -> None:
    """Called by mcp_api.server.tool for every tool it registers: ``call(arguments)`` runs it as the
    library would (mcp_api.server._invoke), ``tool`` is the library's record of it."""
    schema = tool.parameters
    validator = jsonschema.validators.validator_for(schema)(schema)
    _tools[name] = FastTool(call=call, validator=validator, metadata=tool.fn_metadata)


def _headers_accepted(request: HttpRequest) -> bool:
    """What the library's transport checks before it reads a request (else it answers 4xx itself)."""
    accept = [part.strip() for part in request.headers.get("Accept", "").split(",")]
    if not any(part.startswith(CONTENT_TYPE_JSON) for part in accept):
        return False
    content_type = request.headers.get("Content-Type", "").split(";")[0].split(",")
    if not any(part.strip() == CONTENT_TYPE_JSON for part in content_type):
        return False
    version = request.headers.get("MCP-Protocol-Version")
    return version is None or version in SUPPORTED_PROTOCOL_VERSIONS


def _plain_call(payload: Any) -> tuple[str | int, FastTool, dict[str, Any]] | None:
    """(request id, tool, arguments) of a tools/call request carrying nothing but a name and arguments."""
    if not isinstance(payload, dict) or payload.keys() != {"jsonrpc", "id", "method", "params"}:
        return None
    request_id, params = payload["id"], payload["params"]
    if payload["jsonrpc"] != "2.0" or payload["method"] != "tools/call":
        return None
    if isinstance(request_id, bool) or not isinstance(request_id, str | int):
        return None
    # _meta (progress tokens) and task options are the library's to handle.
    if not isinstance(params, dict) or not params.keys() <= {"name", "arguments"}:
        return None
    entry = _tools.get(params.get("name"))  # type: ignore[arg-type]
    arguments = params.get("arguments") or {}
    if entry is None or not isinstance(arguments, dict):
        return None
    return request_id, entry, arguments


def tool_call(request: HttpRequest, payload: Any) -> HttpResponse | None:
    """The response to ``payload`` if it is a tools/call answered here, else None (the library answers)."""
    call = _plain_call(payload) if settings.MCP_FAST_TOOL_CALLS else None
    if call is None or not _headers_accepted(request):
        return None
    request_id, entry, arguments = call
    if not entry.validator.is_valid(arguments):
        return None
    try:
        model = entry.metadata.arg_model.model_validate(entry.metadata.pre_parse_json(arguments))
    except PydanticValidationError:
        return None

    result = entry.call(model.model_dump_one_level())
    message = JSONRPCResponse(
        jsonrpc="2.0", id=request_id, result=result.model_dump(by_alias=True, mode="json", exclude_none=True)
    )
    return HttpResponse(message.model_dump_json(by_alias=True, exclude_none=True), content_type=CONTENT_TYPE_JSON)
