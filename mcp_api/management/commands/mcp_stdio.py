"""`manage.py mcp_stdio`: serve MCP over stdin/stdout for agents that spawn a process."""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path
from typing import Any

import anyio
from django.core.management.base import CommandError, CommandParser

from memory_platform.commands import PlatformCommand
from memory_platform.exceptions import AuthenticationFailed
from organizations.principal import Principal

logger = logging.getLogger("mcp_api.stdio")


class Command(PlatformCommand):
    help = "Serve MCP over stdio. The token comes from MEMORY_PLATFORM_TOKEN or --token-file."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--token-file", type=Path, help="A file holding the bearer token.")

    def handle(self, *args: Any, **options: Any) -> None:
        from mcp_api.stdio import serve_stdio
        from memories.embeddings import get_provider

        # Everything but the protocol goes to stderr: stdout belongs to JSON-RPC.
        self.stdout = self.stderr
        session = _Session(*self._token(options["token_file"]))
        refusal = session.check()
        if session.principal is not None:
            logger.info(
                "serving MCP over stdio for %s as %s", session.principal.organization.slug, session.principal.role
            )
        elif refusal is not None:
            # Not an exit: the client would only see its connection drop. The handshake is answered,
            # then every request gets this error, which the client shows; the exit status says it too.
            logger.error("MCP stdio: %s", refusal[1])
        # Load the embedding model while the client initialises, without delaying the handshake;
        # not for a session whose token can never work (missing, malformed, unknown, revoked).
        warm_up = (lambda: None) if session.refused_for_good else (lambda: get_provider().warm_up(background=True))
        stopped_by_signal = anyio.run(serve_stdio, session.current, warm_up, session.check)
        sys.stdout.flush()
        # A client that leaves at once must not find the model still loading when the process exits.
        get_provider().settle(SETTLE_SECONDS)
        if stopped_by_signal:
            # A thread is still blocked reading stdin and cannot be interrupted; a normal exit would
            # wait for it (anyio's worker threads are not daemons) until the client closes stdin.
            logging.shutdown()
            sys.stderr.flush()
            os._exit(0)
        if session.refused_for_good:
            raise CommandError(f"MCP stdio: {session.refused_for_good}")

    def _token(self, token_file: Path | None) -> tuple[str, str]:
        """The token, and what to fix when there is none (the session then refuses every request)."""
        if token_file is not None:
            try:
                return token_file.read_text().strip(), f"--token-file {token_file} is empty"
            except OSError as error:
                return "", f"cannot read --token-file {token_file}: {error.strerror}"
        return os.environ.get("MEMORY_PLATFORM_TOKEN", "").strip(), NO_TOKEN


# How long an exit waits for the embedding model to finish loading.
SETTLE_SECONDS = 60.0
NO_TOKEN = "no token: set MEMORY_PLATFORM_TOKEN or pass --token-file"  # noqa: S105 - a message, not a secret


class _Session:
    """The identity of one stdio session, looked up again before every request."""

    def __init__(self, token: str, missing: str) -> None:
        self.token = token
        self.missing = missing
        self.principal: Principal | None = None
        # Set when the token itself is the problem (missing, unknown, revoked): it will not get better.
        self.refused_for_good = ""

    def current(self) -> Principal | None:
        return self.principal

    def check(self) -> tuple[int, str] | None:
        """Why a request cannot be served now, as (JSON-RPC code, message), or None (and the principal
        is fresh: a role changed mid-session applies from the next request)."""
        from django.db import close_old_connections

        from mcp_api.views import DATABASE_DOWN, UNAUTHORIZED
        from memory_platform.exceptions import DATABASE_UNAVAILABLE, database_unavailable
        from organizations.tokens import principal_for_token

        if not self.token:
            self.refused_for_good = self.missing
            return UNAUTHORIZED, self.missing
        close_old_connections()
        try:
            self.principal = principal_for_token(self.token)
        except AuthenticationFailed as error:
            self.principal, self.refused_for_good = None, error.message
            return UNAUTHORIZED, error.message
        except Exception as error:
            if not database_unavailable(error):
                raise
            logger.warning("database unavailable: %s", str(error).strip().splitlines()[0] if str(error) else error)
            return DATABASE_DOWN, DATABASE_UNAVAILABLE
        self.refused_for_good = ""
        return None
