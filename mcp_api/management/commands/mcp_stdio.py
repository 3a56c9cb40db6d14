"""`manage.py mcp_stdio`: serve MCP over stdin/stdout for agents that spawn a process."""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path
from typing import Any

import anyio
from django.core.management.base import BaseCommand, CommandError, CommandParser

from memory_platform.exceptions import AuthenticationFailed

logger = logging.getLogger("mcp_api.stdio")


class Command(BaseCommand):
    help = "Serve MCP over stdio. The token comes from MEMORY_PLATFORM_TOKEN or --token-file."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--token-file", type=Path, help="A file holding the bearer token.")

    def handle(self, *args: Any, **options: Any) -> None:
        from mcp_api.stdio import serve_stdio
        from memories.embeddings import get_provider
        from organizations.services import principal_for_token

        # Everything but the protocol goes to stderr: stdout belongs to JSON-RPC.
        self.stdout = self.stderr
        token = self._token(options["token_file"])
        try:
            principal = principal_for_token(token)
        except AuthenticationFailed as error:
            raise CommandError(f"MCP stdio: {error.message}") from None
        logger.info("serving MCP over stdio for %s as %s", principal.organization.slug, principal.role)
        # Load the embedding model while the client initialises, without delaying the handshake.
        stopped_by_signal = anyio.run(
            serve_stdio, principal, lambda: get_provider().warm_up(background=True), lambda: _still_valid(token)
        )
        sys.stdout.flush()
        if stopped_by_signal:
            # A thread is still blocked reading stdin and cannot be interrupted; a normal exit would
            # wait for it (anyio's worker threads are not daemons) until the client closes stdin.
            logging.shutdown()
            sys.stderr.flush()
            os._exit(0)

    def _token(self, token_file: Path | None) -> str:
        if token_file is not None:
            try:
                token = token_file.read_text().strip()
            except OSError as error:
                raise CommandError(f"cannot read --token-file {token_file}: {error.strerror}") from None
        else:
            token = os.environ.get("MEMORY_PLATFORM_TOKEN", "").strip()
        if not token:
            raise CommandError("no token: set MEMORY_PLATFORM_TOKEN or pass --token-file")
        return token


def _still_valid(token: str) -> str | None:
    """Why the session's token no longer works (revoked, expired, its person gone), or None."""
    from django.db import close_old_connections

    from organizations.services import principal_for_token

    close_old_connections()
    try:
        principal_for_token(token)
    except AuthenticationFailed as error:
        return error.message
    return None
