"""The typed record of everything the article shows, collected from the inputs (:mod:`sources`).

The templates print this record and nothing else: every number, table and figure of the article
comes from here, and every sentence that states a finding is rendered from its fields.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vhct.article.sources import PAPER_CONFIG, ArticleError, Sources
from vhct.pipeline.config import Config
from vhct.pipeline.figure_kinds import figure_kind
from vhct.pipeline.specs import ExperimentInfo, FigureSpec
from vhct.reporting.audit.records import ComputedVerdict, QuestionAnswer, SensitivityChoice
from vhct.reporting.audit.verdicts import NOT_EVALUATED
from vhct.reporting.costs import AlgorithmCost, FullScale, algorithm_costs, experiment_seconds, full_scale
from vhct.reporting.gitlog import GitError
from vhct.reporting.history import DesignHistory, HistoryError, Unavailable, history_of, shipped_run
from vhct.reporting.view import Pair, Reading, View, build_view, listed, outcome_text, paper_scale

#: the article's title: the replicated paper's, marked as a replication as ReScience C asks
TITLE_MARK = "[Re]"
#: a reading's verdict for the remarks where its pairs disagree (a remark written for a verdict that
#: one pair decided is not printed then)
MIXED = "mixed"


@dataclass(frozen=True)
class Meta:
    """The article's metadata: title, the replicated paper, licence, the run's commit and input."""

    title: str
    paper_title: str
    paper_authors: list[str]
    paper_venue: str
    paper_year: int
    paper_url: str
    licence: str
    version: str
    commit: str
    uncommitted: bool
    source_kind: str
    source: str
    command: str
    started: str
    finished: str


#: a comparison of a statement as the results table prints it (the view's pair: an effect in units of
#: a threshold of seconds is a duration, ``0.253 s``, not ``7.035e-05`` of 3600 s)
Row = Pair


@dataclass(frozen=True)
class Statement:
    """One statement of the paper (a claim of the audit) with its verdict, reason and comparisons."""

    id: str
    quote: str
    location: str
    note: str
    reading_of: str | None
    verdict: str
    category: str
    coverage: str
    reason: str
    rows: list[Pair]
    #: the comparison that decided the verdict (the audit's rule, ``vhct.reporting.view.decider``)
    decider: Pair | None
    #: the implementation choices under which its verdict flips: (choice id, variant verdict)
    flips: list[tuple[str, str]]
    #: which way the target's mean differs, in one plain sentence from its comparisons (or None)
    direction: str | None = None
    #: its verdict at its own margins and at each other margin it names (``view.margin_rows``)
    margins: list[dict[str, Any]] = field(default_factory=list)
    #: the view's reading: its name in words, effect sentence, pairs, scale and headline
    reading: Reading | None = None


@dataclass(frozen=True)
class Setting:
    """A row of the hyperparameter table: a setting, its algorithm and parameters, and where it ran
    (experiment -> rounds and seeds)."""

    name: str
    algorithm: str
    label: str
    params: dict[str, Any]
    runs: dict[str, tuple[int, int]]


@dataclass(frozen=True)
class DataSet:
    """A data file the run's config declares: its path, sha256 and sources, and the experiments using it."""

    name: str
    path: str
    sha256: str
    urls: list[str]
    experiments: list[str]


@dataclass(frozen=True)
class RegretFigure:
    """A regret figure of the run: the curve aggregates it draws (experiment -> setting -> path) and
    whether all of them are in the input; ``seeds``: per panel experiment, the seeds per setting;
    ``spec``: the declared figure its drawer takes."""

    name: str
    kind: str
    title: str
    curves: dict[str, dict[str, Path]]
    present: bool
    missing: int
    seeds: dict[str, dict[str, int]]
    spec: FigureSpec


@dataclass(frozen=True)
class Article:
    """Everything the article shows."""

    meta: Meta
    #: the view of the audit (:mod:`vhct.reporting.view`): statements, readings, counts, scale
    view: View
    #: the paper's statements per verdict, in the audit's order of verdicts (a statement read in
    #: several ways counts once, ``verdicts.statements``): the one place the article counts them
    by_verdict: dict[str, list[str]]
    seeds_text: str
    experiments: list[ExperimentInfo]
    statements: list[Statement]
    verdicts: dict[str, str]
    readings: list[tuple[str, dict[str, str], bool]]
    #: statements decided by computation on the standard partition, not on runs
    computed: list[ComputedVerdict]
    #: the implementation choices the paper leaves open, each with the claims it was read again on
    sensitivity: list[SensitivityChoice]
    discrepancies: list[Any]
    beyond: list[QuestionAnswer]
    settings: list[Setting]
    data_sets: list[DataSet]
    config_files: list[str]
    config_changed: list[str]
    algorithm_costs: list[AlgorithmCost]
    experiment_seconds: dict[str, float]
    wall_seconds: float
    machine: dict[str, Any]
    versions: dict[str, Any]
    full_scale: FullScale
    #: the peak resident memory of the run's largest process (one job), MB; None: not recorded
    memory_mb: float | None
    figures: list[RegretFigure]
    upstream: list[tuple[str, str]]
    alpha: float
    rules: dict[str, str] = field(default_factory=dict)
    #: what had been seen before the run's analysis plan, from the checkout's git record (the record
    #: docs/findings.md's section is rendered from too; Unavailable: why git cannot tell it)
    history: DesignHistory | Unavailable | None = None

    @property
    def counts(self) -> dict[str, int]:
        """The paper's statements per verdict (the view's, the one count)."""
        return self.view.counts

    @property
    def n_statements(self) -> int:
        """The paper's statements checked on runs (each once, however many its readings)."""
        return self.view.n_statements

    @property
    def n_readings(self) -> int:
        """The readings of the paper's statements (claims of the audit)."""
        return self.view.n_readings

    def verdict(self, claim: str) -> str | None:
        """The verdict of a claim id as a remark may rest on it: "mixed" where its pairs disagree (no
        pair decides it), else the audit's verdict (None: no such claim in the audit)."""
        found = self.view.reading(claim)
        if found is not None and found.mixed:
            return MIXED
        return self.verdicts.get(claim)

    def at_margin(self, claim: str) -> tuple[str, str] | None:
        """A claim's first other margin (the project's, read beside its verdict) as its thresholds'
        text and its verdict there (None: no such claim, or no other margin)."""
        found = self.view.reading(claim)
        rows = [] if found is None else found.margins
        return (rows[1]["text"], rows[1]["verdict"]) if len(rows) > 1 else None

    def rows(self, claim: str, verdict: str | None = None) -> list[Row]:
        """A claim's comparison rows, those with comparison verdict ``verdict`` if given (a remark
        names where its finding holds from these)."""
        found = self.statement(claim)
        rows = [] if found is None else found.rows
        return [r for r in rows if verdict is None or r.comparison.verdict == verdict]

    def statement(self, claim: str) -> Statement | None:
        """The statement of a claim id (None: no such claim in the audit)."""
        return next((s for s in self.statements if s.id == claim), None)

    def outcome(self, claim: str) -> str | None:
        """``verdict: category`` of a claim id (the verdict alone where the category repeats it)."""
        found = self.statement(claim)
        if found is None:
            return None
        if found.reading is not None and found.reading.mixed:
            return found.reading.short_verdict
        return outcome_text(found.verdict, found.category)


def _statements(view: View) -> list[Statement]:
    out = []
    for r in view.readings:
        c = r.claim
        out.append(
            Statement(
                id=c.claim.id,
                quote=c.claim.quote,
                location=c.claim.location,
                note=c.claim.note or "",
                reading_of=c.claim.reading_of,
                verdict=c.verdict,
                category=c.category,
                coverage=c.coverage,
                reason=c.reason,
                rows=r.pairs,
                decider=r.decider,
                flips=r.flips,
                direction=r.direction,
                margins=r.margins,
                reading=r,
            )
        )
    return out


def _settings(experiments: dict[str, ExperimentInfo]) -> list[Setting]:
    found: dict[str, Setting] = {}
    for name, exp in experiments.items():
        for setting, info in exp.settings.items():
            row = found.setdefault(setting, Setting(setting, info.algorithm, info.label, info.params, {}))
            row.runs[name] = (info.horizon, len(info.seeds))
    return list(found.values())


def run_config(sources: Sources) -> Config:
    """The config the run read (:meth:`Sources.config`: as the provenance record fixed it)."""
    return sources.config()


def _data_sets(cfg, experiments: dict[str, ExperimentInfo]) -> list[DataSet]:
    used: dict[str, list[str]] = {}
    for name in experiments:
        if name in cfg.experiments:
            for data in cfg.experiments[name].data:
                used.setdefault(data, []).append(name)
    return [
        DataSet(name, f.path, f.sha256, list(f.urls), used[name])
        for name, f in cfg.data.files.items()
        if name in used
    ]


def _seeds(sources: Sources, cfg, experiment: str, setting: str) -> int:
    """The seeds a setting ran on an experiment, else (a setting the run lacks) the config's."""
    run = sources.audit.context.experiments.get(experiment)
    info = run if run is not None and setting in run.settings else cfg.experiment_info(experiment)
    return len(info.settings[setting].seeds)


def regret_figures(sources: Sources, cfg) -> list[RegretFigure]:
    """The run's curve figures, each with its curve files (present or not) and its seeds per curve."""
    made = set(sources.provenance.figures)
    out = []
    for name, fig in cfg.figures.items():
        if name not in made or not figure_kind(fig.kind).aggregates:
            continue
        curves = {
            e: {s: sources.curve(e, s) for s in settings} for e, settings in cfg.figure_settings(name).items()
        }
        held = sources.published.curves
        missing = sum(s not in held.get(e, {}) for e, by in curves.items() for s in by)
        seeds = {e: {s: _seeds(sources, cfg, e, s) for s in by} for e, by in curves.items()}
        what = "Average regret" if fig.kind == "average_regret" else "Cumulative regret"
        title = fig.title or f"{what} on {listed([cfg.experiments[e].title for e in curves])}"
        out.append(
            RegretFigure(name, fig.kind, title, curves, missing == 0, missing, seeds, cfg.figure_spec(name))
        )
    return out


def _heading(path: Path) -> str:
    """A Markdown report's first heading (its title), else its file name."""
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            return line.lstrip("#").strip()
    return path.stem


def collect(sources: Sources, source_kind: str) -> Article:
    """The article's record from the inputs (``source_kind``: "shipped findings" or "results")."""
    audit, prov, cff = sources.audit, sources.provenance, sources.citation
    paper = cff.get("preferred-citation", {})
    authors = [
        f"{a.get('given-names', '')} {a.get('family-names', '')}".strip() for a in paper.get("authors", [])
    ]
    uncommitted = bool(prov.uncommitted_changes)
    meta = Meta(
        title=f"{TITLE_MARK} {paper.get('title', cff.get('title', ''))}",
        paper_title=paper.get("title", ""),
        paper_authors=authors,
        paper_venue=paper.get("journal", ""),
        paper_year=int(paper.get("year", 0)),
        paper_url=paper.get("url", ""),
        licence=cff.get("license", ""),
        version=str(cff.get("version", "")),
        commit=prov.commit or "unknown",
        uncommitted=uncommitted,
        source_kind=source_kind,
        source=str(sources.folder),
        command=prov.command,
        started=prov.started_utc,
        finished=prov.finished_utc,
    )
    cfg = run_config(sources)
    experiments = audit.context.experiments
    changed = [f for f, sha in prov.config_sha256.items() if sources.config_sha256_now.get(f) != sha]
    paper_config = sources.checkout / PAPER_CONFIG
    try:
        scale = full_scale(paper_config, sources.timings, experiments)
        view = build_view(audit, paper_scale(paper_config))
    except ValueError as exc:
        raise ArticleError(str(exc)) from exc
    try:
        history = history_of(sources.checkout, shipped_run(prov, audit))
    except (HistoryError, GitError) as exc:
        raise ArticleError(f"design history: {exc}") from exc
    alphas = {c.claim.alpha for c in audit.claims}
    return Article(
        meta=meta,
        view=view,
        by_verdict=view.by_verdict,
        seeds_text=view.seeds_text,
        experiments=list(experiments.values()),
        statements=_statements(view),
        verdicts={c.claim.id: c.verdict for c in audit.claims},
        readings=[(r.statement, r.readings, r.flips) for r in audit.reading_flips],
        computed=list(audit.computed),
        sensitivity=list(audit.sensitivity),
        discrepancies=list(audit.discrepancies),
        beyond=[
            q
            for q in (audit.beyond.questions if audit.beyond else [])
            if any(e.verdict != NOT_EVALUATED for e in q.experiments)
        ],
        settings=_settings(experiments),
        data_sets=_data_sets(cfg, experiments),
        config_files=list(prov.config_files),
        config_changed=changed,
        algorithm_costs=algorithm_costs(sources.timings),
        experiment_seconds=experiment_seconds(sources.timings),
        wall_seconds=prov.wall_seconds,
        machine=prov.machine.model_dump(),
        versions=dict(prov.versions),
        full_scale=scale,
        memory_mb=prov.max_rss_mb,
        figures=regret_figures(sources, cfg),
        upstream=[(p.name, _heading(p)) for p in sources.upstream],
        alpha=alphas.pop() if len(alphas) == 1 else math.nan,
        rules=dict(audit.rules),
        history=history,
    )
