"""Chunking a file: along its syntax tree where the language has a grammar, by headings for
Markdown, by line windows otherwise; every chunk at most ``max_chars`` characters of whole lines
(a single longer line stays whole), tiny neighbours merged."""

from __future__ import annotations

from dataclasses import dataclass

from code_index.chunking.pieces import ChunkType, Lines, Piece
from code_index.chunking.specs import SPECS
from code_index.chunking.syntax import SyntaxChunker
from code_index.chunking.text import markdown_pieces, window_pieces
from code_index.languages import MARKDOWN, grammar_name, parser_for

__all__ = ["MAX_CHARS", "TINY_CHARS", "Chunk", "ChunkType", "chunk_file"]

# The peers' size: about a screen of code, and what fits the embedding model after its header.
MAX_CHARS = 2500
# Pieces under this many characters join a neighbour.
TINY_CHARS = 150


@dataclass(frozen=True)
class Chunk:
    start_line: int  # 1-based, inclusive
    end_line: int
    chunk_type: str
    name: str
    container: str
    content: str


def chunk_file(
    path: str, text: str, language: str, *, max_chars: int = MAX_CHARS, tiny_chars: int = TINY_CHARS
) -> list[Chunk]:
    """The chunks of one file's text, in order."""
    lines = Lines(text)
    grammar = grammar_name(path, language)
    if grammar is not None:
        tree = parser_for(grammar).parse(text.encode("utf-8"))
        chunker = SyntaxChunker(SPECS[grammar], lines, max_chars=max_chars, tiny_chars=tiny_chars)
        pieces = chunker.pieces(tree.root_node)
    elif language == MARKDOWN:
        pieces = markdown_pieces(lines, max_chars=max_chars, tiny_chars=tiny_chars)
    else:
        pieces = window_pieces(lines, max_chars=max_chars)
    return [_chunk(lines, piece) for piece in pieces]


def _chunk(lines: Lines, piece: Piece) -> Chunk:
    return Chunk(
        start_line=piece.start + 1,
        end_line=piece.end + 1,
        chunk_type=piece.kind,
        name=", ".join(piece.names),
        container=piece.container,
        content=lines.text(piece.start, piece.end),
    )
