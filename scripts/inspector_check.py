"""Check the live MCP server with an independent client: the MCP Inspector CLI.

Starts the platform on a free loopback port (its embedded database), creates a throwaway
organization and token (deleted afterwards), then asks the Inspector for tools/list, a tools/call, resources/read
and prompts/get over Streamable HTTP with the bearer token. Exits non-zero if any of them fails.

    .venv/bin/python scripts/inspector_check.py
"""

from __future__ import annotations

import json
import subprocess

from live_server import ROOT, live_server, scratch_organization
from npm_install import npm_ci

INSPECTOR_DIR = ROOT / "scripts" / "inspector"


def _expect(condition: bool, what: str) -> None:
    if not condition:
        raise SystemExit(f"inspector check failed: {what}")


def _inspector(url: str, token: str, *args: str) -> dict:
    command = [
        str(INSPECTOR_DIR / "node_modules" / ".bin" / "mcp-inspector"),
        "--cli",
        url,
        "--transport",
        "http",
        "--header",
        f"Authorization: Bearer {token}",
        *args,
    ]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=INSPECTOR_DIR, check=False)
    if result.returncode != 0:
        raise SystemExit(f"inspector {' '.join(args)} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
    return json.loads(result.stdout)


def main() -> None:
    if not (INSPECTOR_DIR / "node_modules" / ".bin" / "mcp-inspector").exists():
        npm_ci(INSPECTOR_DIR)
    with scratch_organization("inspector", role="agent") as (slug, token), live_server() as base:
        _check(f"{base}/mcp", slug, token)


def _check(url: str, slug: str, token: str) -> None:
    tools = _inspector(url, token, "--method", "tools/list")
    names = {tool["name"] for tool in tools["tools"]}
    _expect({"memory-write", "memory-search", "memory-link"} <= names, repr(names))
    written = _inspector(
        url,
        token,
        "--method",
        "tools/call",
        "--tool-name",
        "memory-write",
        "--tool-arg",
        f"organization={slug}",
        "scope_type=organization",
        "memory_type=business_rule",
        "current_content=All deployments must pass acceptance tests.",
    )
    _expect(not written.get("isError"), repr(written))
    memory = json.loads(written["content"][0]["text"])
    _expect(memory["organization"] == slug and memory["status"] == "draft", repr(memory))
    index = _inspector(url, token, "--method", "resources/read", "--uri", "memory://index")
    entries = json.loads(index["contents"][0]["text"])
    _expect(entries and "current_content" not in entries[0], repr(entries))
    prompt = _inspector(url, token, "--method", "prompts/get", "--prompt-name", "memory-agent-core")
    _expect("Memory MCP Server" in prompt["messages"][0]["content"]["text"], "prompt text")
    print(f"MCP Inspector CLI: tools/list ({len(names)} tools), tools/call, resources/read, prompts/get: ok")


if __name__ == "__main__":
    main()
