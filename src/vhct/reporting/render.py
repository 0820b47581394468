"""The one renderer of the audit records: ``audit.md`` and ``audit.html``, ``docs/findings.md``, the
headline and the README's findings block. The prose is in the Jinja2 templates (``templates/``:
``audit.j2`` in either format through ``md.j2`` or ``html.j2``, ``findings.j2``, ``readme.j2``, and
``parts.j2`` what they share); this module computes the values they print.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pandas as pd
from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup

from vhct.durations import duration
from vhct.pipeline.figure_kinds import AUDIT_FIGURES
from vhct.pipeline.files import atomic_paths
from vhct.pipeline.provenance import Provenance
from vhct.pipeline.specs import ExperimentInfo, SettingInfo
from vhct.reporting.audit.checks import TOTAL_BESIDE
from vhct.reporting.audit.records import Audit, ClaimVerdict, Comparison, audit_json
from vhct.reporting.audit.statistics import said
from vhct.reporting.audit.verdicts import (
    INCONCLUSIVE,
    NOT_EVALUATED,
    NOT_REPRODUCED,
    READINGS_DISAGREE,
    REPRODUCED,
    statement_counts,
    statements,
)
from vhct.reporting.styles import tint, verdict_colour

#: the audit's forest and summary figures, linked first in the findings
FOREST, SUMMARY = AUDIT_FIGURES
#: significant digits of the numbers in the tables
DIGITS = 4
#: background colour of a verdict's cell in the HTML page: the verdicts' palette, tinted
VERDICT_COLORS = {
    v: tint(verdict_colour(v))
    for v in (REPRODUCED, NOT_REPRODUCED, INCONCLUSIVE, NOT_EVALUATED, READINGS_DISAGREE)
}


def format_number(value: Any) -> str:
    """A number for the tables: DIGITS significant digits (nan, inf and -inf as Python spells them),
    None empty."""
    if value is None:
        return ""
    return f"{value:.{DIGITS}g}" if isinstance(value, float) else str(value)


def md_cell(text: Any) -> str:
    """One Markdown table cell: on one line, pipes escaped."""
    return " ".join(str(text).split()).replace("|", "\\|")


def oneline(text: Any) -> str:
    """The text on one line (a block of template prose; HTML markup stays markup)."""
    joined = " ".join(str(text).split())
    return Markup(joined) if isinstance(text, Markup) else joined


def slug(text: str) -> str:
    """The anchor GitHub (and this module's HTML) gives a heading: lower case, punctuation dropped."""
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


@dataclass(frozen=True)
class Link:
    """A table cell that links a heading of the same document."""

    text: str
    anchor: str


# ---------------------------------------------------------------- values the templates print


def references(comps: Iterable[Comparison]) -> list[str]:
    """The regret references of the comparisons, each once, in order."""
    return list(dict.fromkeys(c.reference for c in comps if c.reference))


def said_once(text: str, refs: Sequence[str]) -> str:
    """``text`` with every ``(reference)`` its comparisons appended taken out and the references
    said once at its end: a reason over four comparisons names their shared reference once."""
    found = [ref for ref in refs if f" ({ref})" in text]
    for ref in found:
        text = text.replace(f" ({ref})", "")
    return text + (f" ({'; '.join(found)})" if found else "")


def claim_comparisons(claim: ClaimVerdict) -> list[Comparison]:
    return [c for e in claim.experiments for c in e.comparisons]


def decider(claim: ClaimVerdict) -> Comparison | None:
    """The comparison that decided the claim (the verdict table's line): for a refuted claim the
    smallest Holm-adjusted refuting p, else the largest claimed p among those of its verdict (too few
    seeds first); None when not evaluated."""
    comps = [c for c in claim_comparisons(claim) if c.verdict != NOT_EVALUATED]
    mine = [c for c in comps if c.verdict == claim.verdict] or comps
    if not mine:
        return None

    def p(value: float | None) -> float:
        return 2.0 if value is None else value  # untested (too few seeds) sorts as the weakest

    if claim.verdict == NOT_REPRODUCED:
        return min(mine, key=lambda c: p(c.p_refuted_holm))
    return max(mine, key=lambda c: p(c.p_claimed))


def capped_reason(setting: SettingInfo) -> dict[str, Any]:
    """Why a setting stops early (``findings.j2``): GPyOpt's cost, by its GP-fit restarts per round
    (``optimize_restarts``, else GPyOpt's default), or else its config key alone."""
    if setting.algorithm != "BO":
        return {"kind": "config"}
    from vhct.optimizers.bo import DEFAULT_OPTIMIZE_RESTARTS  # no GPyOpt import: constants only

    restarts = setting.params.get("optimize_restarts", DEFAULT_OPTIMIZE_RESTARTS)
    return {"kind": "gpyopt", "restarts": int(restarts)}


def scale_items(audit: Audit) -> dict[str, list[dict[str, Any]]]:
    """Where the run departs from the paper's scale: capped horizons, fewer seeds than the paper's
    (the claims' minimum), MNIST's mode, and settings that ran more seeds than the paper's."""
    experiments = audit.context.experiments
    paper = audit.paper_seeds
    capped: dict[tuple, dict[str, Any]] = {}
    fewer: dict[tuple, dict[str, Any]] = {}
    more = [
        {
            "name": name,
            "paper": paper,
            "settings": {s: len(info.seeds) for s, info in exp.settings.items() if len(info.seeds) > paper},
        }
        for name, exp in experiments.items()
        if paper and len(exp.seeds) > paper
    ]
    for name, exp in experiments.items():
        for setting, info in exp.settings.items():
            if info.max_horizon is not None and info.max_horizon < exp.horizon:
                reason = capped_reason(info)
                key = (setting, info.max_horizon, tuple(sorted(reason.items())))
                item = capped.setdefault(
                    key, {"setting": setting, "cap": info.max_horizon, "reason": reason, "where": []}
                )
                item["where"].append(f"{name} (n = {exp.horizon})")
            if info.max_seeds is not None and info.max_seeds < min(len(exp.seeds), paper or len(exp.seeds)):
                item = fewer.setdefault(
                    (setting, info.max_seeds), {"setting": setting, "count": info.max_seeds, "where": []}
                )
                item["where"].append(name)
    test_split = [
        {"name": name, "params": exp.objective_params, "horizon": exp.horizon}
        for name, exp in experiments.items()
        if exp.objective_params.get("mode") == "test-split"
    ]
    return {
        "capped": list(capped.values()),
        "fewer": list(fewer.values()),
        "test_split": test_split,
        "mnist_subset": mnist_subsets(experiments),
        "more": more,
    }


def mnist_subsets(experiments: Mapping[str, ExperimentInfo]) -> list[dict[str, Any]]:
    """The MNIST experiments in official mode on part of the official data, with their data line."""
    found = []
    for name, exp in experiments.items():
        params = exp.objective_params
        if exp.objective != "mnist" or params.get("mode", "official") != "official":
            continue
        from vhct.objectives import mnist

        n_train = params.get("n_train", mnist.DEFAULT_N_TRAIN)
        n_valid = params.get("n_valid", mnist.DEFAULT_N_VALID)
        if n_train < mnist.OFFICIAL_TRAIN_IMAGES or n_valid < mnist.OFFICIAL_TEST_IMAGES:
            found.append({"name": name, "data": mnist.data_text(params), "horizon": exp.horizon})
    return found


def counts(audit: Audit) -> dict[str, int]:
    """The paper's statements per verdict (``verdicts.statement_counts``: a statement whose readings
    disagree counts once, as "readings disagree")."""
    return statement_counts(audit.claims)


def flipped_statements(audit: Audit) -> list[str]:
    """The statements with a reading whose verdict flips under an implementation choice."""
    flipped = set(audit.flipped_claims)
    return [s.id for s in statements(audit.claims) if any(r.claim.id in flipped for r in s.readings)]


def direction_sentence(claim: ClaimVerdict, audit: Audit) -> str | None:
    """One plain sentence on which way the target's mean differs from each other's, from the claim's
    comparisons (ratios of means): "VHCT's mean final regret is higher than HCT's on 4 of 4
    experiments (..), by 2% to 9%". Settings are named by their labels where the run records them;
    None for a claim without ratio-of-means comparisons of its target."""
    comps = [c for c in claim_comparisons(claim) if c.n_a and c.effect_name == "ratio of means"]
    if not comps or claim.claim.target is None:
        return None
    labels = {
        s: info.label.split(",")[0]
        for e in audit.context.experiments.values()
        for s, info in e.settings.items()
    }

    def name(setting: str) -> str:
        return labels.get(setting, setting)

    at = "final " if claim.claim.round == "final" else ""
    what = f"mean {at}{said(claim.claim.statistic)}"
    others = list(dict.fromkeys(c.b for c in comps))
    than = " and ".join(f"{name(b)}'s" for b in others)
    parts = []
    above, below = [c for c in comps if c.effect > 1.0], [c for c in comps if c.effect < 1.0]
    for word, side in (("higher", above), ("lower", below)):
        if not side:
            continue
        sizes = sorted(abs(c.effect - 1.0) * 100 for c in side)
        low, high = f"{sizes[0]:.0f}%", f"{sizes[-1]:.0f}%"
        by = low if low == high else f"{low} to {high}"
        where = ", ".join(dict.fromkeys(c.experiment for c in side))
        parts.append(f"{word} than {than} on {len(side)} of {len(comps)} experiments ({where}), by {by}")
    equal = [c.experiment for c in comps if c.effect == 1.0]
    if equal:
        parts.append(f"equal on {len(equal)} of {len(comps)} experiments ({', '.join(equal)})")
    return f"{name(claim.claim.target)}'s {what} is " + "; ".join(parts) + "."


def margin_rows(claim: ClaimVerdict) -> list[dict[str, Any]]:
    """The margin sensitivity of a claim with other ``margins``: its own thresholds and verdict first,
    then each other's; per row the verdict on every experiment."""
    if not claim.margins:
        return []
    own = {
        "thresholds": claim.claim.thresholds.given(),
        "verdict": claim.verdict,
        "category": claim.category,
        "experiments": claim.experiments,
    }
    rows = [own] + [
        {
            "thresholds": m.thresholds,
            "verdict": m.verdict,
            "category": m.category,
            "experiments": m.experiments,
        }
        for m in claim.margins
    ]
    for row in rows:
        row["text"] = ", ".join(f"{k} = {format_number(float(v))}" for k, v in row["thresholds"].items())
        row["by"] = {e.experiment: e.verdict for e in row["experiments"]}
    return rows


def seeds_span(audit: Audit) -> str:
    """The seeds per experiment, ``20`` or ``10 to 20`` (the findings' scope)."""
    values = sorted({len(e.seeds) for e in audit.context.experiments.values()})
    if not values:
        return "0"
    return str(values[0]) if len(values) == 1 else f"{values[0]} to {values[-1]}"


def seeds_text(audit: Audit) -> str:
    """The seeds per curve (the headline), in parentheses the settings that ran fewer than their
    experiment and the paper's, with where ("BO-restarts5: 4 on garland"), and in one clause those
    that ran more than the paper's for the audit's power."""
    paper = audit.paper_seeds
    fewer: dict[tuple[str, int], list[str]] = {}
    more: dict[str, set[int]] = {}
    places: set[str] = set()
    for name, exp in audit.context.experiments.items():
        for setting, info in exp.settings.items():
            n = len(info.seeds)
            if n < len(exp.seeds) and not (paper and n >= paper):
                fewer.setdefault((setting, n), []).append(name)
            if paper and n > paper:
                more.setdefault(setting, set()).add(n)
                places.add(name)
    notes = [f"{setting}: {n} on {', '.join(where)}" for (setting, n), where in fewer.items()]
    if more:
        counts = " or ".join(str(n) for n in sorted({n for ns in more.values() for n in ns}, reverse=True))
        settings = f"{len(more)} setting{'s' * (len(more) != 1)}"
        where = f"{len(places)} experiment{'s' * (len(places) != 1)}"
        why = "where the audit's power needed them"
        notes.insert(0, f"the paper's {paper}; {counts} for {settings} on {where}, {why}")
    return f"{seeds_span(audit)} seeds per curve" + (f" ({'; '.join(notes)})" if notes else "")


def early_labels(audit: Audit) -> list[str]:
    """Every comparison read before its experiment's horizon, each once."""
    return sorted({c.label for claim in audit.claims for c in claim_comparisons(claim) if c.early})


def cost_rows(audit: Audit) -> list[dict[str, Any]]:
    """The cost claim's comparisons (the optimizer's own seconds per round, the total beside)."""
    costs = [claim for claim in audit.claims if claim.claim.statistic in TOTAL_BESIDE]
    return [
        {"experiment": e.experiment, "c": c}
        for claim in costs
        for e in claim.experiments
        for c in e.comparisons
        if c.round is not None
    ]


def regret_tables(aggregates: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Final cumulative regret per experiment: settings at the horizon first, best first."""
    out = []
    for name, tables in aggregates.items():
        order = ["horizon", "final_mean"]
        final = tables["final.csv"].sort_values(order, ascending=[False, True], kind="stable")
        rows = [
            [
                r.setting,
                r.horizon,
                r.n_seeds,
                f"{format_number(r.final_mean)} ± {format_number(r.final_std)}",
                format_number(r.final_mean / r.horizon),
            ]
            for r in final.itertuples()
        ]
        out.append({"name": name, "rows": rows})
    return out


def beyond_rows(audit: Audit) -> list[dict[str, Any]]:
    """One row per question and evaluated experiment of ``beyond``; ``p``: the smaller Holm-adjusted
    p of the two directions (the one an answer rests on)."""
    rows = []
    for q in audit.beyond.questions if audit.beyond else []:
        for e in q.experiments:
            if e.comparison is None or e.verdict == NOT_EVALUATED:
                continue
            tested = [p for p in (e.comparison.p_claimed_holm, e.comparison.p_refuted_holm) if p is not None]
            rows.append({"q": q, "e": e, "c": e.comparison, "p": min(tested) if tested else None})
    return rows


@cache
def _environment(autoescape: bool) -> Environment:
    """The templates' environment, HTML-escaping or not, with the filters and values they use."""
    env = Environment(
        loader=PackageLoader("vhct.reporting", "templates"),
        undefined=StrictUndefined,
        autoescape=autoescape,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(
        num=format_number, cell=md_cell, slug=slug, said_once=said_once, refs=references, oneline=oneline
    )
    env.tests["link"] = lambda x: isinstance(x, Link)
    env.globals.update(
        Link=Link,
        decider=decider,
        counts=counts,
        seeds_text=seeds_text,
        seeds_span=seeds_span,
        statements=lambda audit: statements(audit.claims),
        flipped_statements=flipped_statements,
        direction_sentence=direction_sentence,
        margin_rows=margin_rows,
        READINGS_DISAGREE=READINGS_DISAGREE,
        early_labels=early_labels,
        comparisons=claim_comparisons,
        beyond_rows=beyond_rows,
        colors=VERDICT_COLORS,
        REPRODUCED=REPRODUCED,
        NOT_REPRODUCED=NOT_REPRODUCED,
        INCONCLUSIVE=INCONCLUSIVE,
        NOT_EVALUATED=NOT_EVALUATED,
    )
    return env


def _render(template: str, fmt: str, **values: Any) -> str:
    text = _environment(fmt == "html").get_template(template).render(fmt=f"{fmt}.j2", **values)
    return re.sub(r"\n{3,}", "\n\n", text).strip("\n") + "\n"


def render_markdown(audit: Audit) -> str:
    """``results/audit.md``: the audit as Markdown (readable on its own)."""
    return _render("audit.j2", "md", audit=audit)


def render_html(audit: Audit) -> str:
    """``results/audit.html``: the same document as a standalone page; verdict cells coloured."""
    return _render("audit.j2", "html", audit=audit)


def design_text(audit: Audit) -> str:
    """The audit's design in one plain paragraph (``parts.design``: the audit's and the findings')."""
    return _render("design.j2", "md", audit=audit).strip()


def headline(audit: Audit) -> str:
    """One sentence: the verdict counts at the run's number of seeds, and the flips (the README's)."""
    return _render("headline.j2", "md", audit=audit).strip()


def render_readme(audit: Audit, document: str) -> str:
    """The README's findings block (``readme.j2``): the headline and a link to ``document``; a run
    below the paper's scale says so first."""
    values = {"paper": not audit.below_paper(), "seeds": seeds_span(audit), "needed": audit.paper_seeds}
    return _render("readme.j2", "md", headline=headline(audit), document=document, **values).rstrip("\n")


def render_findings(
    audit: Audit,
    provenance: Provenance,
    aggregates: Mapping[str, Mapping[str, Any]],
    figures: Sequence[Path],
    figures_dir: str,
    verdicts_table: str | None = None,
) -> str:
    """``docs/findings.md`` from the shipped audit record, provenance, aggregates and figures
    (``verdicts_table``: the link to the shipped verdict table, None when none is shipped)."""
    names = {f.stem: f for f in figures}
    return _render(
        "findings.j2",
        "md",
        audit=audit,
        headline=headline(audit),
        prov=provenance,
        duration=duration(provenance.wall_seconds, finest="s", total=True),
        scale=scale_items(audit),
        costs=cost_rows(audit),
        regrets=regret_tables(aggregates),
        beyond=beyond_rows(audit),
        figures=[(f.stem, f"{figures_dir}/{f.name}") for f in figures],
        beyond_figure=names.get("beyond_baselines") and f"{figures_dir}/{names['beyond_baselines'].name}",
        forest_figure=names.get(FOREST) and f"{figures_dir}/{names[FOREST].name}",
        summary_figure=names.get(SUMMARY) and f"{figures_dir}/{names[SUMMARY].name}",
        verdicts_table=verdicts_table,
    )


#: the verdict table's columns (:func:`verdict_table`): one row per comparison of a reading of a statement
VERDICT_COLUMNS = (
    "statement",
    "statement_verdict",
    "reading",
    "reading_verdict",
    "reading_category",
    "experiment",
    "comparison",
    "effect_name",
    "effect",
    "ci_level",
    "ci_low",
    "ci_high",
    "comparison_verdict",
    "comparison_category",
)


def verdict_table(audit: Audit) -> pd.DataFrame:
    """The audit's verdicts as one table (``verdicts.csv`` beside ``audit.json``): a row per comparison of
    each reading of each statement, with its effect, interval and verdict beside its reading's and
    statement's verdicts; an experiment without comparisons, or a statement checked by computation,
    gets one row with its verdict and no effect."""
    rows: list[dict[str, Any]] = []
    for statement in statements(audit.claims):
        for reading in statement.readings:
            head = {
                "statement": statement.id,
                "statement_verdict": statement.verdict,
                "reading": reading.claim.id,
                "reading_verdict": reading.verdict,
                "reading_category": reading.category,
            }
            if not reading.experiments:
                rows.append(head)
            for exp in reading.experiments:
                if not exp.comparisons:
                    rows.append(
                        {
                            **head,
                            "experiment": exp.experiment,
                            "comparison_verdict": exp.verdict,
                            "comparison_category": exp.category,
                        }
                    )
                for c in exp.comparisons:
                    rows.append(
                        {
                            **head,
                            "experiment": exp.experiment,
                            "comparison": c.label,
                            "effect_name": c.effect_name,
                            "effect": c.effect,
                            "ci_level": c.ci_level,
                            "ci_low": c.ci_low,
                            "ci_high": c.ci_high,
                            "comparison_verdict": c.verdict,
                            "comparison_category": c.category,
                        }
                    )
    for computed in audit.computed:
        rows.append(
            {
                "statement": computed.claim.id,
                "statement_verdict": computed.verdict,
                "reading": computed.claim.id,
                "reading_verdict": computed.verdict,
            }
        )
    return pd.DataFrame(rows, columns=list(VERDICT_COLUMNS))


def write_audit(
    audit: Audit,
    md_path: Path | str,
    json_path: Path | str,
    html_path: Path | str | None = None,
    csv_path: Path | str | None = None,
) -> None:
    """Write the audit as Markdown, JSON (the records' one writer), HTML and its verdict table as CSV
    (:func:`verdict_table`), all or none."""
    optional = [p for p in (html_path, csv_path) if p is not None]
    with atomic_paths(md_path, json_path, *optional) as temps:
        temps[0].write_text(render_markdown(audit), encoding="utf-8")
        temps[1].write_text(audit_json(audit), encoding="utf-8")
        written = dict(zip(optional, temps[2:], strict=True))
        if html_path is not None:
            written[html_path].write_text(render_html(audit), encoding="utf-8")
        if csv_path is not None:
            verdict_table(audit).to_csv(written[csv_path], index=False)
