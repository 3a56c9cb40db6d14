"""The web server: granian (a Rust HTTP server) running the WSGI application in worker processes.

Every view of the platform is synchronous (the ORM, the embedding model), so WSGI serves them
directly. Under ASGI each request crossed from the event loop to a thread and back several times
(once per synchronous middleware, once for the view): on the load benchmark that bridging cost
3 to 4 ms of CPU per request, a third of a cheap request's cost. granian parses HTTP in Rust and runs
the application on a fixed set of threads per process.

One process per core (Python runs one thread at a time per process) and WEB_THREADS threads in
each, so a request waiting on the database does not hold its process's core. ``manage.py serve``
runs :func:`serve`; the test suite, the scripts and the benchmarks start the same server with
:func:`command`. ``memory_platform.asgi`` stays for anyone who runs an ASGI server of their own.
"""

from __future__ import annotations

import multiprocessing
import os
import sys

WSGI_TARGET = "memory_platform.wsgi:application"
# Two threads: while one waits on the database the other runs. Measured on 2 cores (2 processes,
# 16 clients, 10k memories): 96 requests/s, p95 235 ms against 93 and 283 with 4 threads; more
# threads only add requests contending for the process's core and the database's.
DEFAULT_THREADS = 2


def threads() -> int:
    """Application threads per web process (WEB_THREADS)."""
    value = os.environ.get("WEB_THREADS", "").strip()
    if not value:
        return DEFAULT_THREADS
    if not value.isdigit() or int(value) < 1:
        raise SystemExit(f"WEB_THREADS must be a whole number of threads, 1 or more, not {value!r}")
    return int(value)


def command(host: str, port: int, *, workers: int = 1, log_level: str = "warning") -> list[str]:
    """The command line that runs the web server as a process of its own (tests, scripts, benchmarks)."""
    return [
        sys.executable,
        "-m",
        "granian",
        "--interface",
        "wsgi",
        "--host",
        host,
        "--port",
        str(port),
        "--workers",
        str(workers),
        "--blocking-threads",
        str(threads()),
        "--no-ws",
        "--log-level",
        log_level,
        WSGI_TARGET,
    ]


def serve(host: str, port: int, *, workers: int) -> None:
    """Serve until SIGINT or SIGTERM, then return once every web process has stopped.

    A web process that dies is started again (a crash must not leave a port half served), unless
    it keeps dying within seconds of its start: then the server stops with an error.
    """
    from granian import Granian
    from granian.constants import Interfaces
    from granian.log import LogLevels

    # Each web process imports the application afresh: nothing of this process (its database
    # connections, its pool's threads) is inherited by a fork.
    multiprocessing.set_start_method("spawn", force=True)
    Granian(
        WSGI_TARGET,
        address=host,
        port=port,
        interface=Interfaces.WSGI,
        workers=workers,
        blocking_threads=threads(),
        websockets=False,
        log_level=LogLevels.info,
        respawn_failed_workers=True,
    ).serve()
