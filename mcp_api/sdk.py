"""Every use of the MCP SDK (``mcp`` and ``mcp-types``), in one module.

The rest of the project speaks of tools, resources and prompts (mcp_api.server) and of Django
requests (mcp_api.views, mcp_api.stdio); this module turns them into the SDK's objects and back.
Only public SDK interfaces are used: the low-level ``Server`` with its handler hooks (the SDK does
the protocol: ``initialize`` for 2025-11-25 and older clients, ``server/discover`` and the
per-request ``_meta`` envelope of 2026-07-28, per-revision validation and serialization), the
Streamable HTTP session manager in stateless JSON mode, and ``Server.run`` over a pair of streams
for stdio. ``tests/mcp/test_sdk_seam.py`` pins the SDK's version and the signatures used here, so an
upgrade that changes them fails there first. The layer contract in pyproject.toml keeps every
other module from importing the SDK.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import Any

from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from mcp_types import (
    HEADER_MISMATCH,
    INVALID_PARAMS,
    INVALID_REQUEST,
    PARSE_ERROR,
    PROTOCOL_VERSION_META_KEY,
    CallToolRequestParams,
    CallToolResult,
    GetPromptRequestParams,
    GetPromptResult,
    JSONRPCError,
    JSONRPCMessage,
    JSONRPCRequest,
    JSONRPCResponse,
    ListPromptsResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    ListToolsResult,
    Prompt,
    PromptMessage,
    ReadResourceRequestParams,
    ReadResourceResult,
    Resource,
    ResourceTemplate,
    TextContent,
    TextResourceContents,
    Tool,
    ToolAnnotations,
)
from mcp_types.jsonrpc import jsonrpc_message_adapter
from mcp_types.methods import validate_client_request
from mcp_types.version import (
    HANDSHAKE_PROTOCOL_VERSIONS,
    KNOWN_PROTOCOL_VERSIONS,
    LATEST_HANDSHAKE_VERSION,
    MODERN_PROTOCOL_VERSIONS,
)
from pydantic import ValidationError as PydanticValidationError

__all__ = [
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "PARSE_ERROR",
    "JSONRPCError",
    "JSONRPCMessage",
    "JSONRPCRequest",
    "JSONRPCResponse",
    "PromptRecord",
    "Registry",
    "ResourceProblem",
    "ResourceRecord",
    "ToolRecord",
    "build_server",
    "dump_message",
    "http_exchange",
    "http_precheck",
    "message_from",
    "params_problem",
    "request_version",
    "serve_streams",
    "session_message",
]

# MCP's code for a resource that does not exist.
RESOURCE_NOT_FOUND = -32002


@dataclass(frozen=True)
class ToolRecord:
    name: str
    title: str
    description: str
    input_schema: dict[str, Any]
    read_only: bool
    destructive: bool
    idempotent: bool
    # (arguments) -> (texts, is_error): runs the tool; never raises for what the caller did wrong.
    call: Callable[[dict[str, Any]], Awaitable[tuple[list[str], bool]]]


@dataclass(frozen=True)
class ResourceRecord:
    uri: str  # a URI, or a URI template with {params}
    name: str
    description: str
    mime_type: str


@dataclass(frozen=True)
class PromptRecord:
    name: str
    description: str


class ResourceProblem(Exception):
    """A resource that cannot be read: missing (``not_found``) or refused, with what to tell the caller."""

    def __init__(self, message: str, *, not_found: bool) -> None:
        super().__init__(message)
        self.message = message
        self.not_found = not_found


async def _nothing(name: str) -> Any:
    raise ResourceProblem(f"nothing is registered under {name}", not_found=True)


@dataclass
class Registry:
    """What the server offers, as mcp_api.server registers it; the SDK's handlers read it."""

    tools: dict[str, ToolRecord] = field(default_factory=dict)
    resources: list[ResourceRecord] = field(default_factory=list)
    prompts: list[PromptRecord] = field(default_factory=list)
    # (uri) -> (text, MIME type); raises ResourceProblem.
    read_resource: Callable[[str], Awaitable[tuple[str, str]]] = _nothing
    # (name) -> text of the prompt's single user message; raises ResourceProblem when unknown.
    render_prompt: Callable[[str], Awaitable[str]] = _nothing


def build_server(registry: Registry, *, name: str, version: str, instructions: str) -> Server[Any]:
    """The SDK's low-level server answering from ``registry`` (read at each request)."""

    async def list_tools(_ctx: Any, _params: Any) -> ListToolsResult:
        return ListToolsResult(
            tools=[
                Tool(
                    name=record.name,
                    title=record.title,
                    description=record.description,
                    input_schema=record.input_schema,
                    annotations=ToolAnnotations(
                        title=record.title,
                        read_only_hint=record.read_only,
                        destructive_hint=record.destructive,
                        idempotent_hint=record.idempotent,
                    ),
                )
                for record in registry.tools.values()
            ]
        )

    async def call_tool(_ctx: Any, params: CallToolRequestParams) -> CallToolResult:
        record = registry.tools.get(params.name)
        if record is None:  # a protocol error, as the specification says, not a tool result
            known = ", ".join(sorted(registry.tools))
            raise MCPError(code=INVALID_PARAMS, message=f"Unknown tool: {params.name}; the tools are: {known}")
        texts, is_error = await record.call(dict(params.arguments or {}))
        return CallToolResult(content=[TextContent(type="text", text=text) for text in texts], is_error=is_error)

    def _resources(templates: bool) -> list[ResourceRecord]:
        return [record for record in registry.resources if ("{" in record.uri) == templates]

    async def list_resources(_ctx: Any, _params: Any) -> ListResourcesResult:
        return ListResourcesResult(
            resources=[
                Resource(uri=r.uri, name=r.name, description=r.description, mime_type=r.mime_type)
                for r in _resources(templates=False)
            ]
        )

    async def list_templates(_ctx: Any, _params: Any) -> ListResourceTemplatesResult:
        return ListResourceTemplatesResult(
            resource_templates=[
                ResourceTemplate(uri_template=r.uri, name=r.name, description=r.description, mime_type=r.mime_type)
                for r in _resources(templates=True)
            ]
        )

    async def read_resource(ctx: Any, params: ReadResourceRequestParams) -> ReadResourceResult:
        uri = str(params.uri)
        try:
            text, mime_type = await registry.read_resource(uri)
        except ResourceProblem as problem:
            # A missing resource is -32002 up to 2025-11-25; 2026-07-28 (SEP-2164) says -32602.
            modern = getattr(ctx, "protocol_version", None) in MODERN_PROTOCOL_VERSIONS
            code = RESOURCE_NOT_FOUND if problem.not_found and not modern else INVALID_PARAMS
            raise MCPError(code=code, message=problem.message, data={"uri": uri}) from None
        return ReadResourceResult(contents=[TextResourceContents(uri=uri, text=text, mime_type=mime_type)])

    async def list_prompts(_ctx: Any, _params: Any) -> ListPromptsResult:
        return ListPromptsResult(
            prompts=[Prompt(name=p.name, description=p.description, arguments=[]) for p in registry.prompts]
        )

    async def get_prompt(_ctx: Any, params: GetPromptRequestParams) -> GetPromptResult:
        try:
            text = await registry.render_prompt(params.name)
        except ResourceProblem as problem:
            raise MCPError(code=INVALID_PARAMS, message=problem.message) from None
        description = next((p.description for p in registry.prompts if p.name == params.name), None)
        return GetPromptResult(
            description=description,
            messages=[PromptMessage(role="user", content=TextContent(type="text", text=text))],
        )

    return Server(
        name,
        version=version,
        instructions=instructions,
        get_tool_input_schema=lambda tool: registry.tools[tool].input_schema if tool in registry.tools else None,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_list_resource_templates=list_templates,
        on_read_resource=read_resource,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
    )


def request_version(headers: Mapping[str, str], params: Any) -> str:
    """The protocol revision a request speaks: its ``_meta`` envelope's, else its header's, else the
    newest handshake revision (what a 2025 client that sent no header is answered in)."""
    meta = params.get("_meta") if isinstance(params, dict) else None
    version = meta.get(PROTOCOL_VERSION_META_KEY) if isinstance(meta, dict) else None
    if not isinstance(version, str):
        version = headers.get("mcp-protocol-version")
    return version if version in KNOWN_PROTOCOL_VERSIONS else LATEST_HANDSHAKE_VERSION


def is_modern(headers: Mapping[str, str]) -> bool:
    """Whether an HTTP request is of the 2026-07-28 era: its ``MCP-Protocol-Version`` header names a
    revision that has no handshake (the SDK routes by the same rule)."""
    version = headers.get("mcp-protocol-version")
    return version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS


def http_precheck(headers: Mapping[str, str], payload: dict[str, Any]) -> tuple[int, int, str] | None:
    """(HTTP status, JSON-RPC code, message) for a request the SDK would answer less helpfully, else None.

    Parameters that do not fit the method are said in a line (200 for the handshake era, 400 for
    2026-07-28, as its table of statuses says); a request carrying the 2026-07-28 envelope without
    the header that must repeat it is refused as the revision refuses headers that disagree. A
    2026-07-28 request without its envelope is left to the SDK, whose message names the keys."""
    params = payload.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    enveloped = isinstance(meta, dict) and PROTOCOL_VERSION_META_KEY in meta
    modern = is_modern(headers)
    if enveloped and headers.get("mcp-protocol-version") is None:
        said = "a request carrying the 2026-07-28 _meta envelope must send the MCP-Protocol-Version header too"
        return 400, HEADER_MISMATCH, said
    if modern and not enveloped:
        return None
    problem = params_problem(payload["method"], params, request_version(headers, params))
    if problem is None:
        return None
    return (400 if modern else 200), *problem


def params_problem(method: str, params: Any, version: str) -> tuple[int, str] | None:
    """(JSON-RPC code, message) when ``params`` do not fit ``method`` at ``version``, else None.

    The SDK answers such a request with a bare "Invalid request parameters" (and logs every
    member of the union it tried); both transports check here first and say what is wrong, in a
    line. A method the revision does not have is left to the SDK ("method not found")."""
    try:
        validate_client_request(method, version, params)
    except PydanticValidationError as error:  # before ValueError, which it is
        problems = []
        for problem in error.errors(include_url=False, include_input=False)[:3]:
            where = ".".join(str(part) for part in problem["loc"]) or "params"
            said = "missing" if problem["type"] == "missing" else problem["msg"][0].lower() + problem["msg"][1:]
            problems.append(f"{where}: {said}")
        return INVALID_PARAMS, f"invalid parameters for {method} ({'; '.join(problems)})"
    except (KeyError, ValueError):  # a method this revision does not have, or an unknown revision
        return None
    return None


@dataclass
class HttpAnswer:
    status: int
    headers: list[tuple[str, str]]
    body: bytes


async def http_exchange(server: Server[Any], scope: dict[str, Any], body: bytes) -> HttpAnswer:
    """One Streamable HTTP POST answered by the SDK, statelessly, in JSON (no event stream).

    ``scope`` is the request's ASGI scope; the SDK decides the revision (the ``initialize``
    handshake era, or 2026-07-28 by its header and envelope) and answers as the specification says.
    """
    manager = StreamableHTTPSessionManager(
        server,
        json_response=True,
        stateless=True,
        # The view checks Origin (and answers in JSON-RPC's shape); the SDK's own check would
        # refuse requests behind a proxy whose Host it does not know.
        security_settings=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        max_request_body_size=max(len(body), 1),
    )
    sent = False

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    answer = HttpAnswer(status=500, headers=[], body=b"")

    async def send(message: MutableMapping[str, Any]) -> None:
        if message["type"] == "http.response.start":
            answer.status = message["status"]
            answer.headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in message.get("headers", [])]
        elif message["type"] == "http.response.body":
            answer.body += message.get("body", b"")

    async with manager.run():
        await manager.handle_request(scope, receive, send)
    return answer


async def serve_streams(server: Server[Any], read_stream: Any, write_stream: Any) -> None:
    """Serve one connection (stdio) over a pair of streams until the read side closes: the client's
    first request decides the revision (``initialize``, or a request with the 2026-07-28 envelope)."""
    await server.run(read_stream, write_stream, server.create_initialization_options())


def message_from(data: Any) -> JSONRPCMessage:
    """A JSON-RPC message from parsed JSON; raises pydantic's ValidationError."""
    return jsonrpc_message_adapter.validate_python(data)


def session_message(message: JSONRPCMessage) -> SessionMessage:
    return SessionMessage(message)


def dump_message(message: Any) -> bytes:
    return message.model_dump_json(by_alias=True, exclude_none=True).encode()
