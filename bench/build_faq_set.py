"""Build a retrieval dev set from projects' own FAQ documents (reStructuredText), for bench/retrieval.py.

Each FAQ entry is a section whose title is the question; its body, as plain text, is the answer.
Every source becomes one organization, every answer one memory (``{"id", "content"}``), and every
question is asked in its own organization (``{"org", "question", "answer"}``): the format of the FAQ
dev set (``{"orgs": {...}, "questions": [...]}``). Answers lose their markup (roles, links,
directives, targets), keep their code as text, are at most 900 characters (cut at a word and
ended with "…"), and never include the question. An entry whose answer is under 8 words once plain
("See :ref:`topics-leaks`.") is left out: it answers nothing by itself; so is one that quotes its
question in full (two of Docutils').

Nothing is downloaded here: unpack the sources first and name their folders. The sets kept in
bench/data/ were made so (versions and licences in bench/data/README.md):

    pip download --no-binary :all: --no-deps sqlalchemy==2.1.9 scrapy==2.19.0 docutils==0.23 coverage==7.17.5
    (unpack each) and then
    python bench/build_faq_set.py --out bench/data/faq-sqlalchemy-scrapy.json \\
        --source sqlalchemy=sqlalchemy-2.1.9 --source scrapy=scrapy-2.19.0
    python bench/build_faq_set.py --out bench/data/faq-docutils-coverage.json \\
        --source docutils=docutils-0.23 --source coverage=coverage-7.17.5

Known sources (``NAME=FOLDER``): which files hold the FAQ, and which underline marks a question.
"""

from __future__ import annotations

import argparse
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MAX_CHARS = 900
MIN_WORDS = 8


@dataclass(frozen=True)
class Source:
    files: tuple[str, ...]  # globs inside the unpacked source, read in sorted order
    # The title styles of questions: an underline's character, with "^" after it when overlined too.
    styles: tuple[str, ...]
    prefix: str = ""  # stripped from titles ("Q: ")


SOURCES = {
    # doc/build/faq/index.rst is the table of contents: its only sections are the files' titles.
    # metadata_schema.rst's questions are underlined with "=" below an overlined title; the others', with "-".
    "sqlalchemy": Source(files=("doc/build/faq/[!i]*.rst",), styles=("-", "=")),
    "scrapy": Source(files=("docs/faq.rst",), styles=("-",)),
    "docutils": Source(files=("FAQ.rst",), styles=("-",)),
    "coverage": Source(files=("doc/faq.rst",), styles=(".",), prefix="Q: "),
}

_ADORNMENT = re.compile(r"^([!-/:-@\[-`{-~])\1{2,}\s*$")
# Directives whose body is text a reader needs (code, notes); every other directive is dropped whole.
_KEEP_BODY = re.compile(
    r"^\.\. (code-block|sourcecode|code|note|tip|warning|seealso|versionadded|versionchanged|topic)::"
)


# Two of Docutils' answers start by quoting the question in full: an answer never includes its question.
_RESTATED = re.compile(r"^Full question:|question in full")


@dataclass
class Entry:
    question: str
    body: list[str]


def sections(lines: list[str]) -> list[tuple[int, str, str]]:
    """(line index of the title, title, style) of every section title; the style is the underline's
    character, with "^" after it when the title is overlined too."""
    found = []
    for i in range(len(lines) - 1):
        title, under = lines[i].rstrip(), lines[i + 1].rstrip()
        match = _ADORNMENT.match(under)
        if not title.strip() or not match or _ADORNMENT.match(title) or title.startswith(" "):
            continue
        if len(under) >= len(title.strip()) and not title.startswith(".."):
            overlined = i > 0 and lines[i - 1].rstrip() == under
            found.append((i, title.strip(), match.group(1) + ("^" if overlined else "")))
    return found


def entries(text: str, source: Source) -> list[Entry]:
    """The question sections, each with its body up to the next section at its level or above."""
    lines = text.splitlines()
    titles = sections(lines)
    levels: dict[str, int] = {}
    for _, _, style in titles:
        levels.setdefault(style, len(levels))
    result = []
    for n, (start, title, style) in enumerate(titles):
        if style not in source.styles or levels[style] == 0:  # level 0: the document's own title
            continue
        end = len(lines)
        for later, _, other in titles[n + 1 :]:
            if levels[other] <= levels[style]:
                end = later
                break
        question = title.removeprefix(source.prefix).strip()
        result.append(Entry(question=plain_inline(question), body=lines[start + 2 : end]))
    return result


def _role(match: re.Match[str]) -> str:
    """A role's text as Sphinx shows it: ``~a.b.C`` as C, ``.Session`` and ``_orm.Mapper`` as the name."""
    role, target = match.group(1), match.group(2).strip()
    if role in {"rfc", "pep"}:
        return f"{role.upper()} {target}"
    if role in {"gh", "issue"}:
        return f"issue {target}"
    if target.startswith("~"):
        return target.rsplit(".", 1)[-1]
    target = target.lstrip(".")
    return target.split(".", 1)[1] if target.startswith("_") and "." in target else target


def plain_inline(text: str) -> str:
    """Inline markup as the text a reader sees."""
    literals: list[str] = []  # ``...`` kept as written, away from the rules below

    def keep(match: re.Match[str]) -> str:
        literals.append(match.group(1))
        return f"\x00{len(literals) - 1}\x00"

    text = re.sub(r"``(.+?)``", keep, text)
    text = re.sub(r"\{(print|exec|open)?sql\}|\{stop\}", "", text)  # SQLAlchemy's marks in examples
    text = re.sub(r"\[#\w*\]_", "", text)  # footnote references
    text = re.sub(r":[\w:+-]+:`([^`<]*?)\s*<[^>]*>`", r"\1", text)  # :ref:`text <target>`
    text = re.sub(r":(?:[\w+-]+:)*([\w+-]+):`([^`]*)`", _role, text)  # :meth:`.Session.commit`, :pep:`258`
    text = re.sub(r"`([^`<]*?)\s*<[^>]*>`__?", r"\1", text)  # `text <url>`_
    text = re.sub(r"`([^`]+)`_{0,2}", r"\1", text)  # `name`_, `interpreted`
    text = re.sub(r"(?<![\w/])([A-Za-z][\w.-]*)__?(?=[\s.,;:)\"']|$)", r"\1", text)  # name_ references
    text = re.sub(r"\*\*([^*]+)\*\*", r"\1", text)
    text = re.sub(r"(?<![\w*])\*([^*\s][^*]*)\*(?!\w)", r"\1", text)
    text = re.sub(r"\|([\w -]+)\|", r"\1", text)  # substitutions
    text = text.replace("\\", "")
    text = re.sub("\x00(\\d+)\x00", lambda m: literals[int(m.group(1))], text)
    return text.strip()


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def plain_body(body: list[str]) -> str:
    """A section body as one paragraph of plain text: markup removed, code kept as text."""
    kept: list[str] = []
    skipping_from: int | None = None  # indent of a dropped directive: its indented body goes too
    for line in body:
        stripped = line.strip()
        if skipping_from is not None:
            if not stripped or _indent(line) > skipping_from:
                continue
            skipping_from = None
        if _ADORNMENT.match(stripped) or stripped.startswith("__ "):  # an underline; an anonymous target
            continue
        if stripped.startswith(".. "):
            if _KEEP_BODY.match(stripped):
                label = re.match(r"^\.\. (note|tip|warning|seealso)::\s*(.*)$", stripped)
                if label and label.group(2):
                    kept.append(label.group(2))
                continue
            skipping_from = _indent(line)  # comments, targets, images, contents, skip markers...
            continue
        if stripped in {".."}:
            skipping_from = _indent(line)
            continue
        if re.match(r"^:[\w -]+:(\s|$)", stripped) and _indent(line) > 0:
            continue  # a directive's option (":local:", ":class: faq")
        kept.append(stripped)
    text = " ".join(part for part in kept if part)
    text = re.sub(r"\s*::(?=\s|$)", ":", text)  # "For example::" introduces a literal block
    text = plain_inline(text)
    return re.sub(r"\s+", " ", text).strip()


def clip(text: str) -> str:
    if len(text) <= MAX_CHARS:
        return text
    cut = text[: MAX_CHARS - 1].rsplit(" ", 1)[0].rstrip(" ,;:")
    return cut + " …"


def build(named: list[tuple[str, Path]]) -> tuple[dict[str, Any], dict[str, int]]:
    orgs: dict[str, list[dict[str, str]]] = {}
    questions: list[dict[str, str]] = []
    dropped: dict[str, int] = {}
    for name, folder in named:
        source = SOURCES[name]
        files = sorted(path for pattern in source.files for path in folder.glob(pattern))
        if not files:
            raise SystemExit(f"{name}: none of {', '.join(source.files)} under {folder}")
        memories: list[dict[str, str]] = []
        dropped[name] = 0
        for path in files:
            for entry in entries(path.read_text(encoding="utf-8"), source):
                answer = plain_body(entry.body)
                if len(answer.split()) < MIN_WORDS or _RESTATED.search(answer):
                    dropped[name] += 1
                    continue
                memory_id = f"{name}-{len(memories):03d}"
                memories.append({"id": memory_id, "content": clip(answer)})
                questions.append({"org": name, "question": entry.question, "answer": memory_id})
        orgs[name] = memories
    return {"orgs": orgs, "questions": questions}, dropped


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--source",
        action="append",
        required=True,
        metavar="NAME=FOLDER",
        help=f"An unpacked source distribution; NAME is one of {', '.join(SOURCES)}.",
    )
    parser.add_argument("--out", required=True, help="The JSON file to write.")
    args = parser.parse_args()
    named = []
    for item in args.source:
        name, _, folder = item.partition("=")
        if name not in SOURCES or not folder:
            parser.error(f"--source {item}: give NAME=FOLDER with NAME one of {', '.join(SOURCES)}")
        named.append((name, Path(folder)))
    data, dropped = build(named)
    Path(args.out).write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    for name, memories in data["orgs"].items():
        print(f"{name}: {len(memories)} pairs ({dropped[name]} entries under {MIN_WORDS} words left out)")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
