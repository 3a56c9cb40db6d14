"""The MCP clients of tests/mcp (in-process by default, the live server's for ``mcp_live`` tests)."""

from tests.mcp.conftest import agent, connect, curator, endpoint, write_memory  # noqa: F401 - fixtures
