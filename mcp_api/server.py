"""The small registry every tool, resource and prompt goes through, and the MCP server built on it.

Everything MCP-specific lives in this package; the domain (services, selectors) never sees it.
Adding a tool is one file: a module in ``mcp_api/tools/`` whose functions carry ``@tool(...)``.
Tool functions are plain synchronous Python taking the principal first; the registry checks their
arguments against the schema their signature gives, runs them in Django's sync thread, turns
domain errors into tool results with ``isError: true`` and a message for the agent, and never lets
a stack trace out. The protocol itself (both revisions, both transports) is the SDK's, reached
through mcp_api.sdk only.
"""

from __future__ import annotations

import inspect
import json
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.db import DataError
from pydantic import BaseModel, ConfigDict, create_model
from pydantic import ValidationError as PydanticValidationError

from mcp_api import bridge, sdk
from mcp_api.context import current_principal
from memory_platform.exceptions import DATABASE_UNAVAILABLE, DomainError, NotFound, database_unavailable

logger = logging.getLogger(__name__)

registry = sdk.Registry()


@dataclass
class ToolOutput:
    """Several content blocks: the contract's payload first, extra information after it."""

    blocks: list[Any] = field(default_factory=list)


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)


INTERNAL_ERROR_TEXT = "The server hit an internal error and logged it; retry, or report it if it persists."


def _invoke(fn: Callable[..., Any], kwargs: dict[str, Any]) -> tuple[list[str], bool]:
    """(content texts, is_error) of ``fn(principal, **kwargs)``."""
    try:
        value = fn(current_principal(), **kwargs)
    except DomainError as error:
        return [error.message], True
    except DataError as error:
        # A value the database cannot store that no check caught (e.g. a NUL character).
        return [f"invalid value: {str(error).splitlines()[0]}"], True
    except Exception as error:
        if database_unavailable(error):
            return [DATABASE_UNAVAILABLE], True
        logger.exception("MCP tool %s failed", fn.__name__)
        return [INTERNAL_ERROR_TEXT], True
    blocks = value.blocks if isinstance(value, ToolOutput) else [value]
    return [_text(block) for block in blocks], False


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


class _Arguments(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)


@dataclass(frozen=True)
class _Signature:
    """A tool function's arguments (after the principal) as a model and its JSON Schema.

    Ranges and enumerations the schema advertises are checked by the services, whose messages say
    what to send; the model checks presence and types."""

    model: type[BaseModel]
    schema: dict[str, Any]

    @classmethod
    def of(cls, fn: Callable[..., Any]) -> _Signature:
        parameters = list(inspect.signature(fn, eval_str=True).parameters.values())[1:]
        fields: dict[str, Any] = {}
        for parameter in parameters:
            fields[parameter.name] = (
                parameter.annotation
                if parameter.default is inspect.Parameter.empty
                else (parameter.annotation, parameter.default)
            )
        model = create_model(f"{fn.__name__}Arguments", __base__=_Arguments, **fields)
        # Say in the schema what the call checks: an argument the tool does not take is refused.
        schema = model.model_json_schema(by_alias=True) | {"additionalProperties": False}
        return cls(model=model, schema=schema)

    def parse(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """The keyword arguments of the call; raises DomainError saying what to fix."""
        accepted = set(self.schema.get("properties", {}))
        unknown = sorted(set(arguments) - accepted)
        if unknown:
            raise DomainError(
                f"{name} does not take {', '.join(repr(arg) for arg in unknown)}; "
                f"its arguments are: {', '.join(sorted(accepted)) or 'none'}"
            )
        try:
            model = self.model.model_validate(_json_in_strings(self.model, arguments))
        except PydanticValidationError as error:
            raise DomainError(f"{name}: {argument_problems(error)}") from None
        return {name: getattr(model, name) for name in type(model).model_fields}


def _json_in_strings(model: type[BaseModel], arguments: dict[str, Any]) -> dict[str, Any]:
    """Arguments a client sent as JSON inside a string (``'["a"]'`` for a list), parsed.

    Some hosts send every structured argument that way; a string meant as a string is kept."""
    parsed = dict(arguments)
    for key, value in arguments.items():
        info = model.model_fields.get(key)
        if info is None or not isinstance(value, str) or info.annotation is str:
            continue
        try:
            candidate = json.loads(value)
        except ValueError:
            continue
        if isinstance(candidate, list | dict):
            parsed[key] = candidate
    return parsed


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
        signature = _Signature.of(fn)

        def run(arguments: dict[str, Any]) -> tuple[list[str], bool]:
            try:
                kwargs = signature.parse(name, arguments)
            except DomainError as error:
                return [error.message], True
            return _invoke(fn, kwargs)

        async def call(arguments: dict[str, Any]) -> tuple[list[str], bool]:
            return await bridge.on_calling_thread(lambda: run(arguments))

        registry.tools[name] = sdk.ToolRecord(
            name=name,
            title=title,
            description=description,
            input_schema=signature.schema,
            read_only=read_only,
            destructive=destructive,
            idempotent=idempotent,
            call=call,
        )
        return fn

    return register


@dataclass(frozen=True)
class _Reader:
    record: sdk.ResourceRecord
    pattern: re.Pattern[str]
    read: Callable[..., str]


_readers: list[_Reader] = []


def _uri_pattern(uri: str) -> re.Pattern[str]:
    parts = re.split(r"\{(\w+)\}", uri)
    # Even positions are literal text, odd ones parameter names.
    return re.compile(
        "".join(re.escape(part) if i % 2 == 0 else f"(?P<{part}>[^/?#]+)" for i, part in enumerate(parts)) + "$"
    )


def resource(uri: str, *, name: str, description: str, mime_type: str = "application/json") -> Callable[..., Any]:
    """Register ``fn(principal, **uri_params) -> str`` as a resource (or template, if ``uri`` has {params})."""

    def register(fn: Callable[..., str]) -> Callable[..., str]:
        record = sdk.ResourceRecord(uri=uri, name=name, description=description, mime_type=mime_type)
        registry.resources.append(record)
        _readers.append(_Reader(record=record, pattern=_uri_pattern(uri), read=fn))
        return fn

    return register


def _read(uri: str) -> tuple[str, str]:
    for reader in _readers:
        match = reader.pattern.match(uri)
        if match is None:
            continue
        try:
            return reader.read(current_principal(), **match.groupdict()), reader.record.mime_type
        except DomainError as error:
            raise sdk.ResourceProblem(error.message, not_found=isinstance(error, NotFound)) from None
    known = ", ".join(sorted(record.uri for record in registry.resources))
    raise sdk.ResourceProblem(f"no resource {uri}; the resources are: {known}", not_found=True)


_prompts: dict[str, Callable[..., str]] = {}


def prompt(name: str, *, description: str) -> Callable[..., Any]:
    """Register ``fn(principal) -> str`` as a prompt whose single user message is the returned text."""

    def register(fn: Callable[..., str]) -> Callable[..., str]:
        registry.prompts.append(sdk.PromptRecord(name=name, description=description))
        _prompts[name] = fn
        return fn

    return register


def _render(name: str) -> str:
    render = _prompts.get(name)
    if render is None:
        raise sdk.ResourceProblem(f"no prompt {name}; the prompts are: {', '.join(sorted(_prompts))}", not_found=True)
    try:
        return render(current_principal())
    except DomainError as error:
        raise sdk.ResourceProblem(error.message, not_found=isinstance(error, NotFound)) from None


async def _read_on_calling_thread(uri: str) -> tuple[str, str]:
    return await bridge.on_calling_thread(lambda: _read(uri))


async def _render_on_calling_thread(name: str) -> str:
    return await bridge.on_calling_thread(lambda: _render(name))


registry.read_resource = _read_on_calling_thread
registry.render_prompt = _render_on_calling_thread
