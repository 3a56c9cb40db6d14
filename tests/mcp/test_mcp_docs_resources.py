from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings
from mcp import Client

from tests.mcp.client import McpClient

pytestmark = pytest.mark.django_db

DOCS = ["docs://mcp-overview", "docs://tools-guide", "docs://memory-rules"]


def default_text(key: str) -> str:
    return (Path(settings.BASE_DIR) / "templates" / "mcp" / f"{key}.md").read_text()


def test_the_docs_and_the_index_are_listed(agent: McpClient) -> None:
    async def resources(session: Client) -> dict[str, str | None]:
        return {str(item.uri): item.mime_type for item in (await session.list_resources()).resources}

    listed = agent.run(resources)

    assert {*DOCS, "memory://index"} <= set(listed)
    for uri in DOCS:
        assert listed[uri] == "text/markdown"


def test_each_doc_is_non_empty_markdown(agent: McpClient) -> None:
    for uri in DOCS:
        text = agent.read_resource(uri)

        assert text.startswith("# "), uri
        assert len(text.splitlines()) > 5, uri
        assert text == default_text(uri.removeprefix("docs://"))
