"""What screening costs on real text: false alarms and time per text.

Every text of the corpora given (LoCoMo's conversation turns, the FAQ dev set's answers and questions,
this project's synthetic rules, and the code index's sample files) goes through both screens: the
instruction finder (screening.instructions: every finding on these is a false alarm, none of them
addresses an agent) and the credential scanner (screening.secrets: none of them holds a credential,
so every finding is a false alarm too). Reports the findings, their share and the time per text.

    .venv/bin/python bench/screening.py --locomo path/to/locomo-dev.json --faq path/to/faq-dev.json \
        --json bench/results/$(date +%F)/screening.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import print_table, write_json

HERE = Path(__file__).resolve().parent
SAMPLES = HERE.parent / "tests" / "code_index" / "samples"


def corpora(locomo: str | None, faq: str | None) -> dict[str, list[tuple[str, str | None]]]:
    """name -> [(text, file name or None for prose)]."""
    found: dict[str, list[tuple[str, str | None]]] = {}
    if locomo:
        turns = [
            turn.get("text", "")
            for sample in json.loads(Path(locomo).read_text())
            for session in sample["conversation"].values()
            if isinstance(session, list)
            for turn in session
        ]
        found["locomo turns"] = [(text, None) for text in turns if text]
    if faq:
        data = json.loads(Path(faq).read_text())
        found["faq answers and questions"] = [
            (item["content"], None) for items in data["orgs"].values() for item in items
        ]
        found["faq answers and questions"] += [(question["question"], None) for question in data["questions"]]
    rules = json.loads((HERE / "data" / "rule_conflicts.json").read_text())
    pairs = json.loads((HERE / "data" / "statement_pairs.json").read_text())
    found["synthetic rules"] = [
        (text, None)
        for text in [
            *(p[key] for p in rules["pairs"] for key in ("curated", "variant", "question")),
            *rules["distractors"],
            *(text for kind in pairs.values() if isinstance(kind, list) for pair in kind for text in pair),
        ]
    ]
    found["code samples"] = [(path.read_text(errors="replace"), path.name) for path in sorted(SAMPLES.iterdir())]
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--locomo", default=None, help="locomo-dev.json")
    parser.add_argument("--faq", default=None, help="faq-dev.json")
    parser.add_argument("--json", dest="json_out", default=None)
    args = parser.parse_args()
    from screening import find_instructions, find_secrets

    find_secrets("warm = 'up1234567'")  # the scanner's one-time set-up is not a text's cost
    rows, results = [], []
    for name, texts in corpora(args.locomo, args.faq).items():
        started = time.perf_counter()
        instructions = [(text, f) for text, _ in texts if (f := find_instructions(text))]
        middle = time.perf_counter()
        credentials = [(text, f) for text, filename in texts if (f := find_secrets(text, filename=filename))]
        ended = time.perf_counter()
        result: dict[str, Any] = {
            "corpus": name,
            "texts": len(texts),
            "instruction_alarms": len(instructions),
            "credential_alarms": len(credentials),
            "instruction_ms_per_text": round((middle - started) * 1000 / len(texts), 3),
            "credential_ms_per_text": round((ended - middle) * 1000 / len(texts), 3),
            "instruction_examples": [[text[:120], f[0].excerpt] for text, f in instructions[:5]],
            "credential_examples": [[f[0].kind, f[0].line] for _, f in credentials[:5]],
        }
        results.append(result)
        rows.append(
            [name, len(texts), len(instructions), len(credentials), result["instruction_ms_per_text"],
             result["credential_ms_per_text"]]
        )  # fmt: skip
    print_table(
        "screening on text that holds no attack and no credential (every finding is a false alarm)",
        ["corpus", "texts", "instruction alarms", "credential alarms", "instructions ms/text", "credentials ms/text"],
        rows,
    )
    write_json(args.json_out, {"bench": "screening", "corpora": results})


if __name__ == "__main__":
    main()
