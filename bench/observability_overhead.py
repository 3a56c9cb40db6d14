"""What the request id and the metrics cost a request: the same REST and MCP calls through Django's
handler with every middleware, and without memory_platform.logs.RequestIdMiddleware and
memory_platform.metrics.RequestMetricsMiddleware, alternated call by call, in one process.

    python bench/observability_overhead.py --json bench/results/$(date +%F)/observability_overhead.json
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import print_table, scratch_database, summary_ms, write_json

OBSERVING = ("memory_platform.logs.RequestIdMiddleware", "memory_platform.metrics.RequestMetricsMiddleware")


def run(rounds: int) -> dict[str, Any]:
    from django.conf import settings
    from django.test import Client

    from organizations.models import Organization, Role
    from organizations.principal import Principal
    from organizations.tokens import token_create

    organization = Organization.objects.create(slug="overhead", name="Overhead")
    token = token_create(principal=Principal.for_operator(organization), role=Role.AGENT, name="bench").raw
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"}
    calls = {
        "rest GET /repositories/": lambda c: c.get("/api/v1/repositories/", headers=headers),
        "mcp tools/list": lambda c: c.post(
            "/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, "application/json", headers=headers
        ),
    }
    settings.API_THROTTLE_RATE = ""  # the bench sends far more than a caller may
    everything = list(settings.MIDDLEWARE)
    with_them = Client()
    for call in calls.values():
        call(with_them)  # loads the middleware as configured now
    settings.MIDDLEWARE = [name for name in everything if name not in OBSERVING]
    without_them = Client()
    for call in calls.values():
        call(without_them)
    settings.MIDDLEWARE = everything
    clients = {"with": with_them, "without": without_them}
    timings: dict[str, dict[str, list[float]]] = {name: {way: [] for way in clients} for name in calls}
    for n in range(rounds):
        for name, call in calls.items():
            for way in ("with", "without") if n % 2 else ("without", "with"):
                started = time.process_time()
                response = call(clients[way])
                timings[name][way].append(time.process_time() - started)
                assert response.status_code == 200, response.content
    return {name: {way: summary_ms(values) for way, values in ways.items()} for name, ways in timings.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=1500, help="Calls of each kind, each way.")
    parser.add_argument("--json", help="Write the result here.")
    args = parser.parse_args()
    with scratch_database("observability_overhead"):
        result = run(args.rounds)
    rows = [
        [name, ways["without"]["p50"], ways["with"]["p50"], ways["without"]["mean"], ways["with"]["mean"]]
        for name, ways in result.items()
    ]
    header = ["call", "cpu p50 without", "cpu p50 with", "cpu mean without", "cpu mean with"]
    print_table("CPU ms per call in the web process, without and with the request id and metrics", header, rows)
    write_json(args.json, {"rounds": args.rounds, "cpu_ms": result})


if __name__ == "__main__":
    main()
