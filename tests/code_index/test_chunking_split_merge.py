"""Split-then-merge: oversized definitions are cut where statements start, tiny neighbours are merged,
comments go with the definition below them; Markdown by headings, other text by line windows; and
what keyword search sees of a chunk (identifiers split on camelCase and snake_case)."""

from __future__ import annotations

import itertools

from code_index.chunking import chunk_file
from code_index.keywords import chunk_keywords, split_identifier


def test_an_oversized_function_is_cut_into_parts_at_statement_starts() -> None:
    body = "".join(
        f"    step_{n} = compute_something_long(step_{n - 1}, factor={n})  # stage {n}\n" for n in range(1, 80)
    )
    source = f"def pipeline(step_0):\n{body}    return step_79\n"

    chunks = chunk_file("pipeline.py", source, "python")

    assert len(chunks) > 1
    assert {(c.chunk_type, c.name) for c in chunks} == {("function", "pipeline")}
    assert all(len(c.content) <= 2500 for c in chunks)
    assert chunks[0].start_line == 1 and chunks[-1].end_line == 81
    for earlier, later in itertools.pairwise(chunks):
        assert later.start_line == earlier.end_line + 1
        assert later.content.startswith("    step_") or later.content.startswith("    return")
    # Parts of even size: no sliver at the end.
    assert min(len(c.content) for c in chunks) > 0.5 * max(len(c.content) for c in chunks)


def test_a_single_line_longer_than_the_limit_stays_whole() -> None:
    source = "DATA = [" + ", ".join(str(n) for n in range(1500)) + "]\n"

    chunks = chunk_file("data.py", source, "python")

    assert [(c.start_line, c.end_line) for c in chunks] == [(1, 1)]
    assert len(chunks[0].content) > 2500


def test_tiny_neighbours_are_merged_and_larger_definitions_stay_apart() -> None:
    source = (
        "class Point:\n"
        "    def x(self):\n        return self._x\n\n"
        "    def y(self):\n        return self._y\n\n"
        "    def z(self):\n        return self._z\n\n"
        "    def distance_to(self, other):\n"
        '        """The Euclidean distance to another point, in the units of the coordinates."""\n'
        "        dx, dy, dz = self.x() - other.x(), self.y() - other.y(), self.z() - other.z()\n"
        "        return (dx * dx + dy * dy + dz * dz) ** 0.5\n"
    )

    chunks = chunk_file("point.py", source, "python", max_chars=300)

    assert [(c.chunk_type, c.name, c.container, c.start_line, c.end_line) for c in chunks] == [
        ("method", "x, y, z", "Point", 1, 9),
        ("method", "distance_to", "Point", 11, 14),
    ]


def test_a_closing_brace_and_leading_comments_go_with_their_definitions() -> None:
    source = (
        "package shapes\n\n"
        "// Area of a rectangle, in square units of its sides; negative sides count as zero.\n"
        "// Used by the layout engine for every box it places on a page.\n"
        "func Area(width, height float64) float64 {\n"
        "\tif width < 0 || height < 0 {\n\t\treturn 0\n\t}\n\treturn width * height\n}\n\n"
        "// Perimeter of a rectangle, in units of its sides; negative sides count as zero.\n"
        "func Perimeter(width, height float64) float64 {\n"
        "\tif width < 0 || height < 0 {\n\t\treturn 0\n\t}\n\treturn 2 * (width + height)\n}\n"
    )

    chunks = chunk_file("shapes.go", source, "go", max_chars=400)

    assert [(c.name, c.start_line, c.end_line) for c in chunks] == [("Area", 1, 10), ("Perimeter", 12, 18)]
    assert chunks[1].content.startswith("// Perimeter of a rectangle")


def test_markdown_sections_are_split_at_paragraphs_and_tiny_ones_merged() -> None:
    paragraph = "Every deploy is announced in the release channel with its ticket and rollback plan. " * 4
    source = "# Runbook\n\n## Deploys\n\n" + "\n\n".join([paragraph] * 8) + "\n\n## Contacts\n\nOps.\n"

    chunks = chunk_file("RUNBOOK.md", source, "markdown", max_chars=1000)

    assert [c.chunk_type for c in chunks] == ["section"] * len(chunks)
    # The heading with nothing under it joined its first subsection.
    assert chunks[0].name == "Runbook, Deploys" and chunks[0].start_line == 1
    assert {c.name for c in chunks[1:-1]} == {"Deploys"}
    assert all(len(c.content) <= 1000 for c in chunks)
    assert all(c.content.startswith("Every deploy") for c in chunks[1:-1])
    assert (chunks[-1].name, chunks[-1].container) == ("Contacts", "Runbook")


def test_other_text_is_chunked_by_line_windows() -> None:
    source = "\n".join(f"setting_{n} = value-{n}" for n in range(400)) + "\n"

    chunks = chunk_file("settings.ini", source, "ini", max_chars=1000)

    assert {c.chunk_type for c in chunks} == {"window"}
    assert {c.name for c in chunks} == {""}
    assert chunks[0].start_line == 1 and chunks[-1].end_line == 400
    assert all(len(c.content) <= 1000 for c in chunks)
    assert sum(c.end_line - c.start_line + 1 for c in chunks) == 400


def test_an_empty_or_blank_file_has_no_chunks() -> None:
    assert chunk_file("empty.py", "", "python") == []
    assert chunk_file("blank.txt", "\n\n  \n", "text") == []


def test_identifiers_are_split_on_camel_case_and_snake_case() -> None:
    assert split_identifier("getUserName") == ["get", "User", "Name"]
    assert split_identifier("HTTPServerError") == ["HTTP", "Server", "Error"]
    assert split_identifier("parse_json_v2") == ["parse", "json", "v", "2"]
    assert split_identifier("plain") == ["plain"]

    words = chunk_keywords(
        path="src/auth/tokenStore.ts", name="refreshAccessToken", container="TokenStore", content="x.retryCount += 1"
    ).split()

    for word in ("src", "auth", "tokenStore", "token", "Store", "refreshAccessToken", "refresh", "Access"):
        assert word in words
    assert {"retryCount", "retry", "Count"} <= set(words)
