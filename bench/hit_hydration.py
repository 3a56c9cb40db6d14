"""How a search page's memories are loaded: memories.search.hits (one statement, rows built with
Model.from_db) against the ORM's own select_related + only() over the same columns.

A page of --page memories of one organization (with their organization, repository and owner) is
loaded, then turned into its public payload (memories.public.memory_values), --rounds times each
way, the two ways alternating round by round; wall and CPU time per page are reported, and the
statements each way runs for a page with its payload (both must be one).

    python bench/hit_hydration.py --json bench/results/$(date +%F)/hit_hydration.json
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import print_table, scratch_database, summary_ms, write_json

WARM_ROUNDS = 200


def _setup(page: int) -> list[Any]:
    from memories.models import Memory
    from memories.services import memory_create
    from organizations.models import Organization, Repository
    from organizations.principal import Principal

    organization = Organization.objects.create(slug="hydration", name="Hydration")
    Repository.objects.create(organization=organization, slug="payments-api", name="payments-api")
    principal = Principal.for_operator(organization)
    for n in range(page):
        fields = {"scope_type": "organization", "memory_type": "fact", "tags": ["bench"],
                  "current_content": f"Bench fact {n}: deploys of the billing service need two approvals."}  # fmt: skip
        if n % 2:
            fields.update(scope_type="repository", repository="payments-api")
        memory_create(principal=principal, data=fields)
    return list(Memory.objects.filter(organization=organization).values_list("pk", flat=True))


def _loaders(pks: list[Any]) -> dict[str, Callable[[], dict[Any, Any]]]:
    from memories.models import Memory
    from memories.search.hits import HIT_DEFERRED_FIELDS, hit_memories

    fields = [field.name for field in Memory._meta.concrete_fields if field.name not in HIT_DEFERRED_FIELDS]

    def orm() -> dict[Any, Any]:
        related = ("organization", "repository", "owner")
        columns = (*fields, "organization__slug", "repository__slug", "owner__username")
        return {
            memory.pk: memory for memory in Memory.objects.filter(pk__in=pks).select_related(*related).only(*columns)
        }

    return {"hits.py": lambda: hit_memories(pks), "orm select_related+only": orm}


def run(args: argparse.Namespace) -> dict[str, Any]:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from memories.public import memory_values

    pks = _setup(args.page)
    loaders = _loaders(pks)

    def one(load: Callable[[], dict[Any, Any]]) -> tuple[float, float]:
        wall, cpu = time.perf_counter(), time.process_time()
        for memory in load().values():
            memory_values(memory)
        return time.perf_counter() - wall, time.process_time() - cpu

    for _ in range(WARM_ROUNDS):
        for load in loaders.values():
            one(load)
    timings: dict[str, dict[str, list[float]]] = {name: {"wall": [], "cpu": []} for name in loaders}
    names = list(loaders)
    for round_number in range(args.rounds):
        for name in names if round_number % 2 else reversed(names):
            wall, cpu = one(loaders[name])
            timings[name]["wall"].append(wall)
            timings[name]["cpu"].append(cpu)
    result: dict[str, Any] = {"page": args.page, "rounds": args.rounds, "ways": {}}
    for name, load in loaders.items():
        with CaptureQueriesContext(connection) as captured:
            for memory in load().values():
                memory_values(memory)
        result["ways"][name] = {
            "wall_ms": summary_ms(timings[name]["wall"]),
            "cpu_ms": summary_ms(timings[name]["cpu"]),
            "statements": len(captured.captured_queries),
        }
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--page", type=int, default=10, help="Memories on the page.")
    parser.add_argument("--rounds", type=int, default=2000, help="Pages loaded each way.")
    parser.add_argument("--json", help="Write the result here.")
    args = parser.parse_args()
    with scratch_database("hit_hydration"):
        result = run(args)
    rows = [
        [
            name,
            way["wall_ms"]["p50"],
            way["wall_ms"]["p95"],
            way["cpu_ms"]["p50"],
            way["cpu_ms"]["mean"],
            way["statements"],
        ]
        for name, way in result["ways"].items()
    ]
    header = ["way", "wall p50 ms", "wall p95 ms", "cpu p50 ms", "cpu mean ms", "statements"]
    print_table(f"A page of {args.page} memories with its payload", header, rows)
    write_json(args.json, result)


if __name__ == "__main__":
    main()
