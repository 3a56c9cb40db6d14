"""Transaction helpers shared by the services and the search."""

from __future__ import annotations

import contextlib
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connections, transaction


def savepoint_if_in_transaction(using: str = DEFAULT_DB_ALIAS) -> contextlib.AbstractContextManager[Any]:
    """A savepoint when a caller's transaction is open, else nothing: a statement that may fail (or
    whose transaction-local settings must end with it) then cannot abort or leak into the caller's
    transaction; outside one, it runs in its own implicit transaction and needs no BEGIN."""
    return transaction.atomic(using) if connections[using].in_atomic_block else contextlib.nullcontext()
