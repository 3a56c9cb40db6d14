"""Chunkers for files without a grammar: Markdown by its headings, anything else by line windows."""

from __future__ import annotations

import re

from code_index.chunking.pieces import ChunkType, Lines, Piece, merge_tiny, split_range

ATX_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t#]*$")
SETEXT_UNDERLINE = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def _headings(lines: Lines) -> list[tuple[int, int, str]]:
    """(row, level, title) of every heading outside fenced code blocks."""
    found: list[tuple[int, int, str]] = []
    fence: str | None = None
    for row, line in enumerate(lines.lines):
        opening = FENCE.match(line)
        if opening:
            marker = opening.group(1)
            if fence is None:
                fence = marker[0] * 3
            elif marker.startswith(fence):
                fence = None
            continue
        if fence is not None:
            continue
        atx = ATX_HEADING.match(line)
        if atx:
            found.append((row, len(atx.group(1)), (atx.group(2) or "").strip()))
            continue
        underline = SETEXT_UNDERLINE.match(line)
        previous = lines.lines[row - 1] if row else ""
        if underline and row and previous.strip() and not ATX_HEADING.match(previous):
            if found and found[-1][0] == row - 1:
                continue
            found.append((row - 1, 1 if underline.group(1)[0] == "=" else 2, previous.strip()))
    return found


def markdown_pieces(lines: Lines, *, max_chars: int, tiny_chars: int) -> list[Piece]:
    """One ``section`` per heading (its name the heading, its container the headings above it),
    cut at paragraphs when too large; text before the first heading is a ``module`` piece."""
    headings = _headings(lines)
    pieces: list[Piece] = []
    starts = [row for row, _, _ in headings]
    bounds = [*starts, len(lines)]
    if not starts or starts[0] > 0:
        pieces += _windows(lines, 0, (starts[0] if starts else len(lines)) - 1, ChunkType.MODULE, max_chars=max_chars)
    parents: list[tuple[int, str]] = []
    for index, (row, level, title) in enumerate(headings):
        while parents and parents[-1][0] >= level:
            parents.pop()
        container = " > ".join(name for _, name in parents)
        pieces += _windows(
            lines, row, bounds[index + 1] - 1, ChunkType.SECTION, name=title, container=container, max_chars=max_chars
        )
        parents.append((level, title))
    return merge_tiny(lines, pieces, tiny_chars=tiny_chars, max_chars=max_chars)


def window_pieces(lines: Lines, *, max_chars: int) -> list[Piece]:
    """Windows of whole lines up to ``max_chars``, ending at blank lines where they can."""
    return _windows(lines, 0, len(lines) - 1, ChunkType.WINDOW, max_chars=max_chars)


def _windows(
    lines: Lines, start: int, end: int, kind: str, *, name: str = "", container: str = "", max_chars: int
) -> list[Piece]:
    trimmed = lines.trimmed(start, end) if start <= end else None
    if trimmed is None:
        return []
    first, last = trimmed
    paragraphs = [row + 1 for row in range(first, last) if lines.blank(row)]
    return [Piece(s, e, kind, name, container) for s, e in split_range(lines, first, last, paragraphs, max_chars)]
