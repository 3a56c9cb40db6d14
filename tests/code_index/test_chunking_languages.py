"""Every language chunks along its syntax: small real files (tests/code_index/samples), with their
chunks' kinds, names, containers and line ranges.

At the default size (2,500 characters) a small class is one chunk; at 300 characters classes are
chunked member by member and long functions are cut where statements start, so the same files
show both levels of the tree.
"""

from __future__ import annotations

import pytest

from code_index.chunking import Chunk, chunk_file
from code_index.languages import grammar_name, language_of
from tests.code_index.conftest import SAMPLES

# file: chunks as (chunk_type, name, container, start_line, end_line)
WHOLE: dict[str, list[tuple[str, str, str, int, int]]] = {
    "retry.py": [("class", "RetryPolicy", "", 1, 24), ("function", "call_with_retries", "", 27, 36)],
    "cart.js": [
        ("class", "Cart", "", 1, 21),
        ("function", "describeCart", "", 23, 26),
        ("function", "emptyCart", "", 28, 32),
    ],
    "client.ts": [
        ("class", "ClientOptions", "", 1, 8),
        ("class", "ApiClient", "", 10, 21),
        ("function", "buildUserAgent", "", 23, 26),
    ],
    "Badge.tsx": [("function", "Badge", "", 1, 13)],
    "store.go": [("class", "Store", "", 1, 16), ("method", "Get", "Store", 18, 28), ("function", "New", "", 30, 33)],
    "ledger.rs": [
        ("class", "Ledger", "", 1, 7),
        ("class", "Ledger", "", 9, 24),
        ("function", "parse_cents", "", 26, 30),
    ],
    "InvoiceService.java": [("class", "InvoiceService", "", 1, 25)],
    "checksum.c": [("module", "", "", 1, 6), ("function", "build_table", "", 8, 16), ("function", "crc32", "", 18, 25)],
    "shapes.cpp": [("class", "Circle", "", 1, 18), ("method", "area", "Circle", 20, 25)],
    "OrderService.cs": [("class", "OrderService", "", 1, 26)],
    "inventory.rb": [("class", "Inventory", "", 1, 22)],
    "UserRepository.php": [("class", "UserRepository", "", 1, 20), ("function", "normalize_email", "", 22, 25)],
    "GUIDE.md": [
        ("section", "Deploy guide, Before you deploy", "", 1, 8),  # the title's tiny section joins the next
        ("section", "Rolling back", "Deploy guide", 10, 17),
        ("section", "Database", "Deploy guide > Rolling back", 19, 21),
    ],
}

MEMBERS: dict[str, list[tuple[str, str, str, int, int]]] = {
    "retry.py": [
        ("module", "", "", 1, 6),
        ("method", "__init__", "RetryPolicy", 9, 15),  # the class line and docstring are too small alone
        ("method", "delay", "RetryPolicy", 17, 20),
        ("method", "exhausted", "RetryPolicy", 22, 24),  # its decorator included
        ("function", "call_with_retries", "", 27, 30),
        ("function", "call_with_retries", "", 31, 36),
    ],
    "cart.js": [
        ("method", "constructor", "Cart", 1, 10),
        ("method", "add", "Cart", 12, 16),
        ("method", "totalCents", "Cart", 18, 21),
        ("function", "describeCart", "", 23, 26),
        ("function", "emptyCart", "", 28, 32),
    ],
    "client.ts": [
        ("class", "ClientOptions", "", 1, 8),
        ("method", "constructor", "ApiClient", 10, 11),
        ("method", "getJson", "ApiClient", 13, 15),
        ("method", "getJson", "ApiClient", 16, 21),
        ("function", "buildUserAgent", "", 23, 26),
    ],
    "Badge.tsx": [("module", "", "", 1, 3), ("function", "Badge", "", 5, 13)],
    "store.go": [
        ("module", "", "", 1, 9),
        ("class", "Store", "", 11, 16),  # with its doc comment
        ("method", "Get", "Store", 18, 28),
        ("function", "New", "", 30, 33),
    ],
    "ledger.rs": [
        ("class", "Ledger", "", 1, 7),  # with its doc comment and attribute
        ("method", "transfer", "Ledger", 9, 12),
        ("method", "transfer", "Ledger", 13, 19),
        ("method", "balance", "Ledger", 21, 24),
        ("function", "parse_cents", "", 26, 30),
    ],
    "InvoiceService.java": [
        ("method", "InvoiceService", "InvoiceService", 1, 12),
        ("method", "total", "InvoiceService", 14, 16),  # cut where statements start
        ("method", "total", "InvoiceService", 17, 20),
        ("method", "total", "InvoiceService", 21, 22),
        ("class", "Line", "InvoiceService", 24, 25),
    ],
    "checksum.c": WHOLE["checksum.c"],
    "shapes.cpp": [
        ("method", "Circle", "Circle", 1, 10),
        ("method", "describe", "Circle", 11, 18),
        ("method", "area", "Circle", 20, 25),
    ],
    "OrderService.cs": [
        ("class", "OrderService", "", 1, 9),
        ("method", "Place", "OrderService", 11, 13),
        ("method", "Place", "OrderService", 14, 17),
        ("method", "Cancel", "OrderService", 19, 26),
    ],
    "inventory.rb": [
        ("method", "initialize", "Inventory.Stock", 1, 9),
        ("method", "reserve", "Inventory.Stock", 11, 16),
        ("method", "from_json", "Inventory.Stock", 18, 22),
    ],
    "UserRepository.php": [
        ("method", "__construct", "UserRepository", 1, 11),
        ("method", "findByEmail", "UserRepository", 13, 15),
        ("method", "findByEmail", "UserRepository", 16, 20),
        ("function", "normalize_email", "", 22, 25),
    ],
    "GUIDE.md": WHOLE["GUIDE.md"],
}

LANGUAGES = {
    "retry.py": "python",
    "cart.js": "javascript",
    "client.ts": "typescript",
    "Badge.tsx": "tsx",
    "store.go": "go",
    "ledger.rs": "rust",
    "InvoiceService.java": "java",
    "checksum.c": "c",
    "shapes.cpp": "cpp",
    "OrderService.cs": "csharp",
    "inventory.rb": "ruby",
    "UserRepository.php": "php",
    "GUIDE.md": "markdown",
}


def chunks_of(name: str, max_chars: int = 2500) -> tuple[list[Chunk], list[str]]:
    text = (SAMPLES / name).read_text()
    return chunk_file(name, text, language_of(name), max_chars=max_chars), text.split("\n")


def summary(chunks: list[Chunk]) -> list[tuple[str, str, str, int, int]]:
    return [(c.chunk_type, c.name, c.container, c.start_line, c.end_line) for c in chunks]


def test_every_listed_language_has_a_sample_and_a_grammar() -> None:
    assert sorted(LANGUAGES) == sorted(WHOLE) == sorted(MEMBERS)
    assert {language_of(name) for name in LANGUAGES} == set(LANGUAGES.values())
    for name, language in LANGUAGES.items():
        assert language_of(name) == language
        if language != "markdown":
            assert grammar_name(name, language) is not None, name


@pytest.mark.parametrize("name", sorted(WHOLE))
def test_small_definitions_are_one_chunk_each(name: str) -> None:
    chunks, lines = chunks_of(name)

    assert summary(chunks) == WHOLE[name]
    for chunk in chunks:
        assert chunk.content == "\n".join(lines[chunk.start_line - 1 : chunk.end_line])


@pytest.mark.parametrize("name", sorted(MEMBERS))
def test_large_classes_are_chunked_by_member_and_long_functions_cut_at_statements(name: str) -> None:
    chunks, lines = chunks_of(name, max_chars=300)

    assert summary(chunks) == MEMBERS[name]
    for chunk in chunks:
        assert len(chunk.content) <= 300, (chunk.name, len(chunk.content))
        assert chunk.content == "\n".join(lines[chunk.start_line - 1 : chunk.end_line])


@pytest.mark.parametrize("name", sorted(WHOLE))
def test_chunks_cover_the_file_in_order_without_overlap(name: str) -> None:
    for max_chars in (300, 2500):
        chunks, lines = chunks_of(name, max_chars)
        covered = [line for chunk in chunks for line in range(chunk.start_line, chunk.end_line + 1)]

        assert covered == sorted(set(covered))
        # Only blank lines are left out (between chunks and at the ends).
        missing = set(range(1, len(lines) + 1)) - set(covered)
        assert all(not lines[row - 1].strip() for row in missing), (name, sorted(missing))
