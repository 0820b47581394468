"""The verdicts of a shipped audit JSON recomputed with the current rules, from its per-seed values alone.

    PYTHONPATH=src python benchmarks/audit_reverdict.py docs/findings/audit.json

Every pairwise and slope comparison is rebuilt from its recorded per-seed values (``values_a``,
``values_b``) with the current claims file, tests and verdict rules (``compare_samples``,
``slope_comparison``, ``conclude``). Contrasts are rebuilt from the per-seed final regrets of the
same settings recorded in other claims' comparisons (an audit of format 2 has none on contrasts);
the average-regret reading of ``himmelblau-easier`` from the normalized regrets times each
objective's ``regret_scale``. Prints one line per claim: before, after, and the comparisons'
categories; a claim that cannot be rebuilt from the JSON says why.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping
from typing import Any

from vhct.reporting.audit.checks import Comparison, compare_samples, contrast_comparison, slope_comparison
from vhct.reporting.audit.claims import load_claims
from vhct.reporting.audit.evaluate import CLAIM_FIELDS, conclude, reading_flips, regret_scale
from vhct.reporting.audit.records import ClaimVerdict
from vhct.reporting.forest import draw_forest, forest_rows


def _values(record: Mapping[str, Any], key: str) -> dict[int, float]:
    return {int(k): float(v) for k, v in record[key].items()}


def sample_index(audit: Mapping[str, Any]) -> dict[tuple[str, str, str, str], dict[int, float]]:
    """(statistic, experiment, setting, round-kind) -> per-seed values, from every pairwise comparison."""
    out: dict[tuple[str, str, str, str], dict[int, float]] = {}
    for claim in audit["claims"]:
        for exp in claim["experiments"]:
            for c in exp["comparisons"]:
                if c.get("b", "-") == "-" or not c.get("values_a") or " / " in exp["experiment"]:
                    continue
                at = "final" if not c.get("early") else f"t{c['round']}"
                out[(claim["statistic"], exp["experiment"], c["a"], at)] = _values(c, "values_a")
                out[(claim["statistic"], exp["experiment"], c["b"], at)] = _values(c, "values_b")
    return out


def rebuild(claim, old, index, scales) -> list[tuple[str, list[Comparison] | str]] | str:
    """The claim's parts rebuilt from the JSON, or why they cannot be."""
    parts: list[tuple[str, list[Comparison] | str]] = []
    if claim.kind == "contrast":
        a, b = claim.target, claim.others[0]
        for first, second in claim.pairs:
            name = f"{first} / {second}"
            got = [index.get(("cumulative_regret", e, s, "final")) for e in (first, second) for s in (a, b)]
            if any(g is None for g in got):
                return f"per-seed values of {a}/{b} on {name} not in the JSON"
            base = Comparison(name, a, b, effect_name=f"ratio of ratios {a}/{b}")
            parts.append((name, [contrast_comparison(claim, base, *got)]))
        return parts
    by_exp = {e["experiment"]: e for e in old["experiments"]} if old else {}
    for exp_name, exp in by_exp.items():
        if exp["verdict"] == "not evaluated" and not exp["comparisons"]:
            parts.append((exp_name, exp["reason"]))
            continue
        comps = []
        for c in exp["comparisons"]:
            rec = Comparison.from_json(c)
            if rec.verdict == "not evaluated" or not rec.values_a:
                comps.append(rec)
                continue
            base = Comparison(rec.experiment, rec.a, rec.b, round=rec.round, horizon=rec.horizon,
                              reference=rec.reference)  # fmt: skip
            if claim.kind == "sublinear":
                comps.append(slope_comparison(claim, base, _values(c, "values_a")))
                continue
            sa, sb = _values(c, "values_a"), _values(c, "values_b")
            rule = claim.model_copy(update={"kind": "lowest"}) if claim.kind == "easier" else claim
            comps.append(compare_samples(rule, rec.experiment, rec.a, rec.b, sa, sb, rec.round, rec.horizon,
                                         rec.reference))  # fmt: skip
        parts.append((exp_name, comps))
    return parts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("audit", help="an audit JSON (format 2)")
    parser.add_argument("--out", default="", help="write the recomputed claims as an audit JSON here")
    parser.add_argument("--forest", default="", help="draw the forest figure of the result (path stem)")
    args = parser.parse_args()
    with open(args.audit) as f:
        audit = json.load(f)
    claims = load_claims()
    old_by_id = {c["id"]: c for c in audit["claims"]}
    index = sample_index(audit)
    context = audit["context"]["experiments"]
    results = []
    for claim in claims.claims:
        old = old_by_id.get(claim.id)
        if claim.id == "himmelblau-easier-fig6":
            old = _fig6_from_normalized(old_by_id["himmelblau-easier"], claim, context)
        if old is None and claim.id.endswith("-no-margin"):  # a reading of the same comparisons
            old = old_by_id.get(claim.id.removesuffix("-no-margin"))
        if old is None and claim.kind != "contrast":
            print(f"{claim.id}: not in the JSON")
            continue
        parts = rebuild(claim, old, index, {})
        if isinstance(parts, str):
            print(f"{claim.id}: cannot rebuild ({parts})")
            continue
        fields = claim.model_dump(include=set(CLAIM_FIELDS), exclude_none=True)
        new = ClaimVerdict(**fields, **conclude(claim, parts))
        results.append(new)
        before = old_by_id[claim.id]["verdict"] if claim.id in old_by_id else "(new claim)"
        after = new.verdict + (f": {new.category}" if new.category != new.verdict else "")
        if new.seeds_needed:
            after += f" (about {new.seeds_needed} seeds per arm would decide it)"
        print(f"## {claim.id}: {before} -> {after}")
        for exp in new.experiments:
            for c in exp.comparisons:
                print(f"   - [{c.verdict}: {c.category}] {c.reason}")
    for flip in reading_flips(results):
        print(f"reading {flip.statement}: {flip.readings} (flips: {flip.flips})")
    flips = [f.model_dump() for f in reading_flips(results)]
    out = {**audit, "claims": _jsonable(results), "reading_flips": flips}
    if args.out:
        with open(args.out, "w") as f:
            json.dump(out, f, indent=1, default=str)
    if args.forest:
        print(draw_forest(forest_rows(results), args.forest))


def _jsonable(results: list[ClaimVerdict]) -> list[dict[str, Any]]:
    """The claim verdicts as JSON data, their comparisons with their labels."""
    return [
        {
            **r.model_dump(exclude={"experiments"}),
            "experiments": [
                {**e.model_dump(exclude={"comparisons"}), "comparisons": [c.to_json() for c in e.comparisons]}
                for e in r.experiments
            ],
        }
        for r in results
    ]


def _fig6_from_normalized(old: Mapping[str, Any], claim, context) -> dict[str, Any]:
    """The normalized reading's himmelblau / rastrigin10d comparisons as average regret (times the
    objective's regret scale f* - mean f), for the Fig. 6 reading."""
    keep = []
    for exp in old["experiments"]:
        first, second = exp["experiment"].split(" / ")
        if [first, second] not in claim.pairs:
            continue
        scale = {
            e: regret_scale(context[e]["objective"], context[e]["objective_params"]) for e in (first, second)
        }
        comps = []
        for c in exp["comparisons"]:
            c = dict(c)
            c["values_a"] = {k: v * scale[first] for k, v in c["values_a"].items()}
            c["values_b"] = {k: v * scale[second] for k, v in c["values_b"].items()}
            comps.append(c)
        keep.append({**exp, "comparisons": comps})
    return {**old, "experiments": keep}


if __name__ == "__main__":
    main()
