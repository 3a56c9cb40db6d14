"""The MCP server with every tool, resource and prompt registered: what the transports serve.

mcp_api.server says how a tool is registered (``@tool``, ``@resource``, ``@prompt``); each module of
mcp_api.tools registers its own; this module loads them all, once, so that the server module never
imports the tools that import it.
"""

from __future__ import annotations

import importlib
import pkgutil
import threading

from mcp_api import tools
from mcp_api.server import DjangoMCP, server

_loaded = False
_loading = threading.Lock()


def get_server() -> DjangoMCP:
    """The server with every module of mcp_api.tools imported (and so registered), once."""
    global _loaded  # noqa: PLW0603 - registration happens once per process
    if not _loaded:
        with _loading:
            if not _loaded:
                for module in pkgutil.iter_modules(tools.__path__):
                    importlib.import_module(f"{tools.__name__}.{module.name}")
                _loaded = True
    return server
