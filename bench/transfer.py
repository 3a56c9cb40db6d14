"""Export and import of an organization (transfer/): how long, how large, how many rows a second.

An organization of --memories memories is made through the batch service (real embeddings), every
tenth edited once (a second version) and linked to the next; it is then exported to JSON Lines
without and with the vectors, and each file imported into a new organization (new ids), as
`manage.py export_organization` and `import_organization --create --new-ids` do. Every size, time and
rate is reported; the import without vectors leaves the memories pending for the worker, whose
embedding time is not part of it.

    python bench/transfer.py --memories 10000 --json bench/results/$(date +%F)/transfer.json
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import print_table, scratch_database, write_json

TOPICS = ("deploys", "refunds", "on-call rotations", "database migrations", "API versioning", "code review")


def _populate(memories: int) -> Any:
    from django.conf import settings

    from knowledge.links import link_create
    from memories.batch import memory_batch_create
    from memories.services import memory_update
    from organizations.models import Organization
    from organizations.principal import Principal

    organization = Organization.objects.create(slug="source", name="Source")
    principal = Principal.for_operator(organization)
    made: list[str] = []
    size = settings.MEMORY_BATCH_MAX_ENTRIES
    for start in range(0, memories, size):
        entries = [
            {"scope_type": "organization", "memory_type": "business_rule", "tags": ["bench", TOPICS[n % len(TOPICS)]],
             "current_content": f"Rule {n}: {TOPICS[n % len(TOPICS)]} need {n % 5 + 1} approvals from the owning team."}
            for n in range(start, min(start + size, memories))
        ]  # fmt: skip
        made += [str(result.memory.pk) for result in memory_batch_create(principal=principal, entries=entries)]
    for index in range(0, len(made) - 1, 10):
        memory_update(principal=principal, memory_id=made[index], data={"importance": 9}, reason="bench edit")
        link_create(principal=principal, source_id=made[index], target_id=made[index + 1])
    return organization


def _export(organization: Any, path: Path, *, embeddings: bool) -> dict[str, Any]:
    from transfer.export import export_organization

    started = time.perf_counter()
    with path.open("w") as out:
        counts = export_organization(organization, out, embeddings=embeddings)
    seconds = time.perf_counter() - started
    rows = sum(counts.values())
    return {"seconds": round(seconds, 2), "bytes": path.stat().st_size, "rows": rows,
            "rows_per_second": round(rows / seconds), "counts": counts}  # fmt: skip


def _import(path: Path, slug: str) -> dict[str, Any]:
    from transfer.importer import import_organization

    started = time.perf_counter()
    with path.open("rb") as source:
        result = import_organization(source, slug=slug, create=True, new_ids=True)
    seconds = time.perf_counter() - started
    rows = sum(result.counts.values())
    return {"seconds": round(seconds, 2), "rows": rows, "rows_per_second": round(rows / seconds),
            "pending_embeddings": result.pending_embeddings}  # fmt: skip


def run(args: argparse.Namespace) -> dict[str, Any]:
    started = time.perf_counter()
    organization = _populate(args.memories)
    populate_seconds = round(time.perf_counter() - started, 1)
    results: dict[str, Any] = {"memories": args.memories, "populate_seconds": populate_seconds}
    with tempfile.TemporaryDirectory() as directory:
        for embeddings in (False, True):
            name = "with vectors" if embeddings else "without vectors"
            path = Path(directory) / f"export-{embeddings}.jsonl"
            results[f"export {name}"] = _export(organization, path, embeddings=embeddings)
            results[f"import {name}"] = _import(path, f"copy-{'vectors' if embeddings else 'plain'}")
    rows = [
        [name, value["seconds"], value.get("bytes", ""), value["rows"], value["rows_per_second"]]
        for name, value in results.items()
        if isinstance(value, dict)
    ]
    print_table(f"{args.memories} memories (populated in {populate_seconds} s)",
                ["step", "seconds", "bytes", "rows", "rows/s"], rows)  # fmt: skip
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--json", help="write the results here (bench/results/<date>/transfer.json)")
    args = parser.parse_args()
    with scratch_database("transfer"):
        results = run(args)
    write_json(args.json, results)


if __name__ == "__main__":
    main()
