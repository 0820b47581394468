"""The audit's forest figure (``audit_forest``): every comparison's estimate with its interval
against its claim's margins, coloured by verdict, one row per comparison, grouped by claim.

The ratio axis is logarithmic (a ratio of 0.5 and one of 2 are equally far from 1). Per row, the
claim's claimed region is shaded green and its refuting region red, so a reader sees at once
whether the interval lies inside the claimed region (reproduced), inside the refuting one (the
opposite), outside the claimed one (no effect of the claimed size) or across a margin
(inconclusive). Drawn from the audit JSON alone (``docs/findings/audit.json`` or
``results/audit.json``); a comparison without an interval shows its estimate only.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

#: verdict -> colour of the estimate and interval
VERDICT_COLOURS = {
    "reproduced": "tab:green",
    "not reproduced": "tab:red",
    "inconclusive": "tab:gray",
    "not evaluated": "lightgray",
}
CLAIMED_SHADE, REFUTING_SHADE = "#d9f2d9", "#f7d4d4"


def claim_regions(claim: Mapping[str, Any]) -> tuple[list[tuple[float, float]], list[tuple[float, float]]]:
    """The claimed and refuting regions of the claim's effect as intervals on (0, inf)."""
    kind, th, inf = claim["kind"], claim["thresholds"], math.inf
    if kind in ("lowest", "easier"):
        m = th["min_relative_effect"]
        return [(0.0, 1.0 - m)], [(1.0 / (1.0 - m), inf)]
    if kind in ("among_fastest", "best_parameter"):
        d = th["max_excess_over_best"]
        return [(0.0, 1.0 + d)], [(1.0 + d, inf)]
    if kind == "similar":
        lo, hi = th["lower_ratio"], th["upper_ratio"]
        return [(lo, hi)], [(0.0, lo), (hi, inf)]
    if kind == "greater":
        r = th["min_ratio"]
        return [(r, inf)], [(0.0, th.get("refuted_below", r))]
    if kind == "sublinear":
        return [(0.0, th["max_slope"])], [(th.get("refuted_above", 1.0), inf)]
    if kind == "contrast":
        c = th["min_factor"]
        if claim["direction"] == "less":
            return [(0.0, 1.0 / c)], [(c, inf)]
        return [(c, inf)], [(0.0, 1.0 / c)]
    raise ValueError(f"claim {claim.get('id')!r}: kind {kind!r} has no regions to draw")


def forest_rows(audit: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One row per comparison with a finite positive estimate: claim, label, estimate, interval, verdict."""
    rows = []
    for claim in audit["claims"]:
        claimed, refuting = claim_regions(claim)
        for exp in claim["experiments"]:
            for c in exp["comparisons"]:
                effect = c.get("effect")
                effect = float(effect) if effect is not None else math.nan
                if not (math.isfinite(effect) and effect > 0.0):
                    continue
                low, high = c.get("ci_low"), c.get("ci_high")
                rows.append({
                    "claim": claim["id"], "label": f"{exp['experiment']}: {c.get('label') or c['a']}",
                    "effect": effect, "low": None if low is None else float(low),
                    "high": None if high is None else float(high), "verdict": c["verdict"],
                    "category": c.get("category", ""), "claimed": claimed, "refuting": refuting,
                })  # fmt: skip
    return rows


def audit_forest(audit: Mapping[str, Any] | Path | str, out_stem: Path | str) -> list[Path]:
    """Draw the forest figure of an audit (JSON data or its path) to ``<out_stem>.pdf`` and ``.png``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if not isinstance(audit, Mapping):
        audit = json.loads(Path(audit).read_text())
    rows = forest_rows(audit)
    if not rows:
        raise ValueError("the audit has no comparison with an estimate to draw")
    values = [v for r in rows for v in (r["effect"], r["low"], r["high"]) if v and math.isfinite(v) and v > 0]
    xmin, xmax = min(values) / 1.5, max(values) * 1.5
    fig, ax = plt.subplots(figsize=(10, 0.22 * len(rows) + 1.5))
    labels, claim_starts = [], []
    for y, r in enumerate(rows):
        if y == 0 or rows[y - 1]["claim"] != r["claim"]:
            claim_starts.append((y, r["claim"]))
        for regions, shade in ((r["claimed"], CLAIMED_SHADE), (r["refuting"], REFUTING_SHADE)):
            for lo, hi in regions:
                ax.fill_betweenx([y - 0.5, y + 0.5], max(lo, xmin), min(hi, xmax), color=shade, linewidth=0)
        colour = VERDICT_COLOURS.get(r["verdict"], "k")
        if r["low"] is not None and r["high"] is not None:
            lo = max(r["low"], xmin) if r["low"] > 0 else xmin
            hi = min(r["high"], xmax) if math.isfinite(r["high"]) else xmax
            ax.plot([lo, hi], [y, y], color=colour, linewidth=1.6)
        ax.plot([r["effect"]], [y], "o", color=colour, markersize=4)
        labels.append(r["label"])
    for y, claim in claim_starts:
        ax.axhline(y - 0.5, color="k", linewidth=0.6)
        ax.text(1.01, y - 0.3, claim, transform=ax.get_yaxis_transform(), fontsize=7, va="top", weight="bold")
    ax.set_xscale("log")
    ax.set_xlim(xmin, xmax)
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels(labels, fontsize=6)
    ax.axvline(1.0, color="k", linewidth=0.5, linestyle=":")
    ax.set_xlabel("estimate (ratio of means, ratio of ratios, or mean slope) with its interval; log scale")
    handles = [plt.Line2D([], [], color=c, marker="o", label=v) for v, c in VERDICT_COLOURS.items()]
    handles += [
        plt.Rectangle((0, 0), 1, 1, color=CLAIMED_SHADE, label="claimed region"),
        plt.Rectangle((0, 0), 1, 1, color=REFUTING_SHADE, label="refuting region"),
    ]
    ax.legend(handles=handles, fontsize=7, loc="lower left", bbox_to_anchor=(0.0, 1.0), ncol=6, frameon=False)
    fig.tight_layout()
    stem = Path(out_stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    paths = [stem.with_suffix(".pdf"), stem.with_suffix(".png")]
    for path in paths:
        fig.savefig(path, dpi=120)
    plt.close(fig)
    return paths


def claims_in(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """The claims the rows belong to, in order."""
    return list(dict.fromkeys(r["claim"] for r in rows))
