"""What operators and curators read, by tenant size: the health check, a metrics scrape, the status
report (`memory-status`, GET /api/v1/status/), the curators' dashboard, the count of what waits for
review (every admin page shows it to a curator) and the review queue's first page.

The first two answer for the whole platform, so they are timed once; the last two for a few tenants
chosen by size. Each is read once to warm the pages it touches, then --repeat times, timed,
in-process (the view or the selector; HTTP adds the same for each). Nothing in the database is
changed but one curator account the dashboard and the queue are read as, a curator of the tenants
read.

Run against a database bench/scale.py kept:

    DATABASE_URL=postgresql://USER@/bench_scale_100000?host=SOCKET_DIR \\
        python bench/operator_reads.py --json bench/results/$(date +%F)/operator-reads.json
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import print_table, summary_ms, write_json
from bench.write_hints import tenants_by_size, tenants_near

METRICS_TOKEN = "bench-operator-reads"  # noqa: S105 - the scrape token of this run alone, set in its settings


def _timed(read: Callable[[], Any], repeat: int) -> dict[str, float]:
    read()
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        read()
        times.append(time.perf_counter() - started)
    return summary_ms(times)


def _get(client: Any, path: str, **headers: str) -> Callable[[], None]:
    def read() -> None:
        response = client.get(path, **headers)
        if response.status_code != 200:
            raise SystemExit(f"GET {path}: {response.status_code} {response.content[:200]!r}")

    return read


def run(args: argparse.Namespace) -> dict[str, Any]:
    from django.contrib.auth import get_user_model
    from django.test import Client, RequestFactory, override_settings

    from curation.review import review_items, waiting_count
    from curation.selectors import dashboard
    from memories.selectors import memory_status_report
    from organizations.models import Membership, Organization, Role
    from organizations.principal import Principal

    tenants = tenants_by_size()
    largest = tenants[0][1]
    picks = tenants_near(tenants, [largest, largest // 10, 40])
    client = Client(SERVER_NAME="localhost")
    curator, _ = get_user_model().objects.get_or_create(username="bench-operator-reads", defaults={"is_staff": True})
    result: dict[str, Any] = {"benchmark": "operator_reads", "memories": sum(c for _, c in tenants)}
    with override_settings(METRICS_TOKEN=METRICS_TOKEN):
        result["platform"] = {
            "healthz": _timed(_get(client, "/healthz"), args.repeat),
            "metrics": _timed(_get(client, "/metrics", HTTP_AUTHORIZATION=f"Bearer {METRICS_TOKEN}"), args.repeat),
        }
    result["tenants"] = {}
    for organization_id, rows in picks:
        organization = Organization.objects.get(pk=organization_id)
        principal = Principal.for_operator(organization, "bench")
        # A curator of this tenant alone, as the admin's pages are asked for by one.
        Membership.objects.filter(user=curator).exclude(organization=organization).delete()
        Membership.objects.get_or_create(user=curator, organization=organization, defaults={"role": Role.CURATOR})
        request = RequestFactory().get("/admin/review/")
        request.user = curator
        result["tenants"][str(rows)] = {
            "status": _timed(lambda p=principal: memory_status_report(p), args.repeat),
            "dashboard": _timed(lambda o=organization: dashboard(o, curator), args.repeat),
            "review count": _timed(lambda r=request: waiting_count(r), args.repeat),
            "review queue": _timed(lambda r=request: review_items(r), args.repeat),
        }
    return result


def report(result: dict[str, Any]) -> None:
    print_table(f"platform reads at {result['memories']} memories (ms)", ["read", "p50", "p95"],
                [[name, row["p50"], row["p95"]] for name, row in result["platform"].items()])  # fmt: skip
    rows = [
        [rows, read, timing["p50"], timing["p95"]]
        for rows, reads in result["tenants"].items()
        for read, timing in reads.items()
    ]
    print_table("tenant reads (ms)", ["tenant rows", "read", "p50", "p95"], rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--json", dest="json_out", default=None)
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_platform.settings")
    import django

    django.setup()
    result = run(args)
    report(result)
    write_json(args.json_out, result)


if __name__ == "__main__":
    main()
