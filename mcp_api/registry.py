"""The MCP server with every tool, resource and prompt registered: what the transports serve.

mcp_api.server says how a tool is registered (``@tool``, ``@resource``, ``@prompt``); each module of
mcp_api.tools registers its own; this module loads them all, once, and builds the SDK's server
over them (mcp_api.sdk), so that the server module never imports the tools that import it.
"""

from __future__ import annotations

import importlib
import pkgutil
import threading
from typing import Any

from mcp_api import sdk, tools
from mcp_api.identity import SERVER_INSTRUCTIONS, SERVER_NAME, SERVER_VERSION
from mcp_api.server import registry

_server: Any = None
_loading = threading.Lock()


def get_server() -> Any:
    """The SDK's server with every module of mcp_api.tools imported (and so registered), once."""
    global _server  # noqa: PLW0603 - registration happens once per process
    if _server is None:
        with _loading:
            if _server is None:
                for module in pkgutil.iter_modules(tools.__path__):
                    importlib.import_module(f"{tools.__name__}.{module.name}")
                _server = sdk.build_server(
                    registry, name=SERVER_NAME, version=SERVER_VERSION, instructions=SERVER_INSTRUCTIONS
                )
    return _server


def offered() -> sdk.Registry:
    """Every tool, resource and prompt the server offers, registered."""
    get_server()
    return registry
