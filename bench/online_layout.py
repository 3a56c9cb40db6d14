"""The move to each organization's own search indexes, online: a populated database at the shared-index
layout (memories migration 0010: one HNSW and one full-text index over every organization) is migrated
(0011: each organization past SEARCH_EXACT_SCAN_LIMIT memories gets its own, built concurrently, then
the shared ones are dropped concurrently) while clients write and search. Counted: writes
acknowledged and lost, errors of either kind, search latency before, during and after.

The corpus is bench/scale.py's (--memories over --organizations, sizes falling off like real
tenants', --real of them embedded by the model and the rest synthetic neighbours of those), in the
same database: one scale.py kept (--keep) is used as it is, else it is loaded as scale.py loads it.
The database is first taken back to 0010 (the shared indexes built again, the organizations' own
dropped), then migrated forward under load.

    python bench/online_layout.py --memories 300000 --organizations 300 --keep \
        --json bench/results/$(date +%F)/online-layout.json
    python bench/online_layout.py --memories 20000 --organizations 40 --real 2000      # a quick look

tests/search/test_search_tenant_indexes.py drives the same migration, smaller, with this module's drive().
"""

from __future__ import annotations

import argparse
import itertools
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import print_table, scratch_database, summary_ms, write_json


@dataclass
class Drive:
    """What the clients saw while ``migrate`` ran."""

    written: list[Any] = field(default_factory=list)  # ids of acknowledged writes
    write_errors: list[str] = field(default_factory=list)
    search_errors: list[str] = field(default_factory=list)
    # (started, seconds) of each search, time.monotonic()
    searches: list[tuple[float, float]] = field(default_factory=list)
    migrate_window: tuple[float, float] = (0.0, 0.0)

    def lost(self) -> int:
        """Acknowledged writes that are not in the database."""
        from memories.models import Memory

        found = set(Memory.objects.filter(pk__in=self.written).values_list("pk", flat=True))
        return sum(1 for pk in self.written if pk not in found)

    def latency(self) -> dict[str, Any]:
        start, end = self.migrate_window
        phases = {
            "before": [s for t, s in self.searches if t < start],
            "during": [s for t, s in self.searches if start <= t < end],
            "after": [s for t, s in self.searches if t >= end],
        }
        return {phase: {"searches": len(times), **summary_ms(times)} for phase, times in phases.items() if times}


def drive(
    migrate: Callable[[], None],
    writers: Sequence[Any],
    searchers: Sequence[tuple[Any, Sequence[str]]],
    *,
    settle: float = 2.0,
) -> Drive:
    """Run ``migrate`` while one thread per principal of ``writers`` creates memories one at a time,
    and one per (principal, queries) of ``searchers`` runs hybrid searches; ``settle`` seconds of
    both before and after it."""
    from django.db import connection

    from memories.search import SearchParams, memory_search
    from memories.services import memory_create

    result = Drive()
    stop = threading.Event()
    counter = itertools.count(1)

    def write(principal: Any) -> None:
        try:
            while not stop.is_set():
                n = next(counter)
                text = f"Online write {n}: the {n % 7}th runbook step checks queue depth {n * 13 % 997}."
                try:
                    memory, _ = memory_create(
                        principal=principal,
                        data={"scope_type": "organization", "memory_type": "fact", "current_content": text},
                    )
                    result.written.append(memory.pk)
                except Exception as error:
                    result.write_errors.append(repr(error))
        finally:
            connection.close()

    def search(principal: Any, queries: Sequence[str]) -> None:
        try:
            for query in itertools.cycle(queries):
                if stop.is_set():
                    break
                started = time.monotonic()
                try:
                    memory_search(principal, SearchParams.build(query=query, mode="hybrid", limit=10))
                    result.searches.append((started, time.monotonic() - started))
                except Exception as error:
                    result.search_errors.append(repr(error))
        finally:
            connection.close()

    threads = [threading.Thread(target=write, args=(p,)) for p in writers]
    threads += [threading.Thread(target=search, args=pair) for pair in searchers]
    for thread in threads:
        thread.start()
    try:
        time.sleep(settle)
        start = time.monotonic()
        migrate()
        result.migrate_window = (start, time.monotonic())
        time.sleep(settle)
    finally:
        stop.set()
        for thread in threads:
            thread.join()
    return result


def to_shared_layout() -> None:
    """Migrate memories back to 0010: the shared search indexes, none of any organization's own."""
    from django.core.management import call_command
    from django.db import connection

    from memories.search import tenant_indexes
    from memory_platform.db.migration_ops import organization_columns

    with connection.cursor() as cursor:
        cursor.execute("SET maintenance_work_mem = '2GB'")  # the shared HNSW graph built in memory
    call_command("migrate", "memories", "0010", verbosity=0)
    with connection.cursor() as cursor:
        cursor.execute("RESET maintenance_work_mem")
        for index in tenant_indexes.existing():
            cursor.execute(f"DROP INDEX {index.name}")
    # Today's code writes each row's organization, a column later migrations add: added now (those
    # migrations, run forward, find it there), so that writes during the move are today's writes.
    with connection.schema_editor(atomic=False) as editor:
        organization_columns(editor)


def migrate_forward() -> None:
    from django.core.management import call_command

    call_command("migrate", verbosity=0)  # memories, and what depends on its later migrations


def shared_indexes() -> list[str]:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexname FROM pg_indexes WHERE indexname IN ('memory_embedding_hnsw', 'memory_search_vector_gin')"
        )
        return sorted(row[0] for row in cursor.fetchall())


def _memories() -> int:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM memories_memory")
        return int(cursor.fetchone()[0])


def run(args: argparse.Namespace) -> dict[str, Any]:
    import subprocess

    from django.db import connection

    from bench.ingest import tenant_queries
    from bench.scale import build_tenants, load, make_vectors, measured_tenants
    from bench.search_latency import agent_principal
    from memories.search import tenant_indexes

    tenants = build_tenants(args)
    loaded: dict[str, Any] = {"kept": True}
    if _memories() == 0:
        vectors = make_vectors(tenants, args)
        loaded = load(tenants, vectors, args.seed)
        del vectors
    started = time.perf_counter()
    to_shared_layout()
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE memories_memory")
    to_shared_seconds = round(time.perf_counter() - started)
    if args.at_shared_layout:
        # Whatever should see the database as it was before the move (bench/scale.py of an earlier
        # commit, say): the organizations' own indexes are gone and the shared ones are back.
        subprocess.run(args.at_shared_layout, shell=True, check=True)  # noqa: S602 - the operator's own command
    due = tenant_indexes.organizations_due()
    # Writes to large tenants (whose indexes are built) and to a small one, none of them one that
    # bench/scale.py measures (ranks 1, 10, 100, 500 and the last); searches of the largest.
    measured = {t.slug for t in measured_tenants(tenants)}
    unmeasured = [t for t in tenants if t.slug not in measured]
    busy = [*unmeasured[: args.writers - 1], unmeasured[-1]]
    writers = [agent_principal(t.slug) for t in busy]
    searchers = [(agent_principal(t.slug), tenant_queries(t, 50, args.seed)) for t in tenants[: args.searchers]]
    print(f"{_memories()} memories; {len(due)} organizations due their own indexes; migrating online")
    outcome = drive(migrate_forward, writers, searchers, settle=args.settle)
    return {
        "benchmark": "online_layout",
        "memories": _memories(),
        "organizations": args.organizations,
        "organizations_due": len(due),
        "load": loaded,
        "back_to_shared_layout_seconds": to_shared_seconds,
        "migrate_seconds": round(outcome.migrate_window[1] - outcome.migrate_window[0], 1),
        "writes_acknowledged": len(outcome.written),
        "writes_lost": outcome.lost(),
        "write_errors": outcome.write_errors[:20],
        "search_errors": outcome.search_errors[:20],
        "searches": len(outcome.searches),
        "search_ms": outcome.latency(),
        "organizations_due_after": len(tenant_indexes.organizations_due()),
        "shared_indexes_after": shared_indexes(),
        "writers": args.writers,
        "searchers": args.searchers,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memories", type=int, default=200_000)
    parser.add_argument("--organizations", type=int, default=200)
    parser.add_argument("--largest-share", type=float, default=0.10)
    parser.add_argument("--smallest", type=int, default=10)
    parser.add_argument("--real", type=int, default=10_000, help="At least this many memories embedded by the model.")
    parser.add_argument("--writers", type=int, default=2)
    parser.add_argument("--searchers", type=int, default=2)
    parser.add_argument("--settle", type=float, default=10.0, help="Seconds of clients before and after.")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--keep", action="store_true", help="Keep the database (bench_scale_<N>), as scale.py.")
    parser.add_argument(
        "--at-shared-layout", metavar="COMMAND", help="A shell command to run once the database is back at 0010."
    )
    parser.add_argument("--json", dest="json_out", default=None)
    args = parser.parse_args()
    # bench/scale.py's database of the same size when it kept one (--keep): the same corpus.
    with scratch_database(f"scale_{args.memories}", keep=args.keep):
        result = run(args)
    print_table(
        "Online move to each organization's own indexes",
        ["memories", "due", "migrate s", "writes", "lost", "write errors", "search errors"],
        [[result["memories"], result["organizations_due"], result["migrate_seconds"], result["writes_acknowledged"],
          result["writes_lost"], len(result["write_errors"]), len(result["search_errors"])]],
    )  # fmt: skip
    phases = result["search_ms"].items()
    print_table("Hybrid search through the move (ms)", ["phase", "searches", "p50", "p95"],
                [[phase, row["searches"], row["p50"], row["p95"]] for phase, row in phases])  # fmt: skip
    write_json(args.json_out, result)


if __name__ == "__main__":
    main()
