"""Line ranges of a file and the two steps every chunker shares: split what is too large, merge
what is tiny.

A piece is a range of whole lines (0-based rows, inclusive) with what it is (function, class…),
its name and the class it belongs to. Splitting cuts only where a new statement, paragraph or line
starts, so a part never begins mid-construct; merging joins tiny neighbours (a closing brace, an
import, a one-line getter) so that search does not return fragments.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from dataclasses import dataclass, field, replace


class ChunkType:
    FUNCTION = "function"
    METHOD = "method"
    CLASS = "class"
    MODULE = "module"
    SECTION = "section"
    WINDOW = "window"

    values = ("function", "method", "class", "module", "section", "window")


# Kinds of piece that name something (a symbol, a heading); the others are code between them.
NAMED_KINDS = frozenset({ChunkType.FUNCTION, ChunkType.METHOD, ChunkType.CLASS, ChunkType.SECTION})


class Lines:
    """A text as lines (split on "\\n" only, as tree-sitter counts rows), with prefix sums of
    their lengths so that the size of any range is one subtraction."""

    def __init__(self, text: str) -> None:
        self.lines = text.split("\n")
        self._ends = [0]
        for line in self.lines:
            self._ends.append(self._ends[-1] + len(line) + 1)

    def __len__(self) -> int:
        return len(self.lines)

    def chars(self, start: int, end: int) -> int:
        """Characters of rows ``start``..``end`` inclusive (newlines between them counted)."""
        return self._ends[end + 1] - self._ends[start] - 1

    def text(self, start: int, end: int) -> str:
        return "\n".join(self.lines[start : end + 1])

    def blank(self, row: int) -> bool:
        return not self.lines[row].strip()

    def trimmed(self, start: int, end: int) -> tuple[int, int] | None:
        """The range without its leading and trailing blank lines; None if nothing is left."""
        while start <= end and self.blank(start):
            start += 1
        while end >= start and self.blank(end):
            end -= 1
        return (start, end) if start <= end else None


@dataclass
class Piece:
    start: int
    end: int
    kind: str
    name: str = ""
    container: str = ""
    # Names of the tiny definitions merged into this piece after the first.
    also: list[str] = field(default_factory=list)
    # One of the parts of a definition too large for one chunk: never merged with another definition.
    part: bool = False

    @property
    def names(self) -> list[str]:
        return [n for n in [self.name, *self.also] if n]


def split_range(lines: Lines, start: int, end: int, boundaries: Iterable[int], max_chars: int) -> list[tuple[int, int]]:
    """Cut rows ``start``..``end`` into consecutive ranges of at most ``max_chars`` characters.

    A range ends just before one of ``boundaries`` (rows where a statement or paragraph starts)
    when one fits; otherwise at the last whole line that fits; a single line longer than
    ``max_chars`` is a range of its own (its text is kept whole).
    """
    cuts = sorted({row for row in boundaries if start < row <= end})
    # Aim at parts of even size (a little over the average, never over the maximum), so that the
    # last part is not a sliver.
    total = lines.chars(start, end)
    parts = -(-total // max_chars)
    if parts > 1:
        max_chars = min(max_chars, total * 6 // (5 * parts) + 1)
    ranges: list[tuple[int, int]] = []
    current = start
    while current <= end:
        if lines.chars(current, end) <= max_chars:
            ranges.append((current, end))
            break
        # The furthest boundary whose range before it still fits.
        index = bisect.bisect_right(cuts, current)
        best = None
        while index < len(cuts) and lines.chars(current, cuts[index] - 1) <= max_chars:
            best = cuts[index]
            index += 1
        if best is None:
            best = current + 1
            while best <= end and lines.chars(current, best) <= max_chars:
                best += 1
            best = max(best, current + 1)
        ranges.append((current, best - 1))
        current = best
    return ranges


def merge_tiny(lines: Lines, pieces: list[Piece], *, tiny_chars: int, max_chars: int) -> list[Piece]:
    """Join tiny neighbours, never past ``max_chars``.

    Code between definitions (``module`` pieces) that is tiny joins the piece before it (a closing
    brace, a trailing statement), or the one after it at the start of a level (imports before the
    first function). Consecutive tiny definitions join each other, and a tiny section (a heading
    with little under it) joins the next section: the piece keeps the first one's kind and name and
    lists the others in ``also``.
    """
    merged: list[Piece] = []
    for piece in pieces:
        size = lines.chars(piece.start, piece.end)
        if merged:
            last = merged[-1]
            fits = lines.chars(last.start, piece.end) <= max_chars
            last_tiny = lines.chars(last.start, last.end) < tiny_chars
            gap = piece.kind not in NAMED_KINDS
            last_gap = last.kind not in NAMED_KINDS
            if fits and gap and size < tiny_chars:
                merged[-1] = replace(last, end=piece.end)
                continue
            if fits and last_gap and last_tiny:
                merged[-1] = replace(piece, start=last.start)
                continue
            # A heading with (almost) nothing under it joins the section that follows.
            heading = last.kind == piece.kind == ChunkType.SECTION and last_tiny
            if fits and (heading or (size < tiny_chars and last_tiny)) and _same_kind(last, piece):
                names = [n for n in piece.names if n not in last.names]
                merged[-1] = replace(last, end=piece.end, also=[*last.also, *names])
                continue
        merged.append(piece)
    return merged


def _same_kind(first: Piece, second: Piece) -> bool:
    if first.kind not in NAMED_KINDS or first.part or second.part:
        return False
    # Sections merge across levels: a heading with nothing under it joins its first subsection.
    return first.kind == second.kind and (first.kind == ChunkType.SECTION or first.container == second.container)
