"""MCP over stdio: JSON-RPC lines on stdin, answers on stdout, logs on stderr only.

Ends cleanly (exit status 0) on end of input and on SIGTERM/SIGINT: it stops reading, lets the
calls already running finish and their answers go out, then returns.
"""

from __future__ import annotations

import json
import signal
import sys
from collections.abc import Callable
from typing import Any

import anyio
import anyio.abc
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from pydantic import ValidationError

from mcp_api import sdk, stdio_bootstrap
from mcp_api.context import PrincipalSource, set_principal
from mcp_api.registry import get_server
from memory_platform import json_input
from memory_platform.json_input import JsonInputError

# How long a shutdown waits for calls still running to answer.
DRAIN_SECONDS = 30.0


class _InFlight:
    """Ids of the requests read but not answered yet.

    The MCP library cancels the calls still running as soon as its input closes, so the input is
    only closed once they have answered.
    """

    def __init__(self) -> None:
        self._ids: set[Any] = set()
        self._idle = anyio.Event()
        self._idle.set()

    def started(self, request_id: Any) -> None:
        self._ids.add(request_id)
        if self._idle.is_set():
            self._idle = anyio.Event()

    def answered(self, request_id: Any) -> None:
        self._ids.discard(request_id)
        if not self._ids:
            self._idle.set()

    async def drained(self) -> None:
        await self._idle.wait()


def _write_line(stdout: Any, message: dict[str, Any]) -> None:
    """Write one message, whole (no await inside: lines never interleave with the server's)."""
    stdout.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
    stdout.flush()


def _valid_id(value: object) -> bool:
    return isinstance(value, str | int) and not isinstance(value, bool)


def _refusal(line: bytes) -> dict[str, Any] | sdk.JSONRPCMessage:
    """The message on ``line``, or the JSON-RPC error answering it: every line gets an answer."""
    try:
        data = json_input.loads(line)
    except JsonInputError as error:
        # Still the request's answer: a client over stdio matches answers to questions by id alone.
        return {
            "jsonrpc": "2.0",
            "id": json_input.top_level_id(line),
            "error": {"code": sdk.PARSE_ERROR, "message": error.message},
        }
    if isinstance(data, dict) and "id" in data and not _valid_id(data["id"]):
        # Not a notification with an odd field: a request whose id JSON-RPC does not allow.
        said = "not a JSON-RPC 2.0 request (id must be a string or a number)"
        return {"jsonrpc": "2.0", "id": None, "error": {"code": sdk.INVALID_REQUEST, "message": said}}
    try:
        message = sdk.message_from(data)
    except ValidationError as error:
        request_id = data.get("id") if isinstance(data, dict) else None
        valid_id = request_id if _valid_id(request_id) else None
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'message'}: {e['msg']}" for e in error.errors()[:3])
        return {
            "jsonrpc": "2.0",
            "id": valid_id,
            "error": {"code": sdk.INVALID_REQUEST, "message": f"not a JSON-RPC 2.0 request ({problems})"},
        }
    if isinstance(message, sdk.JSONRPCRequest):
        version = sdk.request_version(_session_version, message.params)
        problem = sdk.params_problem(message.method, message.params, version)
        if problem is not None:
            code, said = problem
            return {"jsonrpc": "2.0", "id": message.id, "error": {"code": code, "message": said}}
        if message.method == "initialize" and isinstance(message.params, dict):
            requested = message.params.get("protocolVersion")
            if isinstance(requested, str):
                _session_version["mcp-protocol-version"] = requested
    return message


# The revision the session's client asked for at its handshake (2026-07-28 clients say it per request).
_session_version: dict[str, str] = {}

# Requests a session answers without its token being checked again (the handshakes and liveness).
UNCHECKED_METHODS = frozenset({"initialize", "server/discover", "ping"})
# Why a request cannot be served: a JSON-RPC error code and message (see mcp_stdio's session), or None.
TokenCheck = Callable[[], tuple[int, str] | None]


async def _refused(message: sdk.JSONRPCMessage, check: TokenCheck | None) -> dict[str, Any] | None:
    """The answer to a request the session cannot serve (its token does not work, or the database
    does not answer), else None.

    The token is checked again on every request, so revoking or expiring it (or removing its
    person) takes effect in an open stdio session as on HTTP, not when the process restarts."""
    request = message
    if check is None or not isinstance(request, sdk.JSONRPCRequest) or request.method in UNCHECKED_METHODS:
        return None
    refusal = await anyio.to_thread.run_sync(check)
    if refusal is None:
        return None
    code, why = refusal
    return {"jsonrpc": "2.0", "id": request.id, "error": {"code": code, "message": why}}


async def _read_lines(
    send: MemoryObjectSendStream[Any], stdin: Any, stdout: Any, in_flight: _InFlight, check: TokenCheck | None
) -> None:
    replay = list(stdio_bootstrap.pending_lines)
    stdio_bootstrap.pending_lines.clear()
    while True:
        if replay:
            line = replay.pop(0)
        else:
            # A blocking read in a thread; on shutdown the thread is abandoned, not awaited.
            line = await anyio.to_thread.run_sync(stdin.readline, abandon_on_cancel=True)
        if not line:
            return  # end of input
        if not line.strip():
            continue
        message = _refusal(line)
        if isinstance(message, dict):
            _write_line(stdout, message)
            continue
        refused = await _refused(message, check)
        if refused is not None:
            _write_line(stdout, refused)
            continue
        if isinstance(message, sdk.JSONRPCRequest):
            in_flight.started(message.id)
        await send.send(sdk.session_message(message))


async def _write_messages(receive: MemoryObjectReceiveStream[Any], stdout: Any, in_flight: _InFlight) -> None:
    already_answered = stdio_bootstrap.answered_id
    async with receive:
        async for session_message in receive:
            message = session_message.message
            if isinstance(message, sdk.JSONRPCResponse | sdk.JSONRPCError):
                in_flight.answered(message.id)
            duplicate = isinstance(message, sdk.JSONRPCResponse) and message.id == already_answered
            if already_answered is not None and duplicate:
                already_answered = None  # the fast path sent this handshake answer already
                continue
            stdout.write(sdk.dump_message(message) + b"\n")
            stdout.flush()


async def _stop_on_signal(reader: anyio.CancelScope) -> None:
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async for _ in signals:
            reader.cancel()
            return


async def serve_stdio(principal: PrincipalSource, on_ready: Any = None, check: TokenCheck | None = None) -> bool:
    """Serve until end of input or a signal. True if a signal ended it, leaving a thread blocked on stdin.

    ``check`` says why a request cannot be served (None when it can); it runs before every request
    but the handshake, and ``principal`` may be a function giving the principal it last found."""
    set_principal(principal)
    read_writer, read_stream = anyio.create_memory_object_stream[Any](0)
    write_stream, write_reader = anyio.create_memory_object_stream[Any](0)
    stdin = sys.stdin.buffer
    stdout = sys.stdout.buffer
    in_flight = _InFlight()

    async with anyio.create_task_group() as outer:
        outer.start_soon(_write_messages, write_reader, stdout, in_flight)
        reader = anyio.CancelScope()

        async def read() -> None:
            with reader:
                await _read_lines(read_writer, stdin, stdout, in_flight, check)
            with anyio.move_on_after(DRAIN_SECONDS):
                await in_flight.drained()
            await read_writer.aclose()

        outer.start_soon(read)
        watcher = anyio.CancelScope()

        async def watch() -> None:
            with watcher:
                await _stop_on_signal(reader)

        outer.start_soon(watch)
        if on_ready is not None:
            on_ready()
        # Returns when input ends; calls already running finish first.
        await sdk.serve_streams(get_server(), read_stream, write_stream)
        await write_stream.aclose()
        watcher.cancel()
    return reader.cancel_called
