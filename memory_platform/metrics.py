"""Prometheus metrics of the web processes and the workers, served at /metrics.

Counters and histograms are kept by the process that counts them. Under ``manage.py serve`` every
web process and worker writes them to files in ``PROMETHEUS_MULTIPROC_DIR`` (prometheus_client's
multiprocess mode; serve sets it, under the data directory, and clears out what ended processes left
when it starts), and /metrics adds up every process's; a process started some other way keeps its own
in memory. The files are named after the machine and the process, so that replicas on several
machines or containers may share one directory (docker-compose.yml's volume).
What the database knows (the embedding backlog, open proposals, the workers' heartbeats, code-index
runs) and the Celery queue's depth are read when /metrics is asked, by the process answering.

/metrics answers only requests bearing ``Authorization: Bearer $METRICS_TOKEN``, and does not
exist (404) while METRICS_TOKEN is unset.
"""

from __future__ import annotations

import os
import re
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client import values as _values
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import REGISTRY, Collector

# Read once, as prometheus_client reads it when imported: a process counts in memory or in that
# directory for its whole life, and reports the same way.
_DIRECTORY = os.environ.get("PROMETHEUS_MULTIPROC_DIR") or None
# This machine's (or container's) name as it appears in the directory's file names.
HOST = re.sub(r"[^A-Za-z0-9.]+", "-", socket.gethostname()).strip("-") or "host"


def process_identifier() -> str:
    """This process in the directory's file names (``counter_<host>-<pid>.db``): processes of several
    machines sharing one directory never write to one file, as bare pids would (every container
    numbers its processes from 1). Called again after a fork, as prometheus_client does."""
    return f"{HOST}-{os.getpid()}"


if _DIRECTORY is not None:  # before any metric below is made
    _values.ValueClass = _values.MultiProcessValue(process_identifier)

# Seconds: from a cached lookup (a millisecond) to a large batch or a slow endpoint (tens of seconds).
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)

REQUESTS = Counter(
    "memory_platform_requests",
    "Requests answered, by interface (mcp, rest, admin, oauth, health, metrics, other), endpoint and status.",
    ["interface", "endpoint", "status"],
)
REQUEST_SECONDS = Histogram(
    "memory_platform_request_seconds",
    "Time to answer a request, by interface and endpoint.",
    ["interface", "endpoint"],
    buckets=LATENCY_BUCKETS,
)
THROTTLED = Counter(
    "memory_platform_throttled_requests",
    "Requests refused by a rate limit (429), by what was limited (principal: API_THROTTLE_RATE; registration).",
    ["scope"],
)
SEARCH_STAGE_SECONDS = Histogram(
    "memory_platform_search_stage_seconds",
    "Time spent in each stage of a memory search (embed, keyword, vector, rank, hydrate; beside: waiting"
    " for the vector retriever that ran beside the keyword one).",
    ["stage"],
    buckets=LATENCY_BUCKETS,
)
EMBEDDING_SECONDS = Histogram(
    "memory_platform_embedding_seconds",
    "Time to embed one call's texts, by provider.",
    ["provider"],
    buckets=LATENCY_BUCKETS,
)
SEARCH_READS = Counter(
    "memory_platform_search_reads",
    "Searches by the database they read (replica, primary) and, for the primary with a replica configured, why.",
    ["database", "reason"],
)
EMBEDDED_TEXTS = Counter("memory_platform_embedded_texts", "Texts embedded, by provider.", ["provider"])
TASK_SECONDS = Histogram(
    "memory_platform_task_seconds", "Run time of Celery tasks, by task.", ["task"], buckets=LATENCY_BUCKETS
)
TASK_FAILURES = Counter("memory_platform_task_failures", "Celery tasks that raised, by task.", ["task"])
POOL_CONNECTIONS = Gauge(
    "memory_platform_database_pool_connections",
    "Pooled database connections of the live processes: open (pool_size) and idle (pool_available).",
    ["state"],
    multiprocess_mode="livesum",
)


def directory() -> str | None:
    """Where this process writes its metrics for the others to read (multiprocess mode), if anywhere."""
    return _DIRECTORY


def multiprocess() -> bool:
    return _DIRECTORY is not None


@contextmanager
def timed(histogram: Histogram, **labels: str) -> Iterator[None]:
    started = time.perf_counter()
    try:
        yield
    finally:
        histogram.labels(**labels).observe(time.perf_counter() - started)


def registry(state: Collector | None = None) -> CollectorRegistry:
    """What /metrics reports: every process's metrics (or this one's), and ``state`` read now."""
    if _DIRECTORY is not None:
        forget_dead_processes(Path(_DIRECTORY))
        collected = CollectorRegistry()
        MultiProcessCollector(collected)
    else:
        collected = CollectorRegistry()
        collected.register(_Everything())
    if state is not None:
        collected.register(state)
    return collected


class _Everything(Collector):
    """This process's own metrics (the default registry), when there is no multiprocess directory."""

    def collect(self) -> Iterator[Any]:
        yield from REGISTRY.collect()


def forget_dead_processes(directory: Path, *, counts: bool = False) -> None:
    """Drop the files of this machine's processes that have ended (a web process the server restarted,
    a worker that was killed): their live gauges (the pool's), so that they no longer add to the sum,
    and with ``counts`` their counters and histograms too (serve, starting: an earlier run's counts
    must not add up again). Other machines' files are theirs to judge."""
    for path in directory.glob("*.db" if counts else "gauge_live*_*.db"):
        pid = _local_pid(path)
        if pid is not None and not _alive(pid):
            path.unlink(missing_ok=True)


def _local_pid(path: Path) -> int | None:
    """The pid of the process of this machine that wrote ``path`` (``<kind>_<host>-<pid>.db``, or
    ``<kind>_<pid>.db`` as prometheus_client names them by default), or None."""
    host, _, pid = path.stem.rsplit("_", 1)[-1].rpartition("-")
    return int(pid) if pid.isdigit() and host in ("", HOST) else None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's: alive
    return True


# --- requests --------------------------------------------------------------------------------------

_INTERFACES = (
    ("/mcp", "mcp"),
    ("/api/", "rest"),
    ("/admin/", "admin"),
    ("/oauth/", "oauth"),
    ("/.well-known/", "oauth"),
    ("/accounts/", "admin"),
    ("/healthz", "health"),
    ("/metrics", "metrics"),
)


def interface_of(path: str) -> str:
    return next((name for prefix, name in _INTERFACES if path.startswith(prefix)), "other")


def endpoint_of(request: Any, interface: str) -> str:
    """A name of few values: the MCP method and tool (set by the MCP view), the URL pattern matched."""
    if interface == "mcp":
        return str(getattr(request, "metrics_endpoint", "unparsed"))
    if interface == "admin":
        return "admin"
    match = getattr(request, "resolver_match", None)
    return f"/{match.route}" if match is not None and match.route else "unmatched"


class RequestMetricsMiddleware:
    """Counts and times every request, and samples this process's database pool as it ends."""

    def __init__(self, get_response: Any) -> None:
        self.get_response = get_response

    def __call__(self, request: Any) -> Any:
        started = time.perf_counter()
        response = self.get_response(request)
        interface = interface_of(request.path_info)
        endpoint = endpoint_of(request, interface)
        REQUESTS.labels(interface, endpoint, str(response.status_code)).inc()
        REQUEST_SECONDS.labels(interface, endpoint).observe(time.perf_counter() - started)
        _sample_pool()
        return response


def _sample_pool() -> None:
    from django.db import connection

    pool = getattr(connection, "pool", None)
    if pool is None or pool.closed:
        return
    stats = pool.get_stats()
    POOL_CONNECTIONS.labels("open").set(stats.get("pool_size", 0))
    POOL_CONNECTIONS.labels("idle").set(stats.get("pool_available", 0))


# --- the task queue --------------------------------------------------------------------------------

# kombu's Redis transport keeps a queue in one list per priority step (the name, then name\x06\x16N).
_REDIS_PRIORITY_SUFFIXES = ("", "\x06\x163", "\x06\x166", "\x06\x169")


def queue_depth() -> int | None:
    """Messages waiting in this deployment's Celery queue (None when the broker cannot be read)."""
    from django.conf import settings

    queue = settings.CELERY_TASK_DEFAULT_QUEUE
    if settings.REDIS_URL:
        import redis

        try:
            client = redis.Redis.from_url(settings.REDIS_URL, socket_timeout=1, socket_connect_timeout=1)
            return sum(int(client.llen(queue + suffix)) for suffix in _REDIS_PRIORITY_SUFFIXES)
        except redis.RedisError:
            return None
    # The file broker: one file a message, named <time>_<id>.<queue>.msg.
    return sum(1 for _ in settings.CELERY_BROKER_DIR.glob(f"*.{queue}.msg"))
