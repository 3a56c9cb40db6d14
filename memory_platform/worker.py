"""The Celery worker, with beat embedded, that `manage.py serve` runs beside the web server.

It is a real `celery worker -B` in a child process using the same Python, so a local run has the
same background work as production (where worker and beat are separate services). The child must
never outlive the server: it is stopped when serve exits, and on Linux the kernel sends it SIGTERM
if serve dies without getting the chance.

It is supervised: if it exits while serve runs (killed, crashed, out of memory), it is started
again after 1 s, then 2, 4… up to a minute while it keeps failing (the wait resets once it has run
a minute), each restart logged. Its heartbeat (memory_platform/heartbeat.py) says it is alive.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import logging
import multiprocessing
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from types import TracebackType

from django.conf import settings

_PR_SET_PDEATHSIG = 1
RESTART_FIRST_WAIT = 1.0
RESTART_MAX_WAIT = 60.0
# A worker that ran this long before exiting was healthy: the next restart waits the first wait again.
HEALTHY_AFTER = 60.0

logger = logging.getLogger("memory_platform.worker")


class BackgroundWorker:
    def __init__(self, *, log_file: Path, schedule_file: Path, env: Mapping[str, str] | None = None) -> None:
        self.log_file = log_file
        self.schedule_file = schedule_file
        self.env = dict(os.environ if env is None else env)
        self._process: subprocess.Popen[bytes] | None = None
        self._stopping = threading.Event()
        self._supervisor: threading.Thread | None = None
        self.restarts = 0

    def command(self) -> list[str]:
        return [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "memory_platform",
            "worker",
            "--beat",
            "--schedule",
            str(self.schedule_file),
            # One task at a time in the worker process itself: one embedding model in memory.
            "--pool",
            "solo",
            "--concurrency",
            "1",
            "--loglevel",
            "info",
            # A single local worker has no peers to synchronise with; on the file broker these
            # would only write and poll message files every few seconds.
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
        ]

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process else None

    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def start(self, *, supervise: bool = True) -> None:
        if self.running():
            return
        self._stopping.clear()
        self._spawn()
        if supervise and self._supervisor is None:
            self._supervisor = threading.Thread(target=self._supervise, name="worker-supervisor", daemon=True)
            self._supervisor.start()

    def _spawn(self) -> None:
        self.log_file.parent.mkdir(parents=True, exist_ok=True)
        self.schedule_file.parent.mkdir(parents=True, exist_ok=True)
        env = {**self.env, "PYTHONUNBUFFERED": "1"}
        with self.log_file.open("ab") as log:
            self._process = subprocess.Popen(
                self.command(),
                cwd=settings.BASE_DIR,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                # Its own process group: Ctrl-C in the terminal reaches serve alone, which then
                # stops the worker (and the beat process it forks) in order.
                start_new_session=True,
                preexec_fn=_die_with_parent(),  # noqa: PLW1509 - only calls prctl
            )
        self._started_at = time.monotonic()
        _mark_started()

    def _supervise(self) -> None:
        wait = RESTART_FIRST_WAIT
        while not self._stopping.wait(0.5):
            process = self._process
            if process is None or process.poll() is None:
                continue
            if time.monotonic() - self._started_at >= HEALTHY_AFTER:
                wait = RESTART_FIRST_WAIT
            logger.warning(
                "the worker (pid %s) exited with status %s; starting it again in %.0f s",
                process.pid,
                process.returncode,
                wait,
            )
            _kill_group(process.pid)  # its beat process, if it outlived it
            if self._stopping.wait(wait):
                return
            self._spawn()
            self.restarts += 1
            logger.warning("the worker is running again (pid %s, restart %d)", self.pid, self.restarts)
            wait = min(wait * 2, RESTART_MAX_WAIT)

    def stop(self, timeout: float = 20.0) -> int | None:
        """Stop the worker: a warm shutdown (the running task finishes), then a kill after ``timeout``."""
        self._stopping.set()
        if self._supervisor is not None:
            self._supervisor.join()
            self._supervisor = None
        process = self._process
        if process is None:
            return None
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                _kill_group(process.pid)
                process.wait()
        # Whatever the worker left behind in its group (its beat process, should it hang) goes too.
        _kill_group(process.pid)
        return process.returncode

    def __enter__(self) -> BackgroundWorker:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.stop()


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGKILL)


def die_with(parent_pid: int, sig: signal.Signals = signal.SIGTERM) -> None:
    """Ask Linux to send this process ``sig`` when ``parent_pid``, its parent, dies (even by SIGKILL).

    For children started by a library (granian's web workers) rather than by us with a hook. A
    child whose parent is already gone (it died while the child started) is ended at once."""
    hook = _die_with_parent(sig)
    if hook is None or os.getpid() == parent_pid:  # not a child: the parent process itself
        return
    hook()
    if os.getppid() != parent_pid:
        os.kill(os.getpid(), sig)


def die_with_server() -> None:
    """In a web process a server started (granian's or uvicorn's workers): end with that server,
    however it ends. Killed outright, a server cannot stop its web processes itself, so Linux kills
    them: at once, as the server was. (A SIGTERM would ask for a graceful stop, and a web process
    orphaned mid-shutdown was seen to hang in it, holding its port, for more than 30 s.)"""
    server = multiprocessing.parent_process()
    if server is not None and server.pid is not None:
        die_with(server.pid, signal.SIGKILL)


def _die_with_parent(sig: signal.Signals = signal.SIGTERM) -> Callable[[], None] | None:
    """A pre-exec hook asking Linux to send the child ``sig`` when its parent dies, even by SIGKILL."""
    if not sys.platform.startswith("linux"):
        return None
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)

    def hook() -> None:
        libc.prctl(_PR_SET_PDEATHSIG, sig)

    return hook


def _mark_started() -> None:
    """Note the start, so that health says "starting" (not "degraded") until the worker beats."""
    from django.db import connection

    from memory_platform import heartbeat

    try:
        heartbeat.started()
    # Noting a start must never keep the worker from starting: without it, health says degraded
    # until the worker beats, nothing worse (the database may be down, or not allowed here at all).
    except Exception as error:
        logger.warning("could not note the worker's start: %s", error)
    finally:
        connection.close()  # this thread's own connection (the supervisor's, on a restart)
