"""The write-time duplicate and conflict hint (memories.hints.write_hints) by tenant size.

Every write looks up the new memory's nearest alive neighbours of its scope and classifies them
(possible duplicate, conflict). This times that step alone, in-process, for memories already stored
(the query is the one a write of the same text and vector makes): --samples memories of each of
a few tenants chosen by size, each hinted twice (the first warms the pages it reads, the second is
timed).

Run against a database bench/scale.py kept (nothing in it is changed):

    DATABASE_URL=postgresql://USER@/bench_scale_300000?host=SOCKET_DIR \\
        python bench/write_hints.py --json bench/results/$(date +%F)/write-hints.json
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import print_table, summary_ms, write_json


def tenants_by_size() -> list[tuple[int, int]]:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT organization_id, count(*) FROM memories_memory GROUP BY 1 ORDER BY 2 DESC, 1")
        return [(int(org), int(count)) for org, count in cursor.fetchall()]


def tenants_near(tenants: list[tuple[int, int]], sizes: list[int]) -> list[tuple[int, int]]:
    """The tenant closest to each of ``sizes`` (each once), as (organization id, rows)."""
    picks: list[tuple[int, int]] = []
    for wanted in sizes:
        pick = min(tenants, key=lambda t: abs(t[1] - wanted))
        if pick not in picks:
            picks.append(pick)
    return picks


def run(args: argparse.Namespace) -> dict[str, Any]:
    from memories.hints import write_hints
    from memories.models import Memory

    tenants = tenants_by_size()
    largest = tenants[0][1]
    picks = tenants_near(tenants, [largest, largest // 3, largest // 10, 4000, 800, 40])
    result: dict[str, Any] = {"benchmark": "write_hints", "memories": sum(c for _, c in tenants), "tenants": {}}
    for organization_id, rows in picks:
        sample = list(
            Memory.objects.filter(
                organization_id=organization_id, deleted_at__isnull=True, embedding__isnull=False
            ).order_by("?")[: args.samples]
        )
        times = []
        for memory in sample:
            write_hints([memory])
            started = time.perf_counter()
            write_hints([memory])
            times.append(time.perf_counter() - started)
        result["tenants"][str(rows)] = summary_ms(times)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=100)
    parser.add_argument("--json", dest="json_out", default=None)
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_platform.settings")
    import django

    django.setup()
    result = run(args)
    print_table(f"write hint at {result['memories']} memories (ms)", ["tenant rows", "p50", "p95"],
                [[rows, row["p50"], row["p95"]] for rows, row in result["tenants"].items()])  # fmt: skip
    write_json(args.json_out, result)


if __name__ == "__main__":
    main()
