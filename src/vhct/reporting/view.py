"""The view of a published audit: what every format of the findings prints, computed once.

Data goes one way: the reader (:func:`vhct.reporting.published.read_published`) gives the audit record,
:func:`build_view` turns it into this view, and the formats print it: the audit's Markdown and HTML,
``docs/findings.md`` and the README's block (:mod:`vhct.reporting.render`) and the article
(:mod:`vhct.article.record`). Per statement and reading the view holds its name in words, its effect
and interval in a sentence, its verdict (``mixed: k of m pairs`` where its pairs disagree), every
pair's result, and where it ran below the paper's scale; the counts of statements and readings are
computed here once. Nothing here changes the audit's record: every value is derived from what
``audit.json`` holds, and the paper's scale from ``config/paper.yaml`` (:func:`paper_scale`).
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined

from vhct.durations import duration
from vhct.pipeline.layout import FINAL_TABLE
from vhct.pipeline.specs import ExperimentInfo, SettingInfo
from vhct.reporting.audit.checks import TOTAL_BESIDE
from vhct.reporting.audit.claims_model import ComputedClaim
from vhct.reporting.audit.effects import effect_unit, format_number
from vhct.reporting.audit.kinds_one_sample import LOWER_BOUND, WALL_TIME_EFFECT
from vhct.reporting.audit.records import Audit, ClaimVerdict, Comparison
from vhct.reporting.audit.statistics import said
from vhct.reporting.audit.verdicts import (
    NOT_EVALUATED,
    NOT_REPRODUCED,
    REPRODUCED,
    statement_counts,
    statements,
)

#: the config of the paper's full scale in a checkout (:func:`paper_scale`)
PAPER_CONFIG = Path("config") / "paper.yaml"


def thresholds_text(thresholds: Mapping[str, Any]) -> str:
    """Thresholds as the documents print them: "min_relative_effect = 0.05, ..."."""
    return ", ".join(f"{k} = {format_number(float(v))}" for k, v in thresholds.items())


def outcome_text(verdict: str, category: str) -> str:
    """``verdict: category``, the verdict alone where the category is empty or repeats it."""
    return verdict if not category or category == verdict else f"{verdict}: {category}"


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
        row["text"] = thresholds_text(row["thresholds"])
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
    experiment and the paper's, with where ("BO-restarts5: 4 on garland"), and in one clause how
    many ran more than the paper's for the audit's power, and up to how many (each setting's count
    is the findings' table of seeds, not this sentence's)."""
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
        most = max(n for ns in more.values() for n in ns)
        settings = f"{len(more)} setting{'s' * (len(more) != 1)}"
        where = f"{len(places)} experiment{'s' * (len(places) != 1)}"
        why = "where the audit's power needed them"
        notes.insert(0, f"the paper's {paper}; up to {most} for {settings} on {where}, {why}")
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
        final = tables[FINAL_TABLE].sort_values(order, ascending=[False, True], kind="stable")
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


# ---------------------------------------------------------------- the typed view: effects, pairs, scale

#: the first bound of a comparison's claimed region (``mean_a < 0.95 mean_b``: "<" and 0.95)
CLAIMED_BOUND = re.compile(r"(?P<op>[<>])\s*(?P<bound>-?[0-9][0-9.e+-]*)")
#: the value of "no difference" of an effect, by the first word of its name (a ratio: 1, a
#: difference: 0); an effect of another kind (a slope, a share) has none
NULL_EFFECT = {"ratio": 1.0, "difference": 0.0}
#: from this ratio on an effect is said as a factor ("4208 times"), below it as a percentage
FACTOR_FROM = 2.0
#: the template of a statement's name in words, by its claim kind (``claims_model.CLAIM_KINDS``),
#: filled from its record: ``target``/``others``/``claimed`` as setting names, ``what`` its
#: statistic, ``pairs`` its experiment pairs, ``direction`` and ``limit`` a wall-time claim's
KIND_NAMES_TEMPLATE = "kind_names.j2"
#: at most this many findings lead a summary (:attr:`View.matters`)
MATTERS = 6
#: at most this many experiment pairs (or other settings of a lowest claim) are named in a statement's
#: name (more are counted, or read "the lowest")
PAIRS_NAMED = 2
#: at most this many experiments are named in a statement's name (more are counted)
EXPERIMENTS_NAMED = 3
#: the words for a wall-time claim's direction
WALL_DIRECTION = {"less": "less than", "greater": "more than", None: "about"}


@dataclass(frozen=True)
class Pair:
    """One comparison (a pair of settings, or of experiments) of a reading, as every format prints it:
    its effect as a value and an interval (a duration where the effect is in units of a threshold of
    seconds), its sentence, whether its interval clears "no difference" in the claimed direction
    (``no_margin``: "supports", "against", "undecided", None where the effect has no such value), and
    how it runs below the paper's scale (``reduced``: empty at the paper's scale)."""

    experiment: str
    comparison: Comparison
    effect_name: str
    value: str
    interval: str
    sentence: str
    no_margin: str | None
    reduced: tuple[str, ...] = ()

    @property
    def verdict(self) -> str:
        return self.comparison.verdict

    @property
    def outcome(self) -> str:
        """``verdict (category)``, the category only where it says more."""
        c = self.comparison
        return c.verdict + (f" ({c.category})" if c.category and c.category != c.verdict else "")


@dataclass(frozen=True)
class Reading:
    """One reading (a claim of the audit) of a statement of the paper: its record and what every
    format prints of it."""

    claim: ClaimVerdict
    name: str
    pairs: list[Pair]
    #: the pair that decided the verdict by the audit's rule (:func:`decider`; None: not evaluated)
    decider: Pair | None
    #: its effect and interval in one sentence (one pair's, or the range over its pairs)
    effect: str
    #: the effect and its interval for a table: one pair's, else a summary over the pairs
    value: str
    interval: str
    #: its thresholds as the reading of the paper's words that state a size ('"similar" read as
    #: lower_ratio = 0.8, ...'); None where it is tested at no difference (:func:`_margin`)
    margin: str | None
    #: the reading without a margin where the claim's thresholds read a size the paper's words state:
    #: how many pairs' intervals clear "no difference" in the claimed direction (None: the claim is
    #: tested at no difference, its effect has no such value, or it states a two-sided band)
    no_margin: str | None
    #: (k, m): k of its m decided pairs reproduced while another is not reproduced (None: they agree)
    mixed: tuple[int, int] | None
    #: how the pairs carrying its verdict run below the paper's scale (empty: at the paper's scale)
    reduced: list[str]
    #: every pair carrying its verdict runs below the paper's scale
    below_scale: bool
    #: the verdict as a headline says it: "mixed: k of m pairs", "not evaluated at the paper's scale"
    verdict_text: str
    #: one sentence: the effect first, the no-margin reading, the verdict beside
    headline: str
    flips: list[tuple[str, str]] = field(default_factory=list)
    direction: str | None = None
    margins: list[dict[str, Any]] = field(default_factory=list)

    @property
    def id(self) -> str:
        return self.claim.claim.id

    @property
    def verdict(self) -> str:
        return self.claim.verdict

    @property
    def category(self) -> str:
        return self.claim.category

    @property
    def outcome(self) -> str:
        """``verdict: category`` (the verdict alone where the category repeats it)."""
        return outcome_text(self.verdict, self.category)

    @property
    def short_verdict(self) -> str:
        """The verdict for a table cell: "mixed: k of m pairs", "not at the paper's scale (...)" or
        the audit's verdict and category."""
        text = f"mixed: {self.mixed[0]} of {self.mixed[1]} pairs" if self.mixed else self.outcome
        return f"not at the paper's scale ({text} at reduced scale)" if self.below_scale else text

    @property
    def against(self) -> list[Pair]:
        """Its decided pairs that refute it (the other side of a mixed reading)."""
        return [p for p in self.pairs if p.verdict == NOT_REPRODUCED]

    @property
    def supporting(self) -> list[Pair]:
        return [p for p in self.pairs if p.verdict == REPRODUCED]

    @property
    def margin_decides(self) -> bool:
        """A margin, not the effect, decides: its effect lies the claimed way on every pair, clear of
        "no difference", while the margin its words' size sets leaves it not reproduced; or it is
        reproduced with no margin and not at a margin of the project's read beside it."""
        sides = [p.no_margin for p in self.pairs if p.verdict != NOT_EVALUATED]
        by_size = (
            self.margin is not None
            and self.verdict == NOT_REPRODUCED
            and bool(sides)
            and all(side == "supports" for side in sides)
        )
        beside = self.margin is None and self.verdict == REPRODUCED
        return by_size or (beside and any(m.verdict != REPRODUCED for m in self.claim.margins))


@dataclass(frozen=True)
class StatementView:
    """A statement of the paper: its name in words (its lead reading's, without the number that tells
    readings named alike apart), its readings, its verdict (``readings disagree`` where they do) and
    the reading its headline leads with (the no-margin one where another adds a margin)."""

    id: str
    name: str
    verdict: str
    category: str
    readings: list[Reading]
    lead: Reading


@dataclass(frozen=True)
class View:
    """Everything the formats print of an audit, computed once: statements and readings, their
    counts (the one count every section uses), and the run's scale."""

    audit: Audit
    statements: list[StatementView]
    #: statements per verdict (``verdicts.statement_counts``)
    counts: dict[str, int]
    n_statements: int
    n_readings: int
    n_computed: int
    #: statements with a reading that flips under an implementation choice
    flipped: list[str]
    seeds_text: str
    seeds_span: str
    #: experiment -> how it runs below the paper's scale (empty without the paper's scale)
    reduced: dict[str, list[str]]
    #: experiment -> the regret reference of its verdicts where it is not the figure's
    references: dict[str, str]

    @property
    def readings(self) -> list[Reading]:
        return [r for s in self.statements for r in s.readings]

    def reading(self, claim: str) -> Reading | None:
        return next((r for r in self.readings if r.id == claim), None)

    @property
    def by_verdict(self) -> dict[str, list[str]]:
        """The statements' ids per verdict, in the order of :attr:`counts`."""
        return {v: [s.id for s in self.statements if s.verdict == v] for v in self.counts}

    @property
    def mixed(self) -> list[Reading]:
        return [r for r in self.readings if r.mixed]

    @property
    def below_scale(self) -> list[Reading]:
        return [r for r in self.readings if r.below_scale]

    @property
    def matters(self) -> list[Reading]:
        """The findings a summary leads with (at most :data:`MATTERS`), taken in turn from: readings
        refuted on every decided pair at the paper's scale, readings whose margin and not their
        effect decides, readings decided only below the paper's scale, and readings whose pairs
        disagree; each reading once, in the audit's order within a kind."""
        at_scale = [r for r in self.readings if not r.below_scale]
        kinds = [
            [r for r in at_scale if r.verdict == NOT_REPRODUCED and not r.mixed and not r.margin_decides],
            [r for r in at_scale if r.margin_decides],
            [r for r in self.below_scale if r.verdict != REPRODUCED],
            [r for r in at_scale if r.mixed],
        ]
        found: list[Reading] = []
        while any(kinds) and len(found) < MATTERS:
            for kind in kinds:
                while kind and kind[0] in found:
                    kind.pop(0)
                if kind and len(found) < MATTERS:
                    found.append(kind.pop(0))
        return found


def paper_scale(path: Path | str) -> dict[str, ExperimentInfo]:
    """The paper's full scale: each experiment of ``path`` (``config/paper.yaml``) as the config
    computes it; a config that does not load is a ValueError naming it."""
    from vhct.pipeline.config import ConfigError, load

    try:
        cfg, _ = load([Path(path)])
    except ConfigError as exc:
        raise ValueError(f"{path}: {exc}") from exc
    return {name: cfg.experiment_info(name) for name in cfg.experiments}


def reduced_scale(
    run: ExperimentInfo, paper: ExperimentInfo | None, settings: Iterable[str] = ()
) -> list[str]:
    """How an experiment (and ``settings`` of it) ran below the paper's scale: fewer rounds, other
    objective parameters (MNIST on a subset), a setting stopped earlier than the paper's scale runs
    it; empty when it ran at that scale or the paper's scale has no such experiment."""
    if paper is None:
        return []
    found = []
    if run.horizon < paper.horizon:
        found.append(f"n = {run.horizon} rounds (the paper's scale: {paper.horizon})")
    for key in sorted(set(run.objective_params) | set(paper.objective_params)):
        mine, theirs = run.objective_params.get(key), paper.objective_params.get(key)
        if mine != theirs and mine is not None and theirs is not None:
            found.append(f"{key} = {mine} (the paper's scale: {theirs})")
    for s in settings:  # a setting stopped before its experiment's last round, earlier than the paper's scale
        mine_s, theirs_s = run.settings.get(s), paper.settings.get(s)
        if mine_s is None or theirs_s is None or mine_s.horizon >= run.horizon:
            continue
        if mine_s.horizon < theirs_s.horizon:
            found.append(f"{s} to t = {mine_s.horizon} (the paper's scale: t = {theirs_s.horizon})")
    return found


def capitalize_first(text: str) -> str:
    """The text with its first letter in capitals (a name in words at a sentence's start)."""
    return text[:1].upper() + text[1:]


def _times(x: float) -> str:
    """A factor: three significant digits, whole from 100 on (``4208``, not ``4.21e+03``)."""
    return f"{x:.3g}" if abs(x) < 100 else f"{x:.0f}"


def _pct(x: float) -> str:
    return f"{x:.1f}" if abs(x) < 10 else f"{x:.0f}"


def _names(settings: Iterable[str], labels: Mapping[str, str]) -> dict[str, str]:
    """Each setting's name in words: its label's first part (the algorithm) where that tells the
    settings apart, else its whole label."""
    settings = list(dict.fromkeys(settings))
    short = {s: labels.get(s, s).split(",")[0] for s in settings}
    if len(set(short.values())) == len(short):
        return short
    return {s: labels.get(s, s) for s in settings}


def ratio_words(ratio: float, low: float | None, high: float | None) -> tuple[str, str, str]:
    """A ratio said as a size, its interval and the way (``2.1 %``, ``[1.6, 2.6]``, ``below``; from
    :data:`FACTOR_FROM` on ``4208 times``)."""
    have = low is not None and high is not None
    if ratio >= FACTOR_FROM:
        interval = f"[{_times(low)}, {_times(high)}]" if have else ""
        return f"{_times(ratio)} times", interval, ""
    below = ratio < 1.0
    size = (1.0 - ratio if below else ratio - 1.0) * 100
    if not have:
        return f"{_pct(size)} %", "", "below" if below else "above"
    ends = sorted((1.0 - high, 1.0 - low) if below else (low - 1.0, high - 1.0))
    return f"{_pct(size)} %", f"[{_pct(ends[0] * 100)}, {_pct(ends[1] * 100)}]", "below" if below else "above"


def _interval(c: Comparison, text) -> str:  # type: ignore[no-untyped-def]
    if c.ci_low is None or c.ci_high is None:
        return "none"
    return f"{text(c.ci_low)} to {text(c.ci_high)}"


def pair_of(
    c: Comparison, experiment: str, what: str, labels: Mapping[str, str], reduced: Sequence[str]
) -> Pair:
    """One comparison as a :class:`Pair`: its effect said in a sentence a person would write."""
    unit = effect_unit(c.effect_name)
    limit, effect_name, text = unit.seconds, unit.name, unit.text
    value, interval = text(c.effect), _interval(c, text)
    bracket = "" if c.ci_low is None or c.ci_high is None else f" [{text(c.ci_low)}, {text(c.ci_high)}]"
    places = experiment.split(" / ")
    a_set, b_set = (side.split(" on ")[0] for side in (c.a, c.b))  # "VHCT-rho0.75 on himmelblau"
    names = _names([a_set, b_set], labels)
    a, b = names[a_set], names.get(b_set, b_set)
    if not c.effect_name or not math.isfinite(c.effect):
        sentence = f"{c.label} on {experiment}: {c.reason or c.verdict}"
    elif c.effect_name == "ratio of means" and c.b != "-":
        size, ci, way = ratio_words(c.effect, c.ci_low, c.ci_high)
        said_as = f"{size}{' ' + ci if ci else ''}{' ' + way if way else ''}"
        if len(places) == 2:
            sentence = f"{a}'s {what} on {places[0]} is {said_as} that on {places[1]}"
        else:
            sentence = f"{a}'s {what} is {said_as} {b}'s on {experiment}"
    elif c.effect_name.startswith("ratio of ratios") and len(places) == 2:
        size, ci, way = ratio_words(c.effect, c.ci_low, c.ci_high)
        said_as = f"{size}{' ' + ci if ci else ''}{' ' + way if way else ''}"
        sentence = f"the ratio {a}/{b} of {what} on {places[0]} is {said_as} that on {places[1]}"
    elif limit is not None:
        sentence = f"{a}'s {effect_name} on {experiment} is {value}{bracket}, against {duration(limit)}"
    else:
        subject = a if c.b == "-" or a_set == b_set else f"{a} against {b}"
        sentence = f"{subject} on {experiment}: {effect_name} {value}{bracket}"
    found = CLAIMED_BOUND.search(c.claimed or "")
    null = next((v for k, v in NULL_EFFECT.items() if (c.effect_name or "").startswith(k)), None)
    side = None
    if found is not None and null is not None and " and " not in c.claimed:
        if c.ci_low is None or c.ci_high is None:
            side = "undecided"
        elif found["op"] == "<":
            side = "supports" if c.ci_high < null else "against" if c.ci_low > null else "undecided"
        else:
            side = "supports" if c.ci_low > null else "against" if c.ci_high < null else "undecided"
    return Pair(experiment, c, effect_name, value, interval, sentence, side, tuple(reduced))


def table_pair(c: Comparison) -> Pair:
    """``c`` as a table cell prints it: its effect's name, value and interval (a duration where the
    effect is in units of a threshold of seconds). Its sentence, made without the claim's statistic
    and the settings' labels, is not for printing."""
    return pair_of(c, c.experiment, "", {}, ())


def _margin(claim: ClaimVerdict) -> str | None:
    """The thresholds as the reading of the paper's words that state a size (``size``), "'similar'
    read as lower_ratio = 0.8, upper_ratio = 1.05"; None where the claim is tested at no difference."""
    c = claim.claim
    if c.size is None or c.spec.at_no_difference(c):
        return None
    return f'"{c.size}" read as {thresholds_text(c.thresholds.given())}'


def _beside(claim: ClaimVerdict) -> list[tuple[str, str]]:
    """The verdict at each other margin of the claim (``margins``: the project's), as (the margin's
    thresholds that differ from the claim's, its verdict and category)."""
    own = claim.claim.thresholds.given()
    return [
        (
            thresholds_text({k: v for k, v in m.thresholds.items() if own.get(k) != v}),
            outcome_text(m.verdict, m.category),
        )
        for m in claim.margins
    ]


def _summary(pairs: Sequence[Pair], labels: Mapping[str, str]) -> tuple[str, str, str]:
    """The effect over several pairs: a sentence, a value and an interval for a table (``labels``:
    the settings' labels, to name them in words)."""
    ratios = [
        p
        for p in pairs
        if p.comparison.effect_name == "ratio of means" and math.isfinite(p.comparison.effect)
    ]
    if ratios and len(ratios) == len(pairs):
        effects = sorted(p.comparison.effect for p in ratios)
        below = sorted((1 - r) * 100 for r in effects if r < 1)
        above = sorted((r - 1) * 100 for r in effects if r > 1)
        parts = []
        for word, sizes in (("below", below), ("above", above)):
            if not sizes:
                continue
            if word == "above" and sizes[0] >= (FACTOR_FROM - 1) * 100:
                low, high = (_times(1 + x / 100) for x in (sizes[0], sizes[-1]))
                by = f"{low} times" if low == high else f"{low} to {high} times"
            else:
                low, high = _pct(sizes[0]), _pct(sizes[-1])
                by = f"by {low} %" if low == high else f"by {low} to {high} %"
            parts.append(f"{word} on {len(sizes)} of {len(pairs)} pairs, {by}")
        value = "; ".join(parts)
        return value, value, "per pair"
    finite = sorted(
        (p for p in pairs if math.isfinite(p.comparison.effect)), key=lambda p: p.comparison.effect
    )
    if not finite:
        return "", "-", "-"
    if all(p.comparison.b == "-" for p in finite):
        return _one_sample_summary(finite, labels)
    name = pairs[0].effect_name
    value = finite[0].value if len(finite) == 1 else f"{finite[0].value} to {finite[-1].value}"
    return f"{name} from {value} over {len(pairs)} pairs", value, "per pair"


def _one_sample_summary(finite: Sequence[Pair], labels: Mapping[str, str]) -> tuple[str, str, str]:
    """:func:`_summary` of one-sample effects (a slope, a share, a wall time), ``finite`` in increasing
    order: the smallest and the largest, where each was measured, over how many settings and
    experiments: ``mean slope of log R_t on log t from 0.4852 (garland) to 0.7897 (rastrigin10d) over
    5 experiments``. Wall times (effects in units of a threshold of seconds) as durations, their
    lower bounds and threshold said: ``mean wall time per run from 6.67 s (mnist) to 6 min 46 s
    (garland) over 3 experiments (each to its horizon; a lower bound on garland: stopped early,
    extended), against 1 h``."""
    names = _names([p.comparison.a for p in finite], labels)
    several = len(names) > 1

    def where(p: Pair) -> str:
        return f"{names[p.comparison.a]} on {p.experiment}" if several else p.experiment

    low, high = finite[0], finite[-1]
    value = low.value if len(finite) == 1 else f"{low.value} to {high.value}"
    span = f"{low.value} ({where(low)})" + ("" if len(finite) == 1 else f" to {high.value} ({where(high)})")
    places = len({p.experiment for p in finite})
    experiments = f"{places} experiment{'s' if places > 1 else ''}"
    over = f"{len(names)} settings on {experiments}" if several else experiments
    units = [effect_unit(p.comparison.effect_name) for p in finite]
    if any(u.seconds is None for u in units):
        return f"{low.effect_name} from {span} over {over}", value, "per pair"
    bounds = [where(p) for p, u in zip(finite, units, strict=True) if LOWER_BOUND in u.name]
    lower = f"; a lower bound on {listed(bounds)}: stopped early, extended" if bounds else ""
    against = listed(sorted({duration(u.seconds) for u in units}))
    sentence = f"{WALL_TIME_EFFECT} from {span} over {over} (each to its horizon{lower}), against {against}"
    return sentence, value, "per pair"


@cache
def kind_names() -> Any:
    """The module of :data:`KIND_NAMES_TEMPLATE` (its macro ``name``), loaded once."""
    env = Environment(loader=PackageLoader("vhct.reporting", "templates"), undefined=StrictUndefined)
    return env.get_template(KIND_NAMES_TEMPLATE).module


def listed(items: Sequence[str], last: str = "and") -> str:
    """Items as a sentence lists them: ``a``, ``a and b``, ``a, b and c`` (``last``: the word before
    the last item)."""
    if len(items) <= 1:
        return "".join(items)
    return f"{', '.join(items[:-1])} {last} {items[-1]}"


def _name(claim: ClaimVerdict, labels: Mapping[str, str]) -> str:
    """The statement's name in words (the template :data:`KIND_NAMES_TEMPLATE`), its id where its
    kind has none."""
    c = claim.claim
    settings = [s for s in [c.target, *(c.others or []), *(c.claimed or [])] if s]
    names = _names(settings, labels)

    def words(items: Iterable[str] | None, last: str = "and") -> str:
        return listed(list(dict.fromkeys(names.get(s, s) for s in items or [])), last)

    given_pairs = c.pairs or []
    named_pairs = len(given_pairs) <= PAIRS_NAMED
    pairs = (
        "; ".join(f"{a} and {b}" for a, b in given_pairs)
        if named_pairs
        else f"{len(given_pairs)} pairs of experiments"
    )
    given = c.thresholds.given()
    values = {
        "target": labels.get(c.target, c.target)
        if c.target
        else "",  # whole: its parameters tell readings apart
        "others": words(c.others),
        "named_others": len(c.others or []) <= PAIRS_NAMED,
        "claimed": words(c.claimed, "or"),
        "what": f"{'final ' if c.round == 'final' else ''}{said(c.statistic)}",
        "pairs": pairs,
        "pair_list": given_pairs if named_pairs else [],
        "direction": WALL_DIRECTION.get(c.direction, "about"),
        "limit": duration(given["seconds"]) if "seconds" in given else "",
    }
    name = str(kind_names().name(c.kind, values))
    if not name:
        return c.id.replace("-", " ")
    if not c.pairs and len(c.experiments) <= EXPERIMENTS_NAMED:
        name += " on " + listed(c.experiments)
    elif not c.pairs:
        name += f" on {len(c.experiments)} experiments"
    return name


def resolution_text(spec: Mapping[str, Any]) -> str:
    """A resolution of a config (``resolution`` mapping) as the paper writes it: ``phi(h) = 1 * 0.5^h``,
    ``phi(h) = 2/h``."""
    kind = spec.get("kind")
    if kind == "exponential":
        return f"phi(h) = {format_number(spec['nu'])} * {format_number(spec['rho'])}^h"
    if kind == "polynomial":
        power = "h" if spec["p"] == 1 else f"h^{format_number(spec['p'])}"
        return f"phi(h) = {format_number(spec['a'])}/{power}"
    return "phi(h) = " + ", ".join(f"{k} = {format_number(v)}" for k, v in spec.items())


def computed_name(claim: ComputedClaim) -> str:
    """A statement checked by computation in words (the template's macro ``computed``)."""
    phis = [resolution_text(spec) for spec in claim.resolutions or []]
    listed = ", ".join(phis) if len(phis) <= PAIRS_NAMED else f"{len(phis)} resolutions ({phis[0]}, ...)"
    return str(kind_names().computed(claim, listed))


def reading_of(
    claim: ClaimVerdict,
    audit: Audit,
    paper: Mapping[str, ExperimentInfo] | None = None,
    flips: Sequence[tuple[str, str]] = (),
) -> Reading:
    """A claim of the audit as the formats print it (``paper``: the paper's scale, None: unknown)."""
    experiments = audit.context.experiments
    labels = {s: info.label for e in experiments.values() for s, info in e.settings.items()}
    what = f"mean {'final ' if claim.claim.round == 'final' else ''}{said(claim.claim.statistic)}"

    def reduced(c: Comparison) -> list[str]:
        found = []
        for place in c.experiment.split(" / "):
            run = experiments.get(place)
            if run is not None and paper is not None:
                below = reduced_scale(run, paper.get(place), [s for s in (c.a, c.b) if s != "-"])
                found += [f"{place}: {why}" for why in below]
        return found

    pairs = [
        pair_of(c, e.experiment, what, labels, reduced(c)) for e in claim.experiments for c in e.comparisons
    ]
    decided = [p for p in pairs if p.verdict != NOT_EVALUATED]
    chosen = decider(claim)
    deciding = next((p for p in pairs if p.comparison is chosen), None)
    verdicts = {p.verdict for p in decided}
    mixed = None
    if REPRODUCED in verdicts and NOT_REPRODUCED in verdicts:
        mixed = (sum(p.verdict == REPRODUCED for p in decided), len(decided))
    if len(decided) == 1:
        only = decided[0]
        effect, value, interval = only.sentence, only.value, only.interval
        c = only.comparison
        if c.effect_name == "ratio of means" and math.isfinite(c.effect):  # the table's cells in words too
            size, ci, way = ratio_words(c.effect, c.ci_low, c.ci_high)
            value, interval = f"{size} {way}".strip(), ci or interval
    elif decided:
        effect, value, interval = _summary(decided, labels)
        targets = {p.comparison.a for p in decided}
        ratio = all(p.comparison.effect_name == "ratio of means" for p in decided)
        if ratio and len(targets) == 1 and " / " not in decided[0].experiment:
            subject = _names([*targets], labels)[decided[0].comparison.a]
            words = effect.replace("below on", "below the other's on").replace(
                "above on", "above the other's on"
            )
            effect = f"{subject}'s {what} is {words.replace('; ', '; and ')}" if effect else effect
        elif all(p.comparison.b == "-" for p in decided):  # one-sample: the setting's, or settings named
            if effect and len(targets) == 1:
                effect = f"{_names([*targets], labels)[decided[0].comparison.a]}'s {effect}"
        elif effect:
            effect = f"{what}: {effect}"
    else:
        effect, value, interval = "", "-", "-"
    carrying = [p for p in decided if p.verdict == claim.verdict] or decided
    reasons = list(dict.fromkeys(r for p in carrying for r in p.reduced))
    below = bool(carrying) and all(p.reduced for p in carrying)
    margin = _margin(claim)
    sides = [p.no_margin for p in decided if p.no_margin is not None]
    no_margin = None
    if sides and margin is not None:
        k = sides.count("supports")
        against = sides.count("against")
        no_margin = f"in the statement's direction on {k} of {len(sides)} pairs" + (
            f", the other way on {against}" if against else ""
        )
    outcome = outcome_text(claim.verdict, claim.category)
    if mixed is not None:
        verdict_text = f"mixed: {mixed[0]} of {mixed[1]} pairs (by the audit's rule {outcome})"
    else:
        verdict_text = outcome
    if below:
        verdict_text = (
            f"not evaluated at the paper's scale ({verdict_text} at reduced scale: {'; '.join(reasons)})"
        )
    lead = capitalize_first(effect) if effect else "No effect estimated"
    beside = "".join(f"; at the project's margin {m}: {v}" for m, v in _beside(claim))
    if no_margin is not None:
        headline = f"{lead}; without a margin {no_margin}; {margin}: {verdict_text}{beside}."
    else:
        headline = f"{lead}: {verdict_text}{beside}."
    return Reading(
        claim=claim,
        name=_name(claim, labels),
        pairs=pairs,
        decider=deciding,
        effect=effect,
        value=value,
        interval=interval,
        margin=margin,
        no_margin=no_margin,
        mixed=mixed,
        reduced=reasons,
        below_scale=below,
        verdict_text=verdict_text,
        headline=headline,
        flips=list(flips),
        direction=direction_sentence(claim, audit) if claim.claim.spec.states_direction else None,
        margins=margin_rows(claim),
    )


def build_view(audit: Audit, paper: Mapping[str, ExperimentInfo] | None = None) -> View:
    """The view of an audit (``paper``: the paper's scale, :func:`paper_scale`; None: not compared)."""
    grouped = []
    for s in statements(audit.claims):
        readings = [
            reading_of(
                c,
                audit,
                paper,
                [(choice.id, row.variant_verdict) for choice, row in audit.variants(c.claim.id) if row.flips],
            )
            for c in s.readings
        ]
        names = [r.name for r in readings]
        if len(set(names)) < len(names):  # readings named alike: told apart by their number
            readings = [
                dataclasses.replace(r, name=f"{r.name} (reading {i})") for i, r in enumerate(readings, 1)
            ]
        plain = [r for r in readings if r.margin is None]
        lead = plain[0] if plain and len(plain) < len(readings) else readings[0]
        name = names[readings.index(lead)]
        grouped.append(StatementView(s.id, name, s.verdict, s.category, readings, lead))
    experiments = audit.context.experiments
    reduced = {}
    for name, run in experiments.items():
        if paper is not None:
            found = reduced_scale(run, paper.get(name), run.settings)
            if found:
                reduced[name] = found
    refs = {
        c.experiment: c.reference for claim in audit.claims for c in claim_comparisons(claim) if c.reference
    }
    found_counts = counts(audit)
    return View(
        audit=audit,
        statements=grouped,
        counts=found_counts,
        n_statements=sum(found_counts.values()),
        n_readings=len(audit.claims),
        n_computed=len(audit.computed),
        flipped=flipped_statements(audit),
        seeds_text=seeds_text(audit),
        seeds_span=seeds_span(audit),
        reduced=reduced,
        references=refs,
    )


# ---------------------------------------------------------------- one count everywhere

#: the phrases that state the number of statements or readings, each with what it counts
COUNT_PHRASES = (
    (re.compile(r"\b[Oo]f the (?:paper's )?(\d+) (?:audited )?statements\b"), "statements"),
    (re.compile(r"\b(\d+) statements of the paper\b"), "statements"),
    (re.compile(r"\bthe paper's (\d+) audited statements?\b"), "statements"),
    (re.compile(r"\((\d+) readings\b"), "readings"),
    (re.compile(r"\b[Oo]f the (\d+) readings\b"), "readings"),
)


def stated_counts(text: str) -> dict[str, set[int]]:
    """Every number of statements and of readings a document states (:data:`COUNT_PHRASES`)."""
    found: dict[str, set[int]] = {"statements": set(), "readings": set()}
    flat = " ".join(text.split())
    for pattern, what in COUNT_PHRASES:
        found[what].update(int(n) for n in pattern.findall(flat))
    return found


def count_mismatches(text: str, view: View) -> list[str]:
    """Where a document states another number of statements or readings than the view's (one count
    everywhere): empty when every stated count is the view's."""
    want = {"statements": view.n_statements, "readings": view.n_readings}
    return [
        f"{n} {what} stated, the audit has {want[what]}"
        for what, numbers in stated_counts(text).items()
        for n in sorted(numbers)
        if n != want[what]
    ]
