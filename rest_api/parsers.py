"""The REST API reads JSON like every other interface (memory_platform/json_input.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import IO, Any

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from memory_platform import json_input
from memory_platform.json_input import JsonInputError


class CheckedJSONParser(JSONParser):
    """JSON with the platform's depth and Unicode rules; a refusal is a 400 saying what to send."""

    def parse(
        self, stream: IO[Any], media_type: str | None = None, parser_context: Mapping[str, Any] | None = None
    ) -> Any:
        try:
            return json_input.loads(stream.read() if stream is not None else b"")
        except JsonInputError as error:
            raise ParseError(error.message) from None
