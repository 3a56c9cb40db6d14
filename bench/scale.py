"""Scale: a million memories over a thousand organizations, searched through MCP HTTP.

Tenants: ``--organizations`` organizations whose sizes fall off like real tenants' (a Zipf-Mandelbrot
curve: the largest holds ``--largest-share`` of the memories, the smallest ``--smallest`` rows; with the
defaults the largest holds 100,000, the 10th 26,000, the 100th 800, the 500th 38 and the last 10).
Their memories are bench/ingest.py's synthetic corpus, each organization with its own names.

Embeddings:
  - real: the local model embeds every memory of the measured tenants (ranks 1, 10, 100, 500 and
    the last), then further tenants in rank order until at least ``--real`` memories are embedded;
  - synthetic, for the rest: v = normalize(a1 + a2 + lam * (b - c)), where a1 and a2 are the real
    vectors of two memories written from the same template (the same kind of statement), and b, c
    two random real vectors. b - c moves v along the directions real embeddings actually vary in
    (its covariance is twice the real vectors'), not into dimensions the model never uses; two
    anchors keep synthetic memories from sharing one. lam is set so that the nearest-neighbour
    similarities inside a synthetic tenant have the median of a real tenant's at the same size
    (the report gives both distributions, so the reader can judge how close they are).

Loading: every memory goes in through memory_batch_create (versions and audit events included; the
provider answers from the vectors above), batches of all tenants interleaved; every minute the worker's sweep
gives each organization past SEARCH_EXACT_SCAN_LIMIT memories its own HNSW and full-text indexes
(memories.search.tenant_indexes), and VACUUM ANALYZE. (Until commit 7b00c70 one HNSW index over
every organization was dropped for the load and built once afterwards.)

Measured: database, table and index sizes; RAM (shared_buffers, the PSS of PostgreSQL's processes and
the RSS of the web processes after the searches); ``--queries`` sequential ``memory-search`` calls
(hybrid, limit 10) per measured tenant through MCP Streamable HTTP against ``manage.py serve`` with
the official MCP client, with the server's mean time in each search stage (from its /metrics);
recall@10 of the production vector retriever against an exact scan for the
largest and the smallest tenant (and the others measured).

    python bench/scale.py --json bench/results/$(date +%F)/scale.json   # 1M memories: about an hour on 2 cores
    python bench/scale.py --memories 20000 --organizations 50 --real 5000   # a quick look

``--keep`` keeps the database (bench_scale_<N>) and skips the load when it already holds the corpus.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import random
import re
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import REPO, database_url, free_port, print_table, scratch_database, summary_ms, write_json
from bench.ingest import Tenant, _memory, _Vocab, chunks, embedded_texts, tenant_queries

MEASURED_RANKS = (1, 10, 100, 500)  # and the last
SWEEP_SECONDS = 60.0  # how often the load builds the organizations' own indexes, as beat would
CORPUS_VERSION = 2  # 2: each organization's own indexes (a kept database of version 1 is loaded again)


# --- tenants -------------------------------------------------------------------------------------


def tenant_sizes(total: int, organizations: int, largest_share: float, smallest: int) -> list[int]:
    """Zipf-Mandelbrot sizes L * ((1 + q) / (k + q)) ** s, k = 1..organizations: the largest is
    ``largest_share`` of ``total``, the last ``smallest``, and s is chosen so they sum to ``total``."""
    largest = total * largest_share
    best: tuple[float, list[float]] | None = None
    for s in (x / 100 for x in range(30, 600)):
        ratio = (smallest / largest) ** (1 / s)
        q = (organizations * ratio - 1) / (1 - ratio)
        if q < 0:
            continue
        sizes = [largest * ((1 + q) / (k + q)) ** s for k in range(1, organizations + 1)]
        if best is None or abs(sum(sizes) - total) < abs(sum(best[1]) - total):
            best = (s, sizes)
    if best is None:
        raise SystemExit("no tenant size curve fits these arguments")
    rounded = [max(smallest, round(size)) for size in best[1]]
    rounded[0] += total - sum(rounded)
    if rounded[0] < rounded[1]:
        raise SystemExit("--largest-share is too small for this many memories and organizations")
    return rounded


def build_tenants(args: argparse.Namespace) -> list[Tenant]:
    sizes = tenant_sizes(args.memories, args.organizations, args.largest_share, args.smallest)
    seen: set[str] = set()
    tenants = []
    started = time.perf_counter()
    for rank, rows in enumerate(sizes, start=1):
        tenant = Tenant(f"scale-{rank:04d}", f"rank {rank}", rows)
        rng = random.Random(f"{args.seed}:{tenant.slug}")
        vocab = _Vocab(rng, rows)
        subjects: set[tuple[Any, ...]] = set()
        tenant.memories = [_memory(rng, vocab, seen, subjects) for _ in range(rows)]
        tenants.append(tenant)
    print(f"corpus: {args.memories} memories in {len(tenants)} organizations, {time.perf_counter() - started:.0f} s")
    return tenants


def measured_tenants(tenants: list[Tenant]) -> list[Tenant]:
    ranks = [rank for rank in MEASURED_RANKS if rank < len(tenants)] + [len(tenants)]
    return [tenants[rank - 1] for rank in ranks]


# --- vectors -------------------------------------------------------------------------------------


@dataclass
class Vectors:
    """Every memory's vector, by the text memory_batch_create embeds; which ones the model made."""

    by_text: dict[str, int]
    matrix: Any  # numpy float32, one unit row per memory
    real: int
    lam: float
    realism: dict[str, Any]


def embed_all(texts: list[str], batch: int = 256) -> Any:
    import numpy as np
    from tqdm import tqdm

    from memories.embeddings import get_provider

    provider = get_provider()
    out = np.empty((len(texts), provider.dimensions), dtype=np.float32)
    started = time.perf_counter()
    for start in tqdm(range(0, len(texts), batch), desc="embed (real)", unit="batch", file=sys.stderr):
        out[start : start + batch] = provider.embed(texts[start : start + batch])
    print(f"embedded {len(texts)} texts with the model: {len(texts) / (time.perf_counter() - started):.0f} per s")
    return out


def _nearest_similarity(matrix: Any, rng: Any, sample: int = 500) -> Any:
    """For a sample of ``matrix``'s rows, each one's highest cosine to another row of ``matrix``."""
    import numpy as np

    rows = rng.choice(len(matrix), size=min(sample, len(matrix)), replace=False)
    sims = matrix[rows] @ matrix.T
    sims[np.arange(len(rows)), rows] = -1.0  # itself
    return np.max(sims, axis=1)


def _percentiles(values: Any) -> dict[str, float]:
    import numpy as np

    return {f"p{q}": round(float(np.percentile(values, q)), 3) for q in (10, 50, 90)}


def make_vectors(tenants: list[Tenant], args: argparse.Namespace) -> Vectors:
    """The model's vectors for the real tenants; v = normalize(a + lam * (b - c)) for the others, lam
    chosen so that a synthetic tenant's nearest-neighbour similarities match a real one's of its size."""
    import numpy as np

    measured = {t.slug for t in measured_tenants(tenants)}
    real_tenants: list[Tenant] = []
    for tenant in sorted(tenants, key=lambda t: t.slug not in measured):  # measured first, then by rank
        if tenant.slug in measured or sum(t.rows for t in real_tenants) < args.real:
            real_tenants.append(tenant)
    real_slugs = {t.slug for t in real_tenants}
    synthetic_tenants = [t for t in tenants if t.slug not in real_slugs]
    real_memories = [m for t in real_tenants for m in t.memories]
    synthetic_memories = [m for t in synthetic_tenants for m in t.memories]
    real = embed_all(embedded_texts(real_memories))
    rng = np.random.default_rng(args.seed)

    by_template: dict[int, list[int]] = {}
    for index, memory in enumerate(real_memories):
        by_template.setdefault(memory.template, []).append(index)

    pools = {template: np.array(indices) for template, indices in by_template.items()}

    def anchor(memory: Any) -> int:
        pool = pools.get(memory.template)
        return int(pool[rng.integers(len(pool))]) if pool is not None else int(rng.integers(len(real)))

    # Two anchors of the memory's template, so that synthetic memories rarely share one.
    first = np.array([anchor(m) for m in synthetic_memories], dtype=np.int64)
    second = np.array([anchor(m) for m in synthetic_memories], dtype=np.int64)
    b = rng.integers(len(real), size=len(synthetic_memories))
    c = rng.integers(len(real), size=len(synthetic_memories))

    def mixed(lam: float, which: Any) -> Any:
        v = real[first[which]] + real[second[which]] + lam * (real[b[which]] - real[c[which]])
        return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)

    lam, realism = 0.5, {}
    if synthetic_tenants:
        # Calibration: the largest real tenant of at most 50,000 rows, and its synthetic twin in size.
        offsets, start = {}, 0
        for tenant in synthetic_tenants:
            offsets[tenant.slug] = (start, start + tenant.rows)
            start += tenant.rows
        real_offsets, start = {}, 0
        for tenant in real_tenants:
            real_offsets[tenant.slug] = (start, start + tenant.rows)
            start += tenant.rows
        reference = max((t for t in real_tenants if t.rows <= 50_000), key=lambda t: t.rows, default=real_tenants[0])
        twin = min(synthetic_tenants, key=lambda t: abs(t.rows - reference.rows))
        # Compared at the same size: nearest neighbours are closer in a larger tenant.
        size = min(reference.rows, twin.rows)
        low_r, high_r = real_offsets[reference.slug]
        reference_rows = np.random.default_rng(args.seed).choice(np.arange(low_r, high_r), size=size, replace=False)
        target = _nearest_similarity(real[reference_rows], np.random.default_rng(args.seed))
        twin_rows = np.arange(*offsets[twin.slug])[:size]
        low, high = 0.0, 4.0
        for _ in range(25):  # nearest-neighbour similarity falls as lam grows
            lam = (low + high) / 2
            got = _nearest_similarity(mixed(lam, twin_rows), np.random.default_rng(args.seed))
            low, high = (lam, high) if np.median(got) > np.median(target) else (low, lam)
        lam = (low + high) / 2
        realism = {
            "rows_compared": size,
            "real": {"tenant": reference.slug, "nearest_similarity": _percentiles(target)},
            "synthetic": {"tenant": twin.slug, "nearest_similarity": _percentiles(
                _nearest_similarity(mixed(lam, twin_rows), np.random.default_rng(args.seed + 1)))},
        }  # fmt: skip
    synthetic = np.empty((len(synthetic_memories), real.shape[1]), dtype=np.float32)
    for start in range(0, len(synthetic_memories), 50_000):
        synthetic[start : start + 50_000] = mixed(lam, np.arange(start, min(start + 50_000, len(synthetic_memories))))
    matrix = np.concatenate([real, synthetic])
    texts = embedded_texts(real_memories) + embedded_texts(synthetic_memories)
    print(f"vectors: {len(real)} real, {len(synthetic)} synthetic (lam {lam:.3f}); {realism}")
    return Vectors({text: i for i, text in enumerate(texts)}, matrix, len(real), lam, realism)


# --- load ----------------------------------------------------------------------------------------


def _lookup_provider(lookup: Callable[[list[str]], list[list[float]]]) -> Any:
    from memories.embeddings import EmbeddingProvider, get_provider

    model = get_provider()

    class Precomputed(EmbeddingProvider):
        """Vectors computed beforehand (the model's, or their documented synthetic neighbours)."""

        name = model.name
        dimensions = model.dimensions

        def embed(self, texts: Any) -> list[list[float]]:
            return lookup(list(texts))

    return Precomputed()


def load(tenants: list[Tenant], vectors: Vectors, seed: int, *, own_indexes: bool = True) -> dict[str, Any]:
    from django.db import connection
    from tqdm import tqdm

    from bench.ingest import create_organizations
    from memories.batch import memory_batch_create
    from memories.embeddings import get_provider, reset_provider
    from memories.search import tenant_indexes

    model = get_provider()
    principals = create_organizations(tenants)
    batches = [(t.slug, list(batch)) for t in tenants for batch in chunks(t.memories, 500)]
    random.Random(f"{seed}:order").shuffle(batches)
    reset_provider(_lookup_provider(lambda texts: vectors.matrix[[vectors.by_text[t] for t in texts]].tolist()))
    with connection.cursor() as cursor:
        cursor.execute("SET max_parallel_maintenance_workers = %s", [max((os.cpu_count() or 2) - 1, 0)])
    # The worker's sweep (memories.search.tenant_indexes), every SWEEP_SECONDS of the load as beat
    # runs it every minute: each organization past SEARCH_EXACT_SCAN_LIMIT memories gets its own HNSW
    # and full-text indexes. Here it runs between batches, and its time is counted apart.
    own: dict[int, list[str]] = {}
    indexing = 0.0

    def sweep() -> None:
        nonlocal indexing
        if own_indexes:
            began = time.perf_counter()
            own.update(tenant_indexes.sweep())
            indexing += time.perf_counter() - began

    started = last_sweep = time.perf_counter()
    try:
        with tqdm(total=sum(t.rows for t in tenants), desc="load", unit="mem", file=sys.stderr) as bar:
            for slug, batch in batches:
                results = memory_batch_create(principal=principals[slug], entries=[m.entry() for m in batch])
                failed = [r for r in results if not r.ok]
                if failed:
                    raise RuntimeError(f"batch refused entry {failed[0].index}: {failed[0].error}")
                bar.update(len(batch))
                if time.perf_counter() - last_sweep > SWEEP_SECONDS:
                    sweep()
                    last_sweep = time.perf_counter()
    finally:
        reset_provider(model)
    sweep()
    loaded = time.perf_counter() - started - indexing
    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")
    return {
        "load_seconds": round(loaded),
        "memories_per_s": round(sum(t.rows for t in tenants) / loaded),
        "own_index_organizations": len(own),
        "own_index_build_seconds": round(indexing),
        "vacuum_analyze_seconds": round(time.perf_counter() - started),
    }


def append(tenants: list[Tenant], count: int, seed: int) -> dict[str, Any]:
    """``count`` more memories into the loaded database through memory_batch_create, in batches of
    500, each to a tenant drawn by its size (as new memories arrive), timed: what writing costs at
    this size, every organization's own indexes in place. Each new memory is a fresh one of its
    tenant's kind, its vector near the tenant's own (a memory's plus 0.3 x the difference of two
    others, read from the database)."""
    import numpy as np
    from django.db import connection

    from memories.batch import memory_batch_create
    from memories.embeddings import get_provider, reset_provider
    from organizations.models import Organization
    from organizations.principal import Principal

    # Fresh memories each run: the seed takes in how many the database holds already.
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM memories_memory")
        seed_text = f"{seed}:append:{cursor.fetchone()[0]}"
    rng = random.Random(seed_text)
    weights = [t.rows for t in tenants]
    drawn: dict[str, int] = {}
    for tenant in rng.choices(tenants, weights=weights, k=max(1, count // 500)):
        drawn[tenant.slug] = drawn.get(tenant.slug, 0) + 1
    by_slug = {t.slug: t for t in tenants}
    seen: set[str] = set()
    batches: list[tuple[str, list[Any]]] = []
    texts: dict[str, Any] = {}
    for slug, n in drawn.items():
        tenant = by_slug[slug]
        trng = random.Random(f"{seed_text}:{slug}")
        vocab, subjects = _Vocab(trng, tenant.rows), set()
        fresh = [_memory(trng, vocab, seen, subjects) for _ in range(500 * n)]
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT vector_send(embedding) FROM memories_memory m JOIN organizations_organization o "
                "ON o.id = m.organization_id WHERE o.slug = %s AND embedding IS NOT NULL "
                "ORDER BY md5(m.id::text || %s) LIMIT 2000",
                [slug, seed_text],
            )
            own = np.frombuffer(b"".join(bytes(r[0])[4:] for r in cursor.fetchall()), dtype=">f4").reshape(-1, 384)
        picks = np.random.default_rng(rng.randrange(2**32)).integers(0, len(own), size=(len(fresh), 3))
        mixed = own[picks[:, 0]] + 0.3 * (own[picks[:, 1]] - own[picks[:, 2]])
        mixed /= np.linalg.norm(mixed, axis=1, keepdims=True)
        texts.update(zip(embedded_texts(fresh), mixed.astype(np.float32), strict=True))
        batches += [(slug, list(batch)) for batch in chunks(fresh, 500)]
    rng.shuffle(batches)
    model = get_provider()
    principals = {slug: Principal.for_operator(Organization.objects.get(slug=slug), "bench") for slug in drawn}
    reset_provider(_lookup_provider(lambda wanted: [texts[text].tolist() for text in wanted]))
    seconds: list[float] = []
    try:
        for slug, batch in batches:
            started = time.perf_counter()
            results = memory_batch_create(principal=principals[slug], entries=[m.entry() for m in batch])
            seconds.append(time.perf_counter() - started)
            if not all(r.ok for r in results):
                raise RuntimeError(f"append refused: {next(r.error for r in results if not r.ok)}")
    finally:
        reset_provider(model)
    written = sum(len(b) for _, b in batches)
    return {"memories": written, "batches": len(batches), "memories_per_s": round(written / sum(seconds)),
            "batch_ms": summary_ms(seconds)}  # fmt: skip


# --- measurements --------------------------------------------------------------------------------


def sizes() -> dict[str, Any]:
    from django.db import connection

    def mb(value: int) -> float:
        return round(value / 2**20, 1)

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_database_size(current_database())")
        database = cursor.fetchone()[0]
        cursor.execute(
            "SELECT c.relname, pg_total_relation_size(c.oid), pg_relation_size(c.oid) FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind = 'r' AND n.nspname = 'public' "
            "ORDER BY 2 DESC LIMIT 6"
        )
        tables = {name: {"total_mb": mb(total), "heap_mb": mb(heap)} for name, total, heap in cursor.fetchall()}
        cursor.execute(
            "SELECT i.relname, pg_relation_size(i.oid) FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid "
            "JOIN pg_class t ON t.oid = x.indrelid WHERE t.relname = 'memories_memory' ORDER BY 2 DESC"
        )
        indexes: dict[str, float] = {}
        for name, size in cursor.fetchall():
            # Organizations' own indexes (memories.search.tenant_indexes) as one line per kind.
            own = re.fullmatch(r"memory_(hnsw|hvec|text)_o\d+", name)
            key = f"memory_{own.group(1)}_o* (organizations' own)" if own else name
            indexes[key] = round(indexes.get(key, 0.0) + mb(size), 1)
        cursor.execute("SHOW shared_buffers")
        shared_buffers = cursor.fetchone()[0]
    return {
        "database_mb": mb(database),
        "tables": tables,
        "memory_indexes_mb": indexes,
        "shared_buffers": shared_buffers,
    }


def _memory_kb(pid: int, field: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/{'smaps_rollup' if field == 'Pss' else 'status'}").read_text().splitlines():
            if line.startswith(f"{field}:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def ram(server_pid: int) -> dict[str, Any]:
    """PSS of every PostgreSQL process (shared buffers counted once) and RSS of the server's tree."""
    postgres = 0
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "comm").read_bytes().strip().startswith(b"postgres"):
                    postgres += _memory_kb(int(entry.name), "Pss")
            except OSError:
                continue
    web, pending = [], [server_pid]
    while pending:
        pid = pending.pop()
        web.append(_memory_kb(pid, "VmRSS"))
        try:
            pending += [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
        except OSError:
            continue
    return {"postgres_pss_mb": round(postgres / 1024), "server_rss_mb": [round(kb / 1024) for kb in web if kb]}


def _stage_seconds(base: str, token: str) -> dict[str, float]:
    """The server's time in each search stage so far, summed over its processes (its /metrics)."""
    import httpx
    from prometheus_client.parser import text_string_to_metric_families

    scraped = httpx.get(f"{base}/metrics", headers={"Authorization": f"Bearer {token}"}, timeout=30)
    scraped.raise_for_status()
    return {
        sample.labels["stage"]: sample.value
        for family in text_string_to_metric_families(scraped.text)
        if family.name == "memory_platform_search_stage_seconds"
        for sample in family.samples
        if sample.name.endswith("_sum")
    }


def mcp_latency(tenants: list[Tenant], args: argparse.Namespace) -> tuple[dict[str, Any], dict[str, Any]]:
    import secrets
    import subprocess

    from bench.interface_search import _time_mcp
    from bench.load import _wait_ready
    from organizations.models import Organization
    from organizations.principal import Principal
    from organizations.tokens import token_create

    tokens = {}
    for tenant in tenants:
        operator = Principal.for_operator(Organization.objects.get(slug=tenant.slug), "bench")
        tokens[tenant.slug] = token_create(principal=operator, role="agent", name="scale").raw
    port = free_port()
    log = Path(args.log_dir) / "scale-server.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    metrics_token = secrets.token_urlsafe(16)
    env = {**os.environ, "DATABASE_URL": database_url(), "API_THROTTLE_RATE": "", "RUN_WORKER": "0",
           "METRICS_TOKEN": metrics_token}  # fmt: skip
    command = [sys.executable, "manage.py", "serve", "--no-demo", "--port", str(port)]
    with log.open("wb") as out:
        server = subprocess.Popen(command, cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_ready(base, server, log)
        for tenant in tenants:  # warm: the model, pools, caches, each tenant's scope size
            asyncio.run(_time_mcp(f"{base}/mcp", tokens[tenant.slug], tenant_queries(tenant, 5, args.seed + 1)))
        latency = {}
        for tenant in tenants:
            before = _stage_seconds(base, metrics_token)
            times = asyncio.run(_time_mcp(f"{base}/mcp", tokens[tenant.slug], tenant_queries(tenant, args.queries)))
            after = _stage_seconds(base, metrics_token)
            ms = summary_ms(times)
            latency[tenant.slug] = {
                "rows": tenant.rows,
                **ms,
                "p99": round(sorted(times)[int(len(times) * 0.99)] * 1000, 2),
                # Where a search's time went in the server, on average (ms): the stages of
                # memories.search.pipeline; the rest of a call is MCP, HTTP and the client.
                "stage_mean_ms": {
                    stage: round((after[stage] - before.get(stage, 0.0)) * 1000 / len(times), 2) for stage in after
                },
            }
        return latency, ram(server.pid)
    finally:
        server.terminate()
        server.wait(timeout=60)


def recalls(tenants: list[Tenant], args: argparse.Namespace) -> dict[str, Any]:
    from bench.search_latency import agent_principal, recall, search_scope, vector_path
    from memories.embeddings import get_provider

    provider = get_provider()
    result = {}
    for tenant in tenants:
        principal = agent_principal(tenant.slug)
        vectors = [provider.embed_one(q) for q in tenant_queries(tenant, args.recall_queries, args.seed + 2)]
        path, rows = vector_path(search_scope(principal))
        result[tenant.slug] = {"rows": rows, "path": path, **recall(principal, vectors)}
    return result


def _loaded() -> Any:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT to_regclass('bench_scale_meta')")
        if cursor.fetchone()[0] is None:
            return None
        cursor.execute("SELECT value FROM bench_scale_meta WHERE key = 'load'")
        row = cursor.fetchone()
    if not row:
        return None
    return json.loads(row[0]) if isinstance(row[0], str) else row[0]  # Django reads jsonb as text


def _remember(value: dict[str, Any]) -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("CREATE TABLE IF NOT EXISTS bench_scale_meta (key text PRIMARY KEY, value jsonb)")
        cursor.execute(
            "INSERT INTO bench_scale_meta VALUES ('load', %s) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            [json.dumps(value)],
        )


def run(args: argparse.Namespace) -> dict[str, Any]:
    tenants = build_tenants(args)
    measured = measured_tenants(tenants)
    signature = {"version": CORPUS_VERSION, "memories": args.memories, "organizations": args.organizations,
                 "real": args.real, "seed": args.seed}  # fmt: skip
    kept = _loaded()
    if kept and kept.get("signature") == signature:
        print("the kept database holds this corpus: not loaded again")
        loaded, vector_info = kept["load"], kept["vectors"]
    else:
        vectors = make_vectors(tenants, args)
        vector_info = {"real": vectors.real, "synthetic": len(vectors.matrix) - vectors.real,
                       "lam": round(vectors.lam, 4), "realism": vectors.realism}  # fmt: skip
        loaded = load(tenants, vectors, args.seed)
        del vectors
        _remember({"signature": signature, "load": loaded, "vectors": vector_info})
    space = sizes()
    latency, memory = mcp_latency(measured, args)
    recall = recalls([measured[0], measured[-1]] if args.recall_all is False else measured, args)
    appended = append(tenants, args.append, args.seed) if args.append else None
    return {
        "benchmark": "scale",
        "memories": args.memories,
        "organizations": args.organizations,
        "largest_tenants": [t.rows for t in tenants[:5]],
        "tenants_under_100_rows": sum(1 for t in tenants if t.rows < 100),
        "vectors": vector_info,
        "load": loaded,
        "sizes": space,
        "ram": memory,
        "mcp_search_ms": latency,
        "recall_at_10": recall,
        **({"append": appended} if appended else {}),
        "cpus": os.cpu_count(),
    }


def report(result: dict[str, Any]) -> None:
    print(
        f"\n{result['memories']} memories, {result['organizations']} organizations; largest {result['largest_tenants']}"
    )
    print(f"vectors: {result['vectors']}")
    print(f"load: {result['load']}")
    sizes_ = result["sizes"]
    print(f"database {sizes_['database_mb']} MB, shared_buffers {sizes_['shared_buffers']}")
    print_table("Tables (MB)", ["table", "total", "heap"],
                [[name, row["total_mb"], row["heap_mb"]] for name, row in sizes_["tables"].items()])  # fmt: skip
    print_table(
        "memories_memory indexes (MB)", ["index", "MB"], [[k, v] for k, v in sizes_["memory_indexes_mb"].items()]
    )
    print(f"RAM: {result['ram']}")
    print_table("memory-search through MCP HTTP (ms)", ["tenant", "rows", "p50", "p95", "p99"],
                [[slug, row["rows"], row["p50"], row["p95"], row["p99"]]
                 for slug, row in result["mcp_search_ms"].items()])  # fmt: skip
    stages = ("embed", "keyword", "vector", "beside", "rank", "hydrate")
    print_table("where a search's time went in the server (mean ms)", ["tenant", *stages],
                [[slug, *(row.get("stage_mean_ms", {}).get(stage, "") for stage in stages)]
                 for slug, row in result["mcp_search_ms"].items()])  # fmt: skip
    print_table("Recall@10 against exact search", ["tenant", "visible rows", "path", "recall", "retriever p50 ms"],
                [[slug, row["rows"], row["path"], row["recall"], row["retriever_ms"]["p50"]]
                 for slug, row in result["recall_at_10"].items()])  # fmt: skip
    if "append" in result:
        print(f"append: {result['append']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memories", type=int, default=1_000_000)
    parser.add_argument("--organizations", type=int, default=1000)
    parser.add_argument("--largest-share", type=float, default=0.10)
    parser.add_argument("--smallest", type=int, default=10)
    parser.add_argument("--real", type=int, default=100_000, help="At least this many memories embedded by the model.")
    parser.add_argument("--queries", type=int, default=200, help="MCP searches per measured tenant.")
    parser.add_argument("--recall-queries", type=int, default=50)
    parser.add_argument("--recall-all", action="store_true", help="Recall for every measured tenant, not two.")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--keep", action="store_true")
    parser.add_argument(
        "--append", type=int, default=0, help="After the searches, write this many more memories, timed (then kept)."
    )
    parser.add_argument("--log-dir", default=str(REPO / "var" / "bench"))
    parser.add_argument("--json", dest="json_out", default=None)
    args = parser.parse_args()
    logging.getLogger("httpx").setLevel(logging.WARNING)  # not a line per request
    with scratch_database(f"scale_{args.memories}", keep=args.keep):
        result = run(args)
    report(result)
    write_json(args.json_out, result)


if __name__ == "__main__":
    main()
