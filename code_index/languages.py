"""Which language a file is in, and the tree-sitter grammar that parses it.

Grammars come from the per-language wheels on PyPI (``tree-sitter-python`` …), pinned in
requirements.txt and loaded on first use; nothing is downloaded at run time. Languages without a
grammar here are still indexed: Markdown by headings, other text by line windows.
"""

from __future__ import annotations

import importlib
import threading
from functools import cache
from pathlib import PurePosixPath
from typing import Any

from tree_sitter import Language, Parser

# Languages chunked along their syntax tree: name → (module, function returning the grammar).
GRAMMARS: dict[str, tuple[str, str]] = {
    "python": ("tree_sitter_python", "language"),
    "javascript": ("tree_sitter_javascript", "language"),
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "tsx": ("tree_sitter_typescript", "language_tsx"),
    "go": ("tree_sitter_go", "language"),
    "rust": ("tree_sitter_rust", "language"),
    "java": ("tree_sitter_java", "language"),
    "c": ("tree_sitter_c", "language"),
    "cpp": ("tree_sitter_cpp", "language"),
    "csharp": ("tree_sitter_c_sharp", "language"),
    "ruby": ("tree_sitter_ruby", "language"),
    "php": ("tree_sitter_php", "language_php"),
}

EXTENSIONS: dict[str, str] = {
    ".py": "python", ".pyi": "python", ".pyw": "python",
    ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript",
    ".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "tsx",
    ".go": "go", ".rs": "rust", ".java": "java",
    ".c": "c", ".h": "c",
    ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".c++": "cpp", ".hh": "cpp", ".hpp": "cpp", ".hxx": "cpp",
    ".cs": "csharp",
    ".rb": "ruby", ".rake": "ruby", ".gemspec": "ruby",
    ".php": "php",
    ".md": "markdown", ".markdown": "markdown", ".mdx": "markdown",
    # Chunked by line windows.
    ".json": "json", ".yaml": "yaml", ".yml": "yaml", ".toml": "toml", ".ini": "ini", ".cfg": "ini",
    ".xml": "xml", ".html": "html", ".htm": "html", ".css": "css", ".scss": "css", ".less": "css",
    ".sh": "shell", ".bash": "shell", ".zsh": "shell", ".fish": "shell", ".ps1": "powershell",
    ".sql": "sql", ".graphql": "graphql", ".proto": "protobuf",
    ".kt": "kotlin", ".kts": "kotlin", ".swift": "swift", ".scala": "scala", ".lua": "lua", ".r": "r",
    ".dart": "dart", ".ex": "elixir", ".exs": "elixir", ".erl": "erlang", ".hs": "haskell", ".clj": "clojure",
    ".vue": "vue", ".svelte": "svelte", ".tf": "terraform",
    ".txt": "text", ".rst": "text", ".adoc": "text",
}  # fmt: skip

FILE_NAMES: dict[str, str] = {
    "Dockerfile": "dockerfile", "Makefile": "makefile", "GNUmakefile": "makefile", "Rakefile": "ruby",
    "Gemfile": "ruby", "Jenkinsfile": "groovy", "CMakeLists.txt": "cmake",
}  # fmt: skip

# A C header may hold C++ too: the C++ grammar parses both.
PARSED_AS = {"c-header": "cpp"}

TEXT = "text"
MARKDOWN = "markdown"
LANGUAGES = sorted({*EXTENSIONS.values(), *FILE_NAMES.values(), TEXT})


def language_of(path: str) -> str:
    """The language of a file, from its name: a known one, or ``text``."""
    name = PurePosixPath(path).name
    if name in FILE_NAMES:
        return FILE_NAMES[name]
    suffix = PurePosixPath(name).suffix.lower()
    return EXTENSIONS.get(suffix, TEXT)


def grammar_name(path: str, language: str) -> str | None:
    """The grammar that parses this file, if its language has one."""
    if language == "c" and path.lower().endswith(".h"):
        return PARSED_AS["c-header"]
    return language if language in GRAMMARS else None


@cache
def _language(name: str) -> Language:
    module, function = GRAMMARS[name]
    capsule: Any = getattr(importlib.import_module(module), function)()
    return Language(capsule)


_parsers = threading.local()


def parser_for(name: str) -> Parser:
    """A parser for the grammar ``name``, one per thread (parsers are not thread-safe)."""
    parsers: dict[str, Parser] = _parsers.__dict__.setdefault("by_name", {})
    if name not in parsers:
        parsers[name] = Parser(_language(name))
    return parsers[name]
