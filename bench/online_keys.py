"""The keys that name the organization, made online: a populated database (bench/scale.py's corpus,
kept with --keep) is taken back to primary keys on the id alone and unique keys without the
organization (the ``*_keys_name_the_organization`` migrations reversed), then migrated forward
again, each way while clients write and search (bench/online_layout.py's ``drive``). Counted for
each direction: writes acknowledged and lost, errors of either kind, search latency before, during
and after, and how long the migration took.

    python bench/scale.py --memories 1000000 --organizations 1000 --keep   # the database, once
    python bench/online_keys.py --memories 1000000 --organizations 1000 \\
        --json bench/results/$(date +%F)/online-keys.json
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import print_table, scratch_database, write_json

# The migration before each app's keys_name_the_organization: where the way back ends.
BEFORE = {
    "code_index": "0005",
    "instructions": "0002",
    "knowledge": "0006",
    "lifecycle": "0004",
    "memories": "0015",
    "organizations": "0002",
    "transfer": "0004",
}


def memories_key() -> str:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_get_constraintdef(oid) FROM pg_constraint "
            "WHERE conrelid = 'memories_memory'::regclass AND contype = 'p'"
        )
        return str(cursor.fetchone()[0])


def back() -> None:
    from django.core.management import call_command

    for app, migration in BEFORE.items():
        call_command("migrate", app, migration, verbosity=0)


def forward() -> None:
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def run(args: argparse.Namespace) -> dict[str, Any]:
    from bench.ingest import tenant_queries
    from bench.online_layout import _memories, drive
    from bench.scale import build_tenants, measured_tenants
    from bench.search_latency import agent_principal

    if _memories() == 0:
        raise SystemExit("no memories: load the database first with bench/scale.py --keep (same sizes)")
    forward()  # a database kept by an earlier commit gets the rest of today's migrations first
    tenants = build_tenants(args)
    measured = {t.slug for t in measured_tenants(tenants)}
    unmeasured = [t for t in tenants if t.slug not in measured]
    writers = [agent_principal(t.slug) for t in [*unmeasured[: args.writers - 1], unmeasured[-1]]]
    searchers = [(agent_principal(t.slug), tenant_queries(t, 50, args.seed)) for t in tenants[: args.searchers]]
    directions = {}
    for name, migrate in (("back", back), ("forward", forward)):
        started = time.perf_counter()
        outcome = drive(migrate, writers, searchers, settle=args.settle)
        directions[name] = {
            "primary_key_after": memories_key(),
            "migrate_seconds": round(outcome.migrate_window[1] - outcome.migrate_window[0], 1),
            "seconds": round(time.perf_counter() - started, 1),
            "writes_acknowledged": len(outcome.written),
            "writes_lost": outcome.lost(),
            "write_errors": outcome.write_errors[:20],
            "search_errors": outcome.search_errors[:20],
            "searches": len(outcome.searches),
            "search_ms": outcome.latency(),
        }
    return {
        "benchmark": "online_keys",
        "memories": _memories(),
        "organizations": args.organizations,
        "writers": args.writers,
        "searchers": args.searchers,
        "directions": directions,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memories", type=int, default=1_000_000)
    parser.add_argument("--organizations", type=int, default=1000)
    parser.add_argument("--largest-share", type=float, default=0.10)
    parser.add_argument("--smallest", type=int, default=10)
    parser.add_argument("--writers", type=int, default=2)
    parser.add_argument("--searchers", type=int, default=2)
    parser.add_argument("--settle", type=float, default=10.0, help="Seconds of clients before and after.")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", dest="json_out", default=None)
    args = parser.parse_args()
    with scratch_database(f"scale_{args.memories}", keep=True):
        result = run(args)
    rows = []
    for name, seen in result["directions"].items():
        during = seen["search_ms"].get("during", {})
        rows.append([
            name, seen["migrate_seconds"], seen["writes_acknowledged"], seen["writes_lost"],
            len(seen["write_errors"]), seen["searches"], len(seen["search_errors"]),
            during.get("p50", "-"), during.get("p95", "-"), seen["primary_key_after"],
        ])  # fmt: skip
    print_table(
        f"keys naming the organization, made online ({result['memories']} memories)",
        ["way", "migrate s", "writes", "lost", "write errors", "searches", "search errors", "p50 during",
         "p95 during", "memories' key after"],
        rows,
    )  # fmt: skip
    write_json(args.json_out, result)


if __name__ == "__main__":
    main()
