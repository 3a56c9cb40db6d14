"""Batch ingest without the model's time: memories/s through memory_batch_create, and the part of it
spent finding each new memory's write hints (memories.hints.write_hints).

The corpus and the vectors are bench/scale.py's (organizations whose sizes fall off like real
tenants'; the model's vectors for ``--real`` memories, their documented synthetic neighbours for the
rest), loaded as scale.py loads them: batches of 500 of every organization interleaved, the
embedding provider answering from the vectors computed beforehand, the worker's sweep giving large
organizations their own indexes every minute. So what is timed is the service's own work and the
database's, which the model's would hide (bench/ingest.py measures that).

    python bench/ingest_hints.py --memories 20000 --json bench/results/$(date +%F)/ingest-hints.json
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import scratch_database, summary_ms, write_json
from bench.scale import build_tenants, load, make_vectors


def run(args: argparse.Namespace) -> dict[str, Any]:
    tenants = build_tenants(args)
    with scratch_database(f"ingest_hints_{args.memories}"):
        from memories import batch

        vectors = make_vectors(tenants, args)

        timings: list[float] = []
        real = batch.write_hints

        def timed(memories: Any) -> Any:
            started = time.perf_counter()
            try:
                return real(memories)
            finally:
                timings.append(time.perf_counter() - started)

        batch.write_hints = timed  # type: ignore[assignment]
        try:
            loaded = load(tenants, vectors, args.seed)
        finally:
            batch.write_hints = real  # type: ignore[assignment]
    return {
        "benchmark": "ingest_hints",
        "memories": args.memories,
        "organizations": args.organizations,
        "largest_tenants": [t.rows for t in tenants[:5]],
        "load": loaded,
        "hints_seconds": round(sum(timings), 2),
        "hints_share": round(sum(timings) / loaded["load_seconds"], 3) if loaded["load_seconds"] else None,
        "hints_ms_per_batch": summary_ms(timings),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memories", type=int, default=20_000)
    parser.add_argument("--organizations", type=int, default=50)
    parser.add_argument("--largest-share", type=float, default=0.10)
    parser.add_argument("--smallest", type=int, default=10)
    parser.add_argument("--real", type=int, default=5_000, help="At least this many memories embedded by the model.")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", dest="json_out", default=None)
    args = parser.parse_args()
    result = run(args)
    print(
        f"{result['memories']} memories, {result['organizations']} organizations (largest {result['largest_tenants']}):"
        f" {result['load']['memories_per_s']} memories/s; write hints {result['hints_seconds']} s"
        f" ({result['hints_share']:.0%}), per batch {result['hints_ms_per_batch']} ms"
    )
    write_json(args.json_out, result)


if __name__ == "__main__":
    main()
