"""The MCP server object and the small registry every tool, resource and prompt goes through.

Everything MCP-specific lives in this package; the domain (services, selectors) never sees it.
Adding a tool is one file: a module in ``mcp_api/tools/`` whose functions carry ``@tool(...)``.
Tool functions are plain synchronous Python taking the principal first; the registry runs them in
Django's sync thread, turns domain errors into tool results with ``isError: true`` and a message
for the agent, and never lets a stack trace out.
"""

from __future__ import annotations

import functools
import inspect
import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from asgiref.sync import sync_to_async
from django.db import DataError
from mcp.server.fastmcp.exceptions import ToolError
from mcp.server.fastmcp.prompts.base import Prompt
from mcp.server.fastmcp.resources import FunctionResource
from mcp.shared.exceptions import McpError
from mcp.types import INVALID_PARAMS, CallToolResult, ErrorData, TextContent, ToolAnnotations
from mcp_server.djangomcp import DjangoMCP  # type: ignore[import-untyped]
from pydantic import AnyUrl
from pydantic import ValidationError as PydanticValidationError

from mcp_api import fast
from mcp_api.context import current_principal
from mcp_api.identity import SERVER_INSTRUCTIONS, SERVER_NAME, SERVER_VERSION
from memory_platform.exceptions import DATABASE_UNAVAILABLE, DomainError, NotFound, database_unavailable

logger = logging.getLogger(__name__)

server = DjangoMCP(name=SERVER_NAME, instructions=SERVER_INSTRUCTIONS, stateless=True)
server._mcp_server.version = SERVER_VERSION


def _arguments_checked(call_tool: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
    """Every tool call's arguments, checked against the tool's input schema before it runs.

    An argument the tool does not take is refused, naming the ones it does (a misspelled
    ``qeury`` must not silently search for everything); what the schema refuses (a missing
    argument, a wrong type, a number out of range) is said per argument, in plain words.
    """

    async def checked(name: str, arguments: dict[str, Any] | None, *args: Any, **kwargs: Any) -> Any:
        tool = server._tool_manager.get_tool(name)
        if tool is not None:
            accepted = set(tool.parameters.get("properties", {}))
            unknown = sorted(set(arguments or {}) - accepted)
            if unknown:
                raise ToolError(
                    f"{name} does not take {', '.join(repr(arg) for arg in unknown)}; "
                    f"its arguments are: {', '.join(sorted(accepted)) or 'none'}"
                )
        try:
            return await call_tool(name, arguments, *args, **kwargs)
        except ToolError as error:
            if isinstance(error.__cause__, PydanticValidationError):
                raise ToolError(f"{name}: {argument_problems(error.__cause__)}") from None
            raise

    return checked


def argument_problems(error: PydanticValidationError) -> str:
    """What is wrong with each argument, without pydantic's type names, echoed input or links."""
    problems = []
    for problem in error.errors(include_url=False, include_input=False):
        where = ".".join(str(part) for part in problem["loc"]) or "arguments"
        if problem["type"] == "missing":
            problems.append(f"missing required argument '{where}'")
        else:
            problems.append(f"{where}: {problem['msg'][0].lower()}{problem['msg'][1:]}")
    return "; ".join(problems)


server._tool_manager.call_tool = _arguments_checked(server._tool_manager.call_tool)

# MCP's code for a resource that does not exist.
RESOURCE_NOT_FOUND = -32002


def _resource_errors_said(get_resource: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
    """resources/read answers a missing or refused resource with a JSON-RPC error of its own code
    and the domain's message, not the library's code 0 with its wrapping text twice over."""

    async def said(uri: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return await get_resource(uri, *args, **kwargs)
        except ValueError as error:
            cause: BaseException | None = error
            while cause is not None and not isinstance(cause, DomainError):
                cause = cause.__cause__ or cause.__context__
            if isinstance(cause, DomainError):
                code = RESOURCE_NOT_FOUND if isinstance(cause, NotFound) else INVALID_PARAMS
                raise McpError(ErrorData(code=code, message=cause.message)) from None
            if str(error).startswith("Unknown resource"):
                known = ", ".join(
                    sorted([*map(str, server._resource_manager._resources), *server._resource_manager._templates])
                )
                message = f"no resource {uri}; the resources are: {known}"
                raise McpError(ErrorData(code=RESOURCE_NOT_FOUND, message=message)) from None
            raise

    return said


server._resource_manager.get_resource = _resource_errors_said(server._resource_manager.get_resource)


@dataclass
class ToolOutput:
    """Several content blocks: the contract's payload first, extra information after it."""

    blocks: list[Any] = field(default_factory=list)


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)


def _result(value: Any) -> CallToolResult:
    blocks = value.blocks if isinstance(value, ToolOutput) else [value]
    return CallToolResult(content=[TextContent(type="text", text=_text(block)) for block in blocks])


def error_result(message: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=message)], isError=True)


def _invoke(fn: Callable[..., Any], kwargs: dict[str, Any]) -> CallToolResult:
    try:
        return _result(fn(current_principal(), **kwargs))
    except DomainError as error:
        return error_result(error.message)
    except DataError as error:
        # A value the database cannot store that no check caught (e.g. a NUL character).
        return error_result(f"invalid value: {str(error).splitlines()[0]}")
    except Exception as error:
        if database_unavailable(error):
            return error_result(DATABASE_UNAVAILABLE)
        logger.exception("MCP tool %s failed", fn.__name__)
        return error_result("The server hit an internal error and logged it; retry, or report it if it persists.")


def tool(
    name: str,
    *,
    title: str,
    description: str,
    read_only: bool = False,
    destructive: bool = False,
    idempotent: bool = False,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register ``fn(principal, **arguments)`` as the MCP tool ``name``.

    The tool's input schema comes from the function's parameters after ``principal`` (their
    annotations and defaults), so the function signature is the documentation the agent sees.
    """

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        signature = inspect.signature(fn, eval_str=True)
        parameters = list(signature.parameters.values())[1:]

        @functools.wraps(fn)
        async def call(**kwargs: Any) -> CallToolResult:
            return await sync_to_async(_invoke)(fn, kwargs)

        del call.__wrapped__  # the schema must come from the signature below, not fn's
        call.__signature__ = signature.replace(  # type: ignore[attr-defined]
            parameters=parameters, return_annotation=CallToolResult
        )
        call.__annotations__ = {p.name: p.annotation for p in parameters} | {"return": CallToolResult}
        server.add_tool(
            call,
            name=name,
            title=title,
            description=description,
            annotations=ToolAnnotations(
                title=title, readOnlyHint=read_only, destructiveHint=destructive, idempotentHint=idempotent
            ),
            structured_output=False,
        )
        # Say in the schema what the call checks: an argument the tool does not take is refused.
        server._tool_manager._tools[name].parameters["additionalProperties"] = False
        fast.register(name, functools.partial(_invoke, fn), server._tool_manager._tools[name])
        return fn

    return register


def resource(uri: str, *, name: str, description: str, mime_type: str = "application/json") -> Callable[..., Any]:
    """Register ``fn(principal, **uri_params) -> str`` as a resource (or template, if ``uri`` has {params})."""

    def register(fn: Callable[..., str]) -> Callable[..., str]:
        signature = inspect.signature(fn, eval_str=True)
        parameters = list(signature.parameters.values())[1:]

        async def read(**kwargs: Any) -> str:
            return await sync_to_async(lambda: fn(current_principal(), **kwargs))()

        read.__signature__ = signature.replace(parameters=parameters, return_annotation=str)  # type: ignore[attr-defined]
        read.__annotations__ = {p.name: p.annotation for p in parameters} | {"return": str}
        read.__name__ = fn.__name__
        if "{" in uri:
            server._resource_manager.add_template(
                read, uri_template=uri, name=name, description=description, mime_type=mime_type
            )
        else:
            server.add_resource(
                FunctionResource(uri=AnyUrl(uri), name=name, description=description, mime_type=mime_type, fn=read)
            )
        return fn

    return register


def prompt(name: str, *, description: str) -> Callable[..., Any]:
    """Register ``fn(principal) -> str`` as a prompt whose single user message is the returned text."""

    def register(fn: Callable[..., str]) -> Callable[..., str]:
        async def render() -> str:
            return await sync_to_async(lambda: fn(current_principal()))()

        render.__name__ = fn.__name__
        server.add_prompt(Prompt.from_function(render, name=name, description=description))
        return fn

    return register
