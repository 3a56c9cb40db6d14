"""Reading an export line by line: each line a JSON object checked as every interface checks JSON,
the first the manifest of this platform's format (transfer.records)."""

from __future__ import annotations

from typing import IO, Any

from memory_platform import json_input
from memory_platform.json_input import JsonInputError
from transfer import records

MAX_LINE_BYTES = 10_000_000


class ImportProblem(Exception):
    """Why a file cannot be imported (nothing was changed)."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(f"line {line}: {message}" if line is not None else message)


class Lines:
    """The file's lines as JSON objects, each checked as every interface checks JSON."""

    def __init__(self, source: IO[bytes]) -> None:
        self.source = source
        self.number = 0

    def __iter__(self) -> Lines:
        return self

    def __next__(self) -> tuple[int, dict[str, Any]]:
        found = self.next(required=False)
        if found is None:
            raise StopIteration
        return found

    def next(self, *, required: bool = True) -> Any:
        line = self.source.readline(MAX_LINE_BYTES + 1)
        if not line:
            if required:
                raise ImportProblem("the file is empty: an export starts with its manifest")
            return None
        self.number += 1
        if len(line) > MAX_LINE_BYTES:
            raise ImportProblem(f"the line is longer than {MAX_LINE_BYTES:,} bytes", self.number)
        try:
            value = json_input.loads(line)
        except JsonInputError as error:
            raise ImportProblem(f"not JSON: {error.message}", self.number) from None
        if not isinstance(value, dict) or not isinstance(value.get("kind"), str):
            raise ImportProblem('each line must be an object with a "kind"', self.number)
        return self.number, value


def read_manifest(number: int, value: dict[str, Any]) -> dict[str, Any]:
    if value.get("kind") != "manifest" or value.get("format") != records.FORMAT:
        raise ImportProblem(
            f"not an export of this platform: the first line must be its {records.FORMAT} manifest", number
        )
    if value.get("version") != records.VERSION:
        raise ImportProblem(
            f"export format version {value.get('version')!r}; this platform reads version {records.VERSION}"
        )
    organization = value.get("organization")
    if not isinstance(organization, dict) or not isinstance(organization.get("id"), int):
        raise ImportProblem("the manifest does not say which organization was exported", number)
    return value
