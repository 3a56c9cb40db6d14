"""Rows written, one committed insert at a time, while a schema change runs: which were acknowledged,
which of them while it ran, and what failed. For the tests that show a migration step keeps a table
written to and loses nothing."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from django.db import DatabaseError, connection


@dataclass
class Writes:
    written: list[int] = field(default_factory=list)  # ids of the acknowledged inserts
    during: list[int] = field(default_factory=list)  # those acknowledged while the change ran
    errors: list[BaseException] = field(default_factory=list)


def writes_during(change: Callable[[], None], insert: Callable[[int], int], *, at_least: int = 20) -> Writes:
    """Run ``change`` while another thread (a connection of its own) calls ``insert(n)`` for n = 0,
    1, ... (it returns the new row's id), from before the change starts until it ends and ``at_least``
    rows are in."""
    seen = Writes()
    running, done = threading.Event(), threading.Event()

    def write() -> None:
        n = 0
        try:
            while not done.is_set() or n < at_least:
                row = insert(n)
                seen.written.append(row)
                if running.is_set() and not done.is_set():
                    seen.during.append(row)
                n += 1
        except DatabaseError as error:
            seen.errors.append(error)
        finally:
            connection.close()

    writer = threading.Thread(target=write)
    writer.start()
    deadline = time.monotonic() + 30
    while not seen.written and not seen.errors and time.monotonic() < deadline:  # writing before it starts
        time.sleep(0.01)
    running.set()
    try:
        change()
    finally:
        done.set()
        writer.join(timeout=60)
    return seen
