"""What `bench/locomo.py --fit` prints: each fold's coefficients, the floor sweep, the final models."""

from __future__ import annotations

from typing import Any

from bench._common import print_table


def _model_code(name: str, model: Any) -> str:
    weights = ", ".join(f'"{k}": {v:.4f}' for k, v in model.weights.items())
    return (
        f"{name} = Model(\n    weights={{{weights}}},\n    bias={model.bias:.4f},\n    scale={model.scale:.4f},\n"
        f"    names_unknown={model.names_unknown:.4f},\n"
        f"    offset={model.offset:.4f},\n)"
    )


def report(
    folds: dict[int, dict[str, Any]], final: dict[str, Any], sweep: dict[float, Any], queries: list[Any]
) -> dict[str, Any]:
    names = list(final["hybrid"].weights)
    rows = [
        [f"fold {held}", *[round(m["hybrid"].weights[n], 2) for n in names], round(m["hybrid"].bias, 2)]
        for held, m in folds.items()
    ]
    rows.append(["all", *[round(final["hybrid"].weights[n], 2) for n in names], round(final["hybrid"].bias, 2)])
    print_table("Ranker coefficients (hybrid), per held-out conversation", ["", *names, "bias"], rows)
    cal = [
        [
            f"fold {held}",
            round(m["hybrid"].scale, 3),
            round(m["hybrid"].names_unknown, 3),
            round(m["hybrid"].offset, 3),
        ]
        for held, m in folds.items()
    ]
    print_table("Calibration (hybrid)", ["", "scale", "names_unknown", "offset"], cal)
    print_table(
        "Floor sweep, leave-one-conversation-out (offline, on the candidates' features; top 10)",
        ["floor", "R@10", "results kept", "precision", "rejected"],
        [[f, v["r_at_k"], v["results"], v["precision"], v["rejected"]] for f, v in sweep.items()],
    )
    print("\n# Paste into memories/search/model.py:")
    for name in ("hybrid", "vector", "keyword"):
        print(_model_code(name.upper(), final[name]))
    return {
        "sweep": {str(k): v for k, v in sweep.items()},
        "final": {k: vars(v) for k, v in final.items()},
        "folds": {str(h): {k: vars(v) for k, v in m.items()} for h, m in folds.items()},
        "queries": len(queries),
    }
