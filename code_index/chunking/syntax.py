"""The syntax chunker: a file's definitions as chunks, found in its tree-sitter tree.

Each level (a file, a class body, a namespace) is read child by child: definitions become pieces,
the code between them becomes ``module`` pieces, and comments right above a definition (doc
comments, Rust attributes) go with it. A definition that fits in ``max_chars`` is one chunk; a
larger class is chunked member by member (its header and fields as a ``class`` chunk, its methods
as ``method`` chunks); a larger function is cut where its statements start. Then tiny neighbours
are merged (pieces.merge_tiny).
"""

from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Node

from code_index.chunking.pieces import ChunkType, Lines, Piece, merge_tiny, split_range
from code_index.chunking.specs import Spec, body_of, field_name

FUNCTION, CLASS, NAMESPACE = "function", "class", "namespace"
# How deep under a function's body statement boundaries are looked for when it must be cut.
BOUNDARY_DEPTH = 4


@dataclass
class _Definition:
    kind: str  # FUNCTION, CLASS or NAMESPACE
    node: Node  # the definition itself (inside any wrapper)
    start: int  # first row, its leading comments and wrapper included
    end: int


def _end_row(node: Node) -> int:
    # A node ending at column 0 ends with the previous line's newline.
    row, column = node.end_point
    return row - 1 if column == 0 and row > node.start_point[0] else row


class SyntaxChunker:
    def __init__(self, spec: Spec, lines: Lines, *, max_chars: int, tiny_chars: int) -> None:
        self.spec = spec
        self.lines = lines
        self.max_chars = max_chars
        self.tiny_chars = tiny_chars

    def pieces(self, root: Node) -> list[Piece]:
        return self._level(root, 0, len(self.lines) - 1, container="", in_class=False)

    # --- one level ---------------------------------------------------------------------------------

    def _level(self, body: Node, start: int, end: int, *, container: str, in_class: bool) -> list[Piece]:
        """Pieces covering rows ``start``..``end``, whose definitions are children of ``body``."""
        definitions = self._definitions(body, start)
        child_rows = [child.start_point[0] for child in body.named_children]
        pieces: list[Piece] = []
        cursor = start
        for definition in definitions:
            pieces += self._gap(cursor, definition.start - 1, child_rows, container)
            pieces += self._definition_pieces(definition, container=container, in_class=in_class)
            cursor = definition.end + 1
        pieces += self._gap(cursor, end, child_rows, container)
        return merge_tiny(self.lines, pieces, tiny_chars=self.tiny_chars, max_chars=self.max_chars)

    def _definitions(self, body: Node, start: int) -> list[_Definition]:
        found: list[_Definition] = []
        comment_start: int | None = None
        comment_end = -1
        previous_end = start - 1
        for child in body.named_children:
            if child.type in self.spec.comments:
                if comment_start is None or child.start_point[0] > comment_end + 1:
                    comment_start = child.start_point[0]
                comment_end = _end_row(child)
                continue
            kind_and_node = self._classify(child)
            if kind_and_node is not None:
                first = child.start_point[0]
                if comment_start is not None and comment_end >= first - 1:
                    first = comment_start
                first = max(first, previous_end + 1)
                last = max(_end_row(child), first)
                found.append(_Definition(kind_and_node[0], kind_and_node[1], first, last))
                previous_end = last
            comment_start = None
        return found

    def _classify(self, node: Node) -> tuple[str, Node] | None:
        """What a child of a level defines, looking inside wrappers (export, decorators, templates)."""
        spec = self.spec
        if node.type in spec.wrappers:
            inner = (self._classify(child) for child in node.named_children)
            return next((found for found in inner if found is not None), None)
        kind = None
        if node.type in spec.functions or (node.type in spec.variables and self._holds_function(node)):
            kind = FUNCTION
        elif node.type in spec.classes:
            kind = CLASS
        elif node.type in spec.namespaces and body_of(node) is not None:
            kind = NAMESPACE
        elif node.type == "type_definition" and any(c.type in spec.classes for c in node.named_children):
            kind = CLASS  # C: typedef struct { … } Name;
        return (kind, node) if kind is not None else None

    def _holds_function(self, node: Node) -> bool:
        values = self.spec.function_values
        if node.type == "expression_statement":
            assignment = node.named_children[0] if node.named_children else None
            right = assignment.child_by_field_name("right") if assignment is not None else None
            return (
                assignment is not None
                and assignment.type == "assignment_expression"
                and right is not None
                and (right.type in values)
            )
        return any(
            (value := declarator.child_by_field_name("value")) is not None and value.type in values
            for declarator in node.named_children
            if declarator.type == "variable_declarator"
        )

    # --- pieces --------------------------------------------------------------------------------------

    def _gap(self, start: int, end: int, child_rows: list[int], container: str) -> list[Piece]:
        """The code between definitions, cut where its statements or paragraphs start if too large."""
        trimmed = self.lines.trimmed(start, end) if start <= end else None
        if trimmed is None:
            return []
        first, last = trimmed
        paragraphs = [row + 1 for row in range(first, last) if self.lines.blank(row)]
        ranges = split_range(self.lines, first, last, [*child_rows, *paragraphs], self.max_chars)
        return [Piece(s, e, ChunkType.MODULE, container=container) for s, e in ranges]

    def _name(self, node: Node) -> str:
        return (self.spec.name_of or field_name)(node)

    def _definition_pieces(self, definition: _Definition, *, container: str, in_class: bool) -> list[Piece]:
        node, start, end = definition.node, definition.start, definition.end
        name = self._name(node)
        fits = self.lines.chars(start, end) <= self.max_chars
        if definition.kind == NAMESPACE:
            body = body_of(node)  # classified as a namespace only with a body
            return self._level(body, start, end, container=container, in_class=False) if body else []
        if definition.kind == CLASS:
            body = body_of(node)
            if fits or body is None:
                return [Piece(start, end, ChunkType.CLASS, name, container)]
            inner = f"{container}.{name}" if container else name
            members = self._level(body, start, end, container=inner, in_class=True)
            # What is not a member (the header, fields, the closing brace) is the class's own chunk.
            return [
                Piece(p.start, p.end, ChunkType.CLASS, name, container) if p.kind == ChunkType.MODULE else p
                for p in members
            ]
        owner = self.spec.owner_of(node)
        method = in_class or bool(owner) or node.type in self.spec.methods
        kind = ChunkType.METHOD if method else ChunkType.FUNCTION
        where = owner or container
        if fits:
            return [Piece(start, end, kind, name, where)]
        body = body_of(node)
        rows = _boundaries(body, BOUNDARY_DEPTH, self.lines, self.max_chars) if body is not None else []
        paragraphs = [row + 1 for row in range(start, end) if self.lines.blank(row)]
        ranges = split_range(self.lines, start, end, rows or paragraphs, self.max_chars)
        return [Piece(s, e, kind, name, where, part=len(ranges) > 1) for s, e in ranges]


def _boundaries(node: Node, depth: int, lines: Lines, room: int) -> list[int]:
    """Rows where a statement under ``node`` starts: its children's, and inside those too large to
    share a part with others (over half of ``room``), theirs, down to ``depth`` levels. Cuts fall
    between the outermost statements whenever they can."""
    rows: list[int] = []
    for child in node.named_children:
        rows.append(child.start_point[0])
        if depth > 1 and lines.chars(child.start_point[0], _end_row(child)) > room // 2:
            rows += _boundaries(child, depth - 1, lines, room)
    return rows
