"""Settings of mcp_api: The MCP interface (Streamable HTTP at /mcp, stdio via `manage.py mcp_stdio`).

Imported by memory_platform/settings.py, so each is a Django setting (read as
``django.conf.settings.NAME``, overridden in tests with the ``settings`` fixture); what each
environment variable means is in memory_platform/configuration.py and the configuration reference.
Nothing here may import a model or anything that needs the apps loaded.
"""

from __future__ import annotations

from memory_platform.env import env_int, env_list

# Browsers may call /mcp only from these origins (besides the server's own host): a defence
# against DNS rebinding. Agents that are not browsers send no Origin and are unaffected.
MCP_ALLOWED_ORIGINS = env_list("MCP_ALLOWED_ORIGINS", [])
MCP_MAX_BODY_BYTES = env_int("MCP_MAX_BODY_BYTES", 1_000_000)
MCP_SEARCH_DEFAULT_LIMIT = env_int("MCP_SEARCH_DEFAULT_LIMIT", 50)
