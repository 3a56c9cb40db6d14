"""Fuzz the live REST API against its own OpenAPI schema with an independent client: Schemathesis.

Starts the platform on a free loopback port (its embedded database) with the rate limit raised,
creates a throwaway organization with an admin token, seeds a repository (with a code index), two
memories, a link and a fact so that requests by id can reach real objects, then runs ``schemathesis run`` on
/api/schema/ with a fixed seed and a bounded number of examples per operation. It fails on any
5xx, any response that does not match the schema (body, status code, content type, headers), any
invalid input that is accepted, and any operation that answers without valid credentials.
The organization is deleted and the server stopped afterwards, whatever happened.

    .venv/bin/python scripts/api_check.py [--max-examples N] [--seed N]

The JSON report and the server log of the last run stay in var/api-check/.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

from live_server import ROOT, live_server, scratch_organization

SCHEMATHESIS = Path(sys.executable).parent / "schemathesis"
OUTPUT_DIR = ROOT / "var" / "api-check"
CHECKS = [
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_headers_conformance",
    "response_schema_conformance",
    "negative_data_rejection",
    "ignored_auth",  # an operation that succeeds without credentials, or with invalid ones
]
# High enough that fuzzing is never throttled (tests/rest_api checks the 429 itself).
THROTTLE_RATE = "100000/min"
RUN_TIMEOUT_SECONDS = 600


def _request(base: str, token: str, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
    request = urllib.request.Request(  # noqa: S310 - our loopback URL
        f"{base}/api/v1/{path}",
        method=method,
        data=json.dumps(body).encode() if body is not None else None,
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=60) as response:  # noqa: S310
        return json.loads(response.read())


def _seed(base: str, token: str) -> dict[str, list[str | int]]:
    """Real objects for the requests by id: their ids, by kind."""
    repository = _request(base, token, "POST", "repositories/", {"slug": "api-check", "name": "API check"})
    first = _request(
        base,
        token,
        "POST",
        "memories/",
        {
            "scope_type": "organization",
            "memory_type": "business_rule",
            "current_content": "Every deployment must pass the acceptance tests first.",
            "status": "active",
            "importance": 7,
            "tags": ["deploy"],
        },
    )
    second = _request(
        base,
        token,
        "POST",
        "memories/",
        {
            "scope_type": "repository",
            "repository": repository["slug"],
            "memory_type": "convention",
            "current_content": "Money amounts are integers in minor units (cents), never floats.",
        },
    )
    link = _request(base, token, "POST", "links/", {"source_id": first["id"], "target_id": second["id"]})
    fact = _request(
        base,
        token,
        "POST",
        "triples/",
        {"subject": "api-check", "predicate": "owned_by", "object": "Team Atlas", "memory_id": second["id"]},
    )
    entity = _request(base, token, "POST", "entities/", {"name": "api-check"})
    spare = _request(base, token, "POST", "tokens/", {"role": "reader", "name": "api-check: for revoking"})
    # Two duplicates merged (the check's admin token merges at once): an applied proposal to read,
    # undo, and try to apply or dismiss again.
    twins = [
        _request(base, token, "POST", "memories/", {"scope_type": "organization", "memory_type": "fact",
                                                   "current_content": f"Invoices are numbered per year{end}"})
        for end in (".", "!")
    ]  # fmt: skip
    merged = _request(base, token, "POST", "memories/consolidate/", {"memory_ids": [t["id"] for t in twins]})
    # The repository's code index: a manifest sync with its one file sent, for the requests that read
    # or delete an index (no worker runs here, so its run stays queued).
    code = "def settle(cents: int) -> int:\n    return cents\n"
    index = f"code/repositories/{repository['slug']}"
    manifest = {"src/settle.py": hashlib.sha256(code.encode()).hexdigest()}
    _request(base, token, "POST", f"{index}/manifest/", {"manifest": manifest})
    _request(base, token, "POST", f"{index}/files/", {"files": [{"path": "src/settle.py", "content": code}]})
    return {
        "memory_ids": [first["id"], second["id"]],
        "repositories": [repository["slug"]],
        "link_ids": [link["id"]],
        "triple_ids": [fact["id"]],
        "entity_ids": [entity["id"]],
        "token_prefixes": [spare["prefix"]],
        "proposal_ids": [merged["proposal_id"]],
    }


def _config(seeded: dict[str, list[str | int]]) -> str:
    """schemathesis.toml: the token (from the environment, not the command line) and the seeded ids,
    used for half of the generated values of the parameters they fit."""
    lines = ['headers = { Authorization = "Bearer ${API_CHECK_TOKEN}" }', ""]
    for name, values in seeded.items():
        lines += [f"[dictionaries.{name}]", f"values = {json.dumps(values)}", ""]
    lines += [
        "[parameters]",
        '"path.memory_id" = { dictionary = "memory_ids", probability = 0.5 }',
        '"path.slug" = { dictionary = "repositories", probability = 0.5 }',
        '"body.source_id" = { dictionary = "memory_ids", probability = 0.5 }',
        '"body.target_id" = { dictionary = "memory_ids", probability = 0.5 }',
        '"body.superseded_by" = { dictionary = "memory_ids", probability = 0.5 }',
        '"body.memory_id" = { dictionary = "memory_ids", probability = 0.5 }',
        '"path.proposal_id" = { dictionary = "proposal_ids", probability = 0.5 }',
        "",
    ]
    for pattern, dictionary in (("links", "link_ids"), ("triples", "triple_ids"), ("entities", "entity_ids")):
        lines += [
            "[[operations]]",
            f'include-path-regex = "^/api/v1/{pattern}/"',
            f'parameters = {{ "path.id" = {{ dictionary = "{dictionary}", probability = 0.5 }} }}',
            "",
        ]
    # Revoking a token: the spare one, or made-up prefixes. Not prefixes seen in responses (GET /tokens/
    # lists the check's own token) and not in the stateful phase (which links GET /tokens/ to it): the
    # run would revoke its own credentials and every later request would be a 401.
    lines += [
        "[[operations]]",
        'include-operation-id = "tokens_revoke"',
        'parameters = { "path.prefix" = { dictionary = "token_prefixes", probability = 0.5 } }',
        "phases.examples.extra-data-sources.responses = false",
        "phases.coverage.extra-data-sources.responses = false",
        "phases.fuzzing.extra-data-sources.responses = false",
        "phases.stateful.enabled = false",
        "",
    ]
    return "\n".join(lines)


def _schemathesis(base: str, token: str, config: Path, report: Path, args: argparse.Namespace) -> int:
    command = [
        str(SCHEMATHESIS),
        "--config-file",
        str(config),
        "run",
        f"{base}/api/schema/",
        "--checks",
        ",".join(CHECKS),
        "--max-examples",
        str(args.max_examples),
        "--seed",
        str(args.seed),
        "--workers",
        "2",
        "--request-timeout",
        "30",
        "--generation-database",
        "none",  # reproducible from the seed, and no .hypothesis/ directory
        "--report",
        "json",
        "--report-json-path",
        str(report),
    ]
    if os.environ.get("CI"):
        command.append("--no-color")
    # The hooks module (scripts/api_check_hooks.py) gives schemathesis the JSON Lines serializer.
    scripts = str(Path(__file__).resolve().parent)
    path = os.pathsep.join(filter(None, [scripts, os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "API_CHECK_TOKEN": token, "SCHEMATHESIS_HOOKS": "api_check_hooks", "PYTHONPATH": path}
    try:
        return subprocess.run(command, cwd=config.parent, env=env, timeout=RUN_TIMEOUT_SECONDS, check=False).returncode
    except subprocess.TimeoutExpired:
        print(f"schemathesis did not finish within {RUN_TIMEOUT_SECONDS} s", file=sys.stderr)
        return 1


def _summary(report: Path, exit_code: int, seconds: float) -> bool:
    if not report.exists():
        print(f"API check failed: schemathesis exited with {exit_code} and wrote no report")
        return False
    data = json.loads(report.read_text())
    operations, cases = data["operations"], data["test_cases"]
    failures = sum(group["count"] for group in data["failures"])
    errors = sum(group["count"] for group in data["errors"])
    print(
        f"API check (schemathesis {data['schemathesis_version']}, seed {data['seed']}): "
        f"{operations['tested']}/{operations['selected']} operations tested, "
        f"{cases['generated']} test cases, checks {', '.join(CHECKS)}; "
        f"{failures} failures, {errors} errors, {seconds:.0f} s"
    )
    for group in data["failures"]:
        print(f"  failure: {group['title']} ({group['count']}x) in {', '.join(group['operations'])}")
    for group in data["errors"]:
        print(f"  error: {group['title']} ({group['count']}x)")
    return exit_code == 0 and failures == 0 and errors == 0 and operations["errored"] == 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--max-examples", type=int, default=100, help="Test cases per operation and phase.")
    parser.add_argument("--seed", type=int, default=20240601, help="Hypothesis seed (fixed: runs are reproducible).")
    args = parser.parse_args()

    OUTPUT_DIR.mkdir(parents=True, exist_ok=True)
    config, report, log_path = OUTPUT_DIR / "schemathesis.toml", OUTPUT_DIR / "report.json", OUTPUT_DIR / "server.log"
    report.unlink(missing_ok=True)
    started = time.monotonic()
    with (
        log_path.open("w") as log,
        scratch_organization("api-check", role="admin") as (_, token),
        live_server(env={"API_THROTTLE_RATE": THROTTLE_RATE}, log=log) as base,
    ):
        config.write_text(_config(_seed(base, token)))
        exit_code = _schemathesis(base, token, config, report, args)
    if not _summary(report, exit_code, time.monotonic() - started):
        print(f"Report: {report.relative_to(ROOT)}; server log: {log_path.relative_to(ROOT)}")
        sys.exit(1)


if __name__ == "__main__":
    main()
