"""Could the memory-entity graph rank better? How often a question names something its answer names.

Every memory of a set is read for the names it mentions (knowledge.names, as a write does) and so
is every question. A ranking signal from the graph (whether a memory mentions what the question
names, or something mentioned beside it: a walk from the question's names) can only move a question
that names something. Reported per set and category (LoCoMo) or kind (the agents' set):

- **naming**: the share of questions that name anything (LoCoMo: anything but its two speakers,
  whom every turn names);
- **answer names it**: among the answers (evidence turns) of those questions, the share that
  mention one of the question's names;
- **base rate**: the share of the organization's memories that mention one (how little the signal
  narrows);
- **reach**: naming x answer-names-it, the most of a category's questions such a signal could help.

No database and no model: it reads the sets' files.

    python bench/graph_signal.py --locomo /work/shared/data/locomo/locomo-dev.json \\
        --faq-dev /work/shared/data/faq-dev/faq-dev.json --json bench/results/$(date +%F)/graph-signal.json
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import print_table, write_json

DEFAULT_SETS = [
    "bench/data/faq-sqlalchemy-scrapy.json",
    "bench/data/faq-docutils-coverage.json",
    "bench/data/agent-questions.json",
]
LOCOMO_CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}


class Tally:
    def __init__(self) -> None:
        self.questions = 0
        self.naming = 0
        self.answers = 0
        self.answers_naming = 0
        self.base: list[float] = []

    def add(self, asked: set[str], answers: list[set[str]], memories: list[set[str]]) -> None:
        self.questions += 1
        if not asked:
            return
        self.naming += 1
        self.answers += len(answers)
        self.answers_naming += sum(1 for names in answers if names & asked)
        self.base.append(sum(1 for names in memories if names & asked) / max(len(memories), 1))

    def row(self) -> dict[str, Any]:
        naming = self.naming / max(self.questions, 1)
        answered = self.answers_naming / max(self.answers, 1)
        return {
            "questions": self.questions,
            "naming": round(naming, 3),
            "answer_names_it": round(answered, 3),
            "base_rate": round(sum(self.base) / max(len(self.base), 1), 4),
            "reach": round(naming * answered, 3),
        }


def _names(text: str) -> set[str]:
    from knowledge.names import names_in

    return {found.key for found in names_in(text)}


def locomo(path: Path) -> dict[str, Tally]:
    tallies: dict[str, Tally] = defaultdict(Tally)
    for conversation in json.loads(path.read_text()):
        talk = conversation["conversation"]
        speakers = {talk["speaker_a"].casefold(), talk["speaker_b"].casefold()}
        turns: dict[str, set[str]] = {}
        for key, session in talk.items():
            if re.fullmatch(r"session_\d+", key):
                for turn in session:
                    photo = f" [shares a photo: {turn['blip_caption']}]" if turn.get("blip_caption") else ""
                    turns[turn["dia_id"]] = _names(f"{turn['speaker']}: {turn['text']}{photo}") - speakers
        memories = list(turns.values())
        for qa in conversation["qa"]:
            category = LOCOMO_CATEGORIES.get(qa["category"])
            if category is None:
                continue
            answers = [turns[e] for e in qa.get("evidence", []) if e in turns]
            asked = _names(qa["question"]) - speakers
            for name in (category, "all"):
                tallies[name].add(asked, answers, memories)
    return tallies


def dev_set(path: Path) -> dict[str, Tally]:
    data = json.loads(path.read_text())
    tallies: dict[str, Tally] = defaultdict(Tally)
    names = {org: {item["id"]: _names(item["content"]) for item in items} for org, items in data["orgs"].items()}
    for question in data["questions"]:
        own = names[question["org"]]
        asked = _names(question["question"])
        for name in {"all", question.get("kind", "all")}:
            tallies[name].add(asked, [own[question["answer"]]], list(own.values()))
    return tallies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", nargs="*", default=DEFAULT_SETS)
    parser.add_argument("--faq-dev", default=None, help="The FAQ dev set's path (faq-dev.json).")
    parser.add_argument("--locomo", default=None, help="LoCoMo's dev split (locomo-dev.json).")
    parser.add_argument("--json", dest="json_out", default=None)
    args = parser.parse_args()

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_platform.settings")
    import django

    django.setup()  # knowledge.names reads no model, but its package is a Django app's
    result: dict[str, dict[str, Any]] = {}
    paths = [Path(p) for p in [*args.sets, *([args.faq_dev] if args.faq_dev else [])]]
    for path in paths:
        result[path.stem] = {name: tally.row() for name, tally in sorted(dev_set(path).items())}
    if args.locomo:
        result["locomo"] = {name: tally.row() for name, tally in sorted(locomo(Path(args.locomo)).items())}
    rows = [[s, part, *row.values()] for s, parts in result.items() for part, row in parts.items()]
    header = ["set", "part", "questions", "naming", "answer names it", "base rate", "reach"]
    print_table("What questions name, and whether their answers name it too", header, rows)
    write_json(args.json_out, {"benchmark": "graph_signal", "sets": result})


if __name__ == "__main__":
    main()
