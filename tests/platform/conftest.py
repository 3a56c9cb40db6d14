from tests.mcp.conftest import server_env  # noqa: F401 - the fixture, for the tests here
