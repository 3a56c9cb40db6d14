"""How well a write's contradiction check tells contradictions from the rest (memories.similarity).

Labelled pairs, embedded with the platform's model and classified by the same rules as writes and
the consolidation worker, at a grid of CONSOLIDATION_CONFLICT (similarity) and CONSOLIDATION_CONFLICT_FRAME
(the share of words that line up), and with the rule before it (contradiction only from
CONSOLIDATION_CONTRADICTION, 0.94):

- contradictions: bench/data/rule_conflicts.json, a rule and an agent's variant with one value,
  name or negation changed (found: the higher the better);
- different subjects: bench/data/statement_pairs.json, two statements about different things in the
  same words (proposed: a curator's wasted look; the lower the better);
- paraphrases: the same statement reworded (proposed as a contradiction: wrong; the lower the better).

    .venv/bin/python bench/contradictions.py --json bench/results/$(date +%F)/contradictions.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import print_table, write_json

DATA = Path(__file__).resolve().parent / "data"
CONFLICTS = [0.6, 0.65, 0.7, 0.75, 0.8]
FRAMES = [0.6, 0.7, 0.8]


def _pairs() -> dict[str, list[tuple[str, str]]]:
    rules = json.loads((DATA / "rule_conflicts.json").read_text())["pairs"]
    others = json.loads((DATA / "statement_pairs.json").read_text())
    return {
        "contradictions": [(pair["curated"], pair["variant"]) for pair in rules],
        "different subjects": [tuple(pair) for pair in others["different_subjects"]],  # type: ignore[misc]
        "paraphrases": [tuple(pair) for pair in others["paraphrases"]],  # type: ignore[misc]
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", dest="json_out", default=None)
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_platform.settings")
    import django

    django.setup()
    import numpy as np
    from django.test import override_settings

    from memories.embedding_pipeline import embed_texts, embedding_text
    from memories.models import Memory
    from memories.similarity import MatchKind, classify
    from memories.validation import derive_title

    sets = _pairs()
    texts = sorted({text for pairs in sets.values() for pair in pairs for text in pair})
    vectors = embed_texts([embedding_text(derive_title(text), text) for text in texts])
    assert vectors is not None, "the embedding model is unavailable"
    by_text = {text: np.asarray(vector) for text, vector in zip(texts, vectors, strict=True)}

    def contradiction_share(pairs: list[tuple[str, str]]) -> float:
        found = 0
        for first, second in pairs:
            similarity = float(by_text[first] @ by_text[second])
            a = Memory(current_content=first, memory_type="fact")
            b = Memory(current_content=second, memory_type="fact")
            match = classify(a, b, similarity)
            found += match is not None and match.kind == MatchKind.CONTRADICTION
        return round(found / len(pairs), 3)

    rows, results = [], []
    grid = [("before (0.94 only)", 1.01, 1.01)] + [(f"{c} / {f}", c, f) for c in CONFLICTS for f in FRAMES]
    for label, conflict, frame in grid:
        with override_settings(CONSOLIDATION_CONFLICT=conflict, CONSOLIDATION_CONFLICT_FRAME=frame):
            shares = {name: contradiction_share(pairs) for name, pairs in sets.items()}
        results.append({"rule": label, "conflict": conflict, "frame": frame, **shares})
        rows.append([label, shares["contradictions"], shares["different subjects"], shares["paraphrases"]])
    similarities: dict[str, Any] = {
        name: sorted(round(float(by_text[a] @ by_text[b]), 3) for a, b in pairs) for name, pairs in sets.items()
    }
    print_table(
        "share of pairs classified as contradictions (conflict similarity / frame)",
        ["rule", "contradictions (found)", "different subjects (false alarms)", "paraphrases (wrong)"],
        rows,
    )
    write_json(args.json_out, {"bench": "contradictions", "grid": results, "similarities": similarities})


if __name__ == "__main__":
    main()
