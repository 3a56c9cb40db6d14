"""Each large organization's own search indexes, built by the worker as the organization grows.

Every organization's memories live in one table. One HNSW graph and one GIN index over all of them
made a large tenant's search walk past everyone else's rows: at 300k memories over 300
organizations, the largest (29.7k rows) searched in 53 ms at the median with a vector recall@10 of
0.917 against exact search, and a 9.1k-row tenant in 63 ms (bench/scale.py).

So there are no shared search indexes. An organization with more than SEARCH_EXACT_SCAN_LIMIT
memories gets its own: an HNSW graph and a GIN index over its rows alone (partial indexes,
``WHERE organization_id = <id>``), built concurrently (writes and searches go on) by the worker's
periodic sweep (``memory_index_tenants``), or at once by ``manage.py search_indexes --build``.
Every search query names its organization, so the planner uses that organization's indexes; an
organization without them (a small one, or one whose indexes are still being built) is read through
its organization index and ranked exactly: always right, and fast at that size.

Partial indexes rather than declarative partitioning: a partitioned table needs the partition key in
every primary and unique key and in every foreign key pointing at it, which Django's models (one
UUID primary key that versions, links and audit events point at) do not have; and a partial index is
built, and dropped, without moving a row. bench/tenant_layout.py measures both layouts on the same
data. The cost of many partial indexes is planning time on the memories table; it is measured there
too.

The graph is over half-precision copies of the vectors (``embedding::halfvec(384)``, 2 bytes a
dimension): 43% smaller than one over the stored vectors, a fifth cheaper to write to and no slower
to walk, with the same recall once its candidates are ordered again by their stored vectors, which
the retrievers do (bench/index_settings.py; docs/explanation/performance.md). Graphs over the
stored vectors (``memory_hnsw_o<id>``, built before) are still walked where they are, and replaced
by the sweep: it builds the organization's half-precision graph beside the old one and drops the
old one in its next run, once every process has seen the new one (``search_caches.graphs``).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from django.conf import settings
from django.db import connection

logger = logging.getLogger(__name__)

# Memory for one build. An HNSW graph built in memory is several times faster to build than one that
# spills (a 100k-row tenant needs about 200 MB); the setting lasts for the build's session only.
BUILD_MAINTENANCE_WORK_MEM = "512MB"

# At most this many organizations get their own indexes (the largest first). Every query on the
# memories table is planned against each of its indexes: a primary-key lookup took 4 us to plan with
# none, 103 us with 200 partial indexes, 257 us with 500, and 4.3 ms with 1,000 (bench/tenant_layout.py).
# A million memories over a thousand organizations have 59 past 2,000 memories. Past this many large
# organizations, the next step is a table per organization (declarative partitioning, or Citus),
# see docs/explanation/performance.md.
MAX_ORGANIZATIONS = 200

# How many times this process built or dropped an organization's index: what a process remembers
# of the graphs (memories.search.caches.Graphs) is read again when it changes.
changes = 0

# pg_try_advisory_lock keys: one sweep at a time, one build per organization at a time.
_SWEEP_LOCK = 7_291_001
_BUILD_LOCK = 7_291_002


def index_names(organization_id: int) -> tuple[str, str]:
    """The names of an organization's own HNSW and GIN indexes."""
    return f"memory_hvec_o{int(organization_id)}", f"memory_text_o{int(organization_id)}"


def full_precision_graph(organization_id: int) -> str:
    """The name of the graph over the stored vectors an organization got before (replaced by the sweep)."""
    return f"memory_hnsw_o{int(organization_id)}"


HALF = "half"  # a graph over embedding::halfvec(384)
FULL = "full"  # a graph over embedding itself (built before; replaced by the sweep)


def nearest_first(precision: str | None, column: str, other: str) -> str:
    """The ORDER BY term that walks an organization's graph of that precision from ``other`` (an
    expression of a vector), or, with no graph, sorts by the stored vectors' distance."""
    if precision == HALF:
        half = f"halfvec({settings.EMBEDDING_DIMENSIONS})"
        return f"{column}::{half} <=> {other}::{half}"
    return f"{column} <=> {other}"


def _changed() -> None:
    global changes  # noqa: PLW0603 - a counter of this process's own changes
    changes += 1


def graph_precisions() -> dict[int, str]:
    """Which organizations have a valid graph of their own, and over which precision: HALF when
    the half-precision one is there (it is walked, even beside an old one), else FULL."""
    found: dict[int, str] = {}
    for index in existing():
        if index.valid and index.graph:
            precision = HALF if index.name.startswith("memory_hvec_") else FULL
            if found.get(index.organization_id) != HALF:
                found[index.organization_id] = precision
    return found


def graph_settings() -> dict[str, int]:
    """The build settings an organization's HNSW graph is to have (SEARCH_HNSW_M and
    SEARCH_HNSW_EF_CONSTRUCTION; bench/index_settings.py measures what they cost and buy)."""
    return {"m": settings.SEARCH_HNSW_M, "ef_construction": settings.SEARCH_HNSW_EF_CONSTRUCTION}


def _with(options: dict[str, int]) -> str:
    return ", ".join(f"{name} = {int(value)}" for name, value in options.items())


def _definitions(organization_id: int, *, concurrently: bool) -> list[str]:
    hnsw, gin = index_names(organization_id)
    how = "CONCURRENTLY " if concurrently else ""
    where = f"WHERE organization_id = {int(organization_id)}"
    return [
        f"CREATE INDEX {how}IF NOT EXISTS {hnsw} ON memories_memory USING hnsw "
        f"((embedding::halfvec({settings.EMBEDDING_DIMENSIONS})) halfvec_cosine_ops) WITH ({_with(graph_settings())}) "
        f"{where}",
        # Without a pending list, as the shared GIN indexes (memories migration 0009).
        f"CREATE INDEX {how}IF NOT EXISTS {gin} ON memories_memory USING gin (search_vector) "
        f"WITH (fastupdate = off) {where}",
    ]


@dataclass(frozen=True)
class TenantIndex:
    """What an operator sees of one organization's own index."""

    organization_id: int
    name: str
    valid: bool
    size_bytes: int
    options: tuple[tuple[str, int], ...] = ()  # what it was built with (an HNSW graph's m, ef_construction)

    @property
    def graph(self) -> bool:
        return self.name.startswith(("memory_hvec_", "memory_hnsw_"))

    @property
    def current(self) -> bool:
        """Built as it is to be: a full-text index always is; a graph over the stored vectors never
        (its half-precision one replaces it); a half-precision one with today's settings."""
        if self.name.startswith("memory_hnsw_"):
            return False
        return not self.graph or dict(self.options) == graph_settings()


def existing() -> list[TenantIndex]:
    """Every organization's own index, valid or not (a concurrent build that failed leaves an
    invalid one behind, which searches ignore and the next build replaces)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname, x.indisvalid, pg_relation_size(c.oid), coalesce(c.reloptions, '{}') FROM pg_index x "
            "JOIN pg_class c ON c.oid = x.indexrelid "
            "WHERE x.indrelid = 'memories_memory'::regclass AND c.relname ~ '^memory_(hnsw|hvec|text)_o[0-9]+$' "
            "ORDER BY c.relname"
        )
        rows = cursor.fetchall()
    return [
        TenantIndex(int(name.rsplit("_o", 1)[1]), name, bool(valid), int(size), _options(reloptions))
        for name, valid, size, reloptions in rows
    ]


def _options(reloptions: list[str]) -> tuple[tuple[str, int], ...]:
    pairs = (option.split("=", 1) for option in reloptions)
    return tuple(sorted((name, int(value)) for name, value in pairs if name in ("m", "ef_construction")))


def organizations_due(threshold: int | None = None) -> list[tuple[int, int]]:
    """(organization, memories) for each organization with more than ``threshold`` memories
    (SEARCH_EXACT_SCAN_LIMIT) that lacks a valid own index, largest first."""
    threshold = settings.SEARCH_EXACT_SCAN_LIMIT if threshold is None else threshold
    complete: dict[int, int] = {}
    for index in existing():
        if index.valid and not index.name.startswith("memory_hnsw_"):
            complete[index.organization_id] = complete.get(index.organization_id, 0) + 1
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT organization_id, count(*) FROM memories_memory GROUP BY organization_id HAVING count(*) > %s "
            "ORDER BY 2 DESC, 1",
            [threshold],
        )
        rows = cursor.fetchall()
    return [(int(org), int(count)) for org, count in rows if complete.get(int(org), 0) < 2]


def build(organization_id: int) -> list[str]:
    """Build the organization's own indexes that are missing; the names built.

    Concurrently (writes and searches go on) unless called inside a transaction, where PostgreSQL
    allows only a plain build (it blocks writes to the table until that transaction ends). An invalid
    index a failed build left is dropped first. Another process building the same organization's
    indexes makes this one return at once."""
    concurrently = not connection.in_atomic_block
    built: list[str] = []
    with connection.cursor() as cursor:
        if concurrently:
            cursor.execute("SELECT pg_try_advisory_lock(%s, %s)", [_BUILD_LOCK, organization_id])
            if not cursor.fetchone()[0]:
                return built
        else:
            # PostgreSQL builds no index on a table with foreign-key checks still pending in the
            # transaction: they are made now instead of at commit (a violation fails either way).
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        try:
            names = index_names(organization_id)
            invalid = {index.name for index in existing() if index.name in names and not index.valid}
            for name in sorted(invalid):
                cursor.execute(f"DROP INDEX {'CONCURRENTLY ' if concurrently else ''}IF EXISTS {name}")
            present = {index.name for index in existing() if index.name in names}
            cursor.execute(
                "SELECT set_config('maintenance_work_mem', %s, %s)", [BUILD_MAINTENANCE_WORK_MEM, not concurrently]
            )
            for name, definition in zip(names, _definitions(organization_id, concurrently=concurrently), strict=True):
                if name in present:
                    continue
                started = time.perf_counter()
                cursor.execute(definition)
                built.append(name)
                _changed()
                logger.info("built %s in %.1f s", name, time.perf_counter() - started)
        finally:
            if concurrently:
                cursor.execute("RESET maintenance_work_mem")
                cursor.execute("SELECT pg_advisory_unlock(%s, %s)", [_BUILD_LOCK, organization_id])
    return built


def rebuild(index: TenantIndex) -> bool:
    """Build an organization's graph again with the settings it is to have (graph_settings), in place:
    its options changed, then REINDEX, concurrently (writes and searches go on, on the old graph until
    the new one replaces it) unless called inside a transaction. False when another process is
    building that organization's indexes."""
    concurrently = not connection.in_atomic_block
    with connection.cursor() as cursor:
        if concurrently:
            cursor.execute("SELECT pg_try_advisory_lock(%s, %s)", [_BUILD_LOCK, index.organization_id])
            if not cursor.fetchone()[0]:
                return False
        try:
            cursor.execute(
                "SELECT set_config('maintenance_work_mem', %s, %s)", [BUILD_MAINTENANCE_WORK_MEM, not concurrently]
            )
            started = time.perf_counter()
            # The graph being written to reads its m from its own first page, not from these options:
            # until the new graph replaces it, it goes on as it was built.
            cursor.execute(f"ALTER INDEX {index.name} SET ({_with(graph_settings())})")
            cursor.execute(f"REINDEX INDEX {'CONCURRENTLY ' if concurrently else ''}{index.name}")
            _changed()
            logger.info(
                "rebuilt %s with %s (was %s) in %.1f s",
                index.name,
                _with(graph_settings()),
                _with(dict(index.options)) or "pgvector's defaults",
                time.perf_counter() - started,
            )
        finally:
            if concurrently:
                cursor.execute("RESET maintenance_work_mem")
                cursor.execute("SELECT pg_advisory_unlock(%s, %s)", [_BUILD_LOCK, index.organization_id])
    return True


def _drop_leftovers() -> None:
    """Drop what a REINDEX CONCURRENTLY that failed leaves beside a graph: an invalid copy named
    ``<index>_ccnew`` (or ``_ccold``), which searches ignore but every write to its organization
    would keep updating."""
    how = "" if connection.in_atomic_block else "CONCURRENTLY "
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname FROM pg_index x JOIN pg_class c ON c.oid = x.indexrelid "
            "WHERE x.indrelid = 'memories_memory'::regclass AND NOT x.indisvalid "
            "AND c.relname ~ '^memory_(hnsw|hvec|text)_o[0-9]+_cc(new|old)[0-9]*$'"
        )
        for (name,) in cursor.fetchall():
            cursor.execute(f"DROP INDEX {how}IF EXISTS {name}")
            logger.info("dropped %s: left by a rebuild that failed", name)


def _drop_replaced() -> None:
    """Drop the graphs over the stored vectors whose organization has had its half-precision graph
    since an earlier sweep: by now every process walks the new one (search_caches.graphs forgets
    within a sweep's interval), so none is left sorting the organization's rows meanwhile."""
    how = "" if connection.in_atomic_block else "CONCURRENTLY "
    indexes = existing()
    half = {index.organization_id for index in indexes if index.valid and index.name.startswith("memory_hvec_")}
    with connection.cursor() as cursor:
        for index in indexes:
            if index.name.startswith("memory_hnsw_") and index.organization_id in half:
                cursor.execute(f"DROP INDEX {how}IF EXISTS {index.name}")
                _changed()
                logger.info("dropped %s: its organization's half-precision graph replaces it", index.name)


def _drop_orphans() -> None:
    """Drop the indexes of organizations that no longer exist (an index holds no data of its own:
    everything in it is in the table)."""
    from organizations.models import Organization

    alive = set(Organization.objects.values_list("pk", flat=True))
    how = "" if connection.in_atomic_block else "CONCURRENTLY "
    with connection.cursor() as cursor:
        for index in existing():
            if index.organization_id not in alive:
                cursor.execute(f"DROP INDEX {how}IF EXISTS {index.name}")
                _changed()
                logger.info("dropped %s: its organization is gone", index.name)


def sweep(threshold: int | None = None) -> dict[int, list[str]]:
    """Build the own indexes of every organization that is due (organizations_due), largest first;
    what was built, by organization. One sweep runs at a time: another returns at once."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s)", [_SWEEP_LOCK])
        if not cursor.fetchone()[0]:
            return {}
    try:
        _drop_replaced()  # those a previous sweep built the replacements of
        done: dict[int, list[str]] = {}
        indexed = {index.organization_id for index in existing()}
        for organization_id, memories in organizations_due(threshold):
            if organization_id not in indexed and len(indexed) >= MAX_ORGANIZATIONS:
                logger.warning(
                    "organization %s (%d memories) gets no search indexes of its own: %d organizations have "
                    "them, the most this layout serves well (memories.search.tenant_indexes.MAX_ORGANIZATIONS)",
                    organization_id,
                    memories,
                    len(indexed),
                )
                continue
            built = build(organization_id)
            if built:
                done[organization_id] = built
                indexed.add(organization_id)
        _drop_leftovers()
        # Graphs built with other settings than today's, largest first: each is searched as it is
        # until its rebuild replaces it.
        for index in sorted(existing(), key=lambda index: -index.size_bytes):
            if index.valid and not index.current and index.name.startswith("memory_hvec_") and rebuild(index):
                done.setdefault(index.organization_id, []).append(index.name)
        _drop_orphans()
        return done
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s)", [_SWEEP_LOCK])
