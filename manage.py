#!/usr/bin/env python
"""Django's command-line utility for administrative tasks."""

import os
import sys


def main() -> None:
    if sys.argv[1:2] == ["mcp_stdio"]:
        # Answer the MCP handshake before Django loads (see mcp_api/stdio_bootstrap.py).
        from mcp_api.stdio_bootstrap import early_handshake

        early_handshake()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_platform.settings")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
