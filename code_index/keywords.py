"""What keyword search and the embedding model see of a chunk.

PostgreSQL's text parser reads ``self.filter`` as a host name and ``django/db/query.py`` as one
file-name token, and keeps ``getUserName`` whole: a query for "user name" or "filter" would miss
them. So the keyword vector is built from the chunk's identifiers instead of its raw text: each
identifier whole and, when it is compound, split on camelCase and snake_case; plus the path's parts
and the symbol's name and container. Queries are read the same way.
"""

from __future__ import annotations

import hashlib
import re

IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+")
# Boundaries inside an identifier: lower→Upper (getUser), UPPER→Upper+lower (HTTPServer), letter↔digit.
CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
# Words longer than this are not identifiers anyone searches for (hashes, base64, minified code).
MAX_WORD = 60


def split_identifier(identifier: str) -> list[str]:
    """``getUserName`` → get, User, Name; ``HTTPServer_v2`` → HTTP, Server, v, 2."""
    parts: list[str] = []
    for piece in identifier.split("_"):
        parts += CAMEL.findall(piece)
    return parts


def keyword_text(*texts: str) -> str:
    """The words of ``texts`` for the keyword vector: identifiers, and the parts of compound ones."""
    words: list[str] = []
    for text in texts:
        for word in IDENTIFIER.findall(text):
            if len(word) > MAX_WORD:
                continue
            words.append(word)
            parts = split_identifier(word)
            if len(parts) > 1:
                words += parts
    return " ".join(words)


def path_words(path: str) -> str:
    return " ".join(part for part in re.split(r"[/\\.\-_ ]+", path) if part)


def chunk_keywords(*, path: str, name: str, container: str, content: str) -> str:
    return keyword_text(path_words(path), name, container, content)


def embedding_text(*, path: str, chunk_type: str, name: str, container: str, content: str) -> str:
    """What is embedded: a header naming the file and the symbol, then the code.

    The model reads the first 256 tokens, so the header (path, kind, qualified name) always counts.
    """
    joiner = " > " if chunk_type == "section" else "."
    symbol = f"{container}{joiner}{name}" if container and name else name or container
    header = f"{path}: {chunk_type} {symbol}".rstrip() if symbol else path
    return f"{header}\n{content}"


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
