"""The design history of the shipped findings, read from the repository's record: what had been
seen before the analysis plan of the confirmatory run was committed.

    python -m vhct.reporting.history [--repo .] [--markdown out.md]

prints (or writes) the Markdown section "Design history" (template ``history.md.j2``). The record,
:class:`DesignHistory` (:func:`design_history` builds it), holds

- every earlier shipped findings version: each commit before the plan that changed the shipped
  audit (``docs/findings/audit.json``), the config files and commit of the run that made it as its
  ``provenance.json`` names them, and the seeds each experiment ran there (read from that version's
  audit JSON loosely, as old versions have older formats, by :mod:`vhct.reporting.audit.seen`);
- the commits that changed the claims file after the first shipped findings and before the plan,
  with the claims (by id) and other sections whose content changed, and the newest shipped version
  each came after;
- the plan: the file the final run's config names (key ``plan``), the commit that last changed it
  before the run, and the run's start (the shipped ``provenance.json``), with the gap between them
  and the last change before the run of each file the run read (its configs, the plan, the claims);
- the attempts not shipped (stopped, or finished and discarded), which git holds no data of: the
  hand-kept, validated :data:`ATTEMPTS` file;
- each experiment's pilot seeds, from the pilot config the final run's config names (loaded as the
  pipeline loads it, as it was at the run's commit: each setting's seeds and caps), beside those the
  plan recorded.

Git is read through :mod:`vhct.reporting.gitlog`: one ``git log`` per path, one ``git cat-file``
for the file versions, one ``git rev-list``.
"""

from __future__ import annotations

import argparse
import io
import json
import posixpath
import sys
import tarfile
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml
from jinja2 import Environment
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from vhct.pipeline.config import ConfigError, load
from vhct.pipeline.layout import PROVENANCE_JSON
from vhct.pipeline.provenance import Provenance
from vhct.reporting import gitlog
from vhct.reporting.audit.records import Audit, audit_json
from vhct.reporting.audit.seen import SHIPPED_AUDIT, ShippedVersion, audit_seeds, seed_set, shipped_versions
from vhct.reporting.published import DATA_DIR
from vhct.reporting.render import template_environment

#: the shipped findings' provenance record beside the audit (``SHIPPED_AUDIT``; ``make findings``)
SHIPPED_PROVENANCE = f"docs/{DATA_DIR}/{PROVENANCE_JSON}"
#: the hand-kept list of attempts not shipped (git holds no data of a run that was not shipped)
ATTEMPTS = "docs/attempts.yaml"
#: where the claims file is when the plan does not name it (a link into the package in a checkout)
DEFAULT_CLAIMS = "src/vhct/resources/claims.yaml"
#: the key of a config naming its analysis plan, and of the plan naming its file and pilot
PLAN_KEY, PLAN_FILE, PLAN_PILOT = "plan", "file", "pilot"
#: the YAML loader of the files read from history (libyaml's where PyYAML has it: the claims file's
#: 20-odd versions and the plan's embedded samples take seconds with the pure-Python one)
YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
#: the template of the section
TEMPLATE = "history.md.j2"
#: characters of a commit's subject line a table cell shows (the rest is cut, marked with an ellipsis)
SUBJECT_WIDTH = 100
#: characters of a commit id the section prints
SHORT_ID = 7
#: why a design history cannot be told (:class:`Unavailable`): no git repository at the folder the
#: document is rendered in, a shallow clone, a run that records no commit, a run commit the
#: repository lacks, a run whose config names no analysis plan
UNAVAILABLE = ("no-git", "shallow", "no-commit", "unknown-commit", "no-plan")


class HistoryError(ValueError):
    """A repository whose record cannot give the design history: the message names what is missing."""


class NoPlan(HistoryError):
    """The run's config names no analysis plan: an exploratory run has no design history to tell."""


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ExperimentSeeds(_Record):
    """The seeds one experiment ran (the union over its settings)."""

    experiment: str
    seeds: tuple[int, ...]

    @property
    def ranges(self) -> str:
        """The seeds as ranges: ``0-199`` or ``0-3, 7``."""
        return seed_ranges(self.seeds)


class ShippedFindings(_Record):
    """One shipped version of the findings (the guard's record of its commit and seeds,
    :class:`vhct.reporting.audit.seen.ShippedVersion`) and the run that made it."""

    version: ShippedVersion
    #: the run's commit and config files as its provenance.json names them (None where it has none)
    run_commit: str | None
    config_files: tuple[str, ...]
    run_started: datetime | None
    #: the findings of the same run as the version before (re-rendered or re-formatted, not re-run)
    same_run: bool

    @property
    def experiments(self) -> tuple[ExperimentSeeds, ...]:
        """The seeds each experiment ran, as its audit records them."""
        return _experiment_seeds(self.version.seeds)


class ClaimsChange(_Record):
    """A commit that changed the claims file: what changed, and after which shipped findings."""

    commit: str
    date: datetime
    subject: str
    added: tuple[str, ...]
    removed: tuple[str, ...]
    changed: tuple[str, ...]
    #: the file's other top-level sections whose content changed (rules, defaults, ...)
    sections: tuple[str, ...]
    #: the newest earlier shipped run (the version that shipped it) this change is not part of
    after: str | None


class FileChange(_Record):
    """The last commit before the final run that changed a file the run read."""

    path: str
    commit: str
    date: datetime
    subject: str
    before_run: timedelta


class Plan(_Record):
    """The analysis plan the final run ran on: its file and the commit that last changed it."""

    path: str
    commit: str
    date: datetime
    subject: str
    #: the code commit the plan records it was written at (its key ``commit``), if any
    written_at: str | None


class FinalRun(_Record):
    """The run of the shipped findings: by default the newest shipped version's, or the one whose
    provenance and audit the documents are rendered from (:class:`ShippedRun`)."""

    commit: str
    #: the newest commit that shipped this run's findings (None: none has yet)
    findings_commit: str | None
    config_files: tuple[str, ...]
    started: datetime
    finished: datetime | None
    experiments: tuple[ExperimentSeeds, ...]


class ShippedRun(_Record):
    """The run a document tells the design history of, from its shipped provenance and audit."""

    commit: str | None
    started: datetime
    finished: datetime | None
    config_files: tuple[str, ...]
    experiments: tuple[ExperimentSeeds, ...]


class Unavailable(_Record):
    """The design history where the repository's record cannot give it: why (one of
    :data:`UNAVAILABLE`), and the commit concerned where there is one. The formats' templates say so
    in one sentence."""

    reason: str = Field(pattern="^(no-git|shallow|no-commit|unknown-commit|no-plan)$")
    commit: str | None = None


class SeenSeeds(_Record):
    """Seeds of the final run that an earlier shipped version had already run, in one experiment."""

    experiment: str
    seeds: tuple[int, ...]
    confirmatory: tuple[int, ...]
    #: the earlier shipped versions (commits) whose run had any of them, oldest first
    versions: tuple[str, ...]


class Attempt(_Record):
    """A confirmatory run that was started and not shipped: stopped, or finished and discarded
    (from :data:`ATTEMPTS`; ``stopped`` says why)."""

    date: date
    plan_commit: str = Field(pattern=r"^[0-9a-f]{7,40}$")
    config: str
    ran: str = Field(min_length=1)
    stopped: str = Field(min_length=1)
    told_in: str | None = None


class Attempts(_Record):
    """The file :data:`ATTEMPTS`: the attempts not shipped, oldest first."""

    attempts: tuple[Attempt, ...] = ()


class PilotExperiment(_Record):
    """An experiment's pilot: the seeds its settings ran (with their caps) in the pilot config, the
    settings that ran fewer, and the seeds the plan recorded (None where it recorded none)."""

    experiment: str
    seeds: tuple[int, ...]
    #: the settings that ran fewer seeds than the experiment (caps), with their counts
    fewer: tuple[tuple[str, int], ...]
    recorded: tuple[int, ...] | None

    @property
    def ranges(self) -> str:
        """The pilot's seeds as ranges."""
        return seed_ranges(self.seeds)


class DesignHistory(_Record):
    """What was seen before the analysis plan of the shipped findings (see the module)."""

    shipped: tuple[ShippedFindings, ...]
    claims_changes: tuple[ClaimsChange, ...]
    claims_path: str
    plan: Plan
    run: FinalRun
    last_changes: tuple[FileChange, ...]
    attempts: tuple[Attempt, ...]
    pilot_config: str
    pilot: tuple[PilotExperiment, ...]

    @property
    def gap(self) -> timedelta:
        """From the plan's commit to the final run's start."""
        return self.run.started - self.plan.date

    @property
    def runs(self) -> tuple[ShippedFindings, ...]:
        """The earlier shipped versions that shipped a run of their own (not a re-rendering)."""
        return tuple(v for v in self.shipped if not v.same_run)

    @property
    def seen(self) -> tuple[SeenSeeds, ...]:
        """Per experiment of the final run, its seeds an earlier shipped version had run."""
        out = []
        for exp in self.run.experiments:
            mine, before, where = set(exp.seeds), set(), []
            for shipped in self.runs:
                for other in shipped.experiments:
                    if other.experiment == exp.experiment and mine & set(other.seeds):
                        before |= mine & set(other.seeds)
                        where.append(shipped.version.commit)
            if before:
                out.append(
                    SeenSeeds(
                        experiment=exp.experiment,
                        seeds=tuple(sorted(before)),
                        confirmatory=exp.seeds,
                        versions=tuple(where),
                    )
                )
        return tuple(out)

    @property
    def pilot_mismatches(self) -> tuple[PilotExperiment, ...]:
        """The pilot's experiments whose seeds the plan recorded otherwise."""
        return tuple(p for p in self.pilot if p.recorded is not None and p.recorded != p.seeds)

    def claims_changes_after(self, commit: str | None) -> tuple[ClaimsChange, ...]:
        """The claims changes that came after the shipped run ``commit`` (a version of
        :attr:`runs`), and after every run before it."""
        order = [v.version.commit for v in self.runs]
        if commit not in order:
            return ()
        later = set(order[order.index(commit) :])
        return tuple(c for c in self.claims_changes if c.after in later)


def seed_ranges(seeds: Iterable[int]) -> str:
    """Seeds as ranges of consecutive ones: ``0-199``, ``0-3, 7``; ``none`` for no seed."""
    ordered = sorted(set(seeds))
    runs: list[list[int]] = []
    for seed in ordered:
        if runs and seed == runs[-1][-1] + 1:
            runs[-1].append(seed)
        else:
            runs.append([seed])
    return ", ".join(str(r[0]) if len(r) == 1 else f"{r[0]}-{r[-1]}" for r in runs) or "none"


def clipped(text: str, width: int = SUBJECT_WIDTH) -> str:
    """``text`` cut to ``width`` characters at a word, an ellipsis marking the cut."""
    if len(text) <= width:
        return text
    return text[:width].rsplit(" ", 1)[0].rstrip(" ,;:(") + " ..."


def when(moment: datetime) -> str:
    """A time as the section prints it: ``2026-11-27 06:05:14 UTC``."""
    return f"{moment.astimezone(UTC):%Y-%m-%d %H:%M:%S} UTC"


def duration_text(span: timedelta) -> str:
    """A duration in words: ``38 s``, ``8 min 28 s``, ``2 h 5 min``, ``3 days 4 h``."""
    seconds = int(round(span.total_seconds()))
    sign, seconds = ("-" if seconds < 0 else ""), abs(seconds)
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{sign}{days} day{'s' if days != 1 else ''} {hours} h"
    if hours:
        return f"{sign}{hours} h {minutes} min"
    return f"{sign}{minutes} min {secs} s" if minutes else f"{sign}{secs} s"


def grouped(experiments: Iterable[ExperimentSeeds | PilotExperiment]) -> list[tuple[str, list[str]]]:
    """Experiments grouped by their seeds: ``(ranges, [experiment, ...])``, most seeds first."""
    groups: dict[tuple[int, ...], list[str]] = {}
    for exp in experiments:
        groups.setdefault(tuple(exp.seeds), []).append(exp.experiment)
    ordered = sorted(groups.items(), key=lambda item: (-len(item[0]), item[0]))
    return [(seed_ranges(seeds), names) for seeds, names in ordered]


# ------------------------------------------------------------------ reading the record


def _json(data: bytes | None) -> dict[str, Any]:
    try:
        value = json.loads(data) if data else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _yaml(data: bytes | None) -> Any:
    try:
        return yaml.load(data, Loader=YAML_LOADER) if data else None
    except yaml.YAMLError:
        return None


def _time(value: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        return None


def _experiment_seeds(seeds: Mapping[str, Iterable[int]]) -> tuple[ExperimentSeeds, ...]:
    """Each experiment's seeds (experiment -> seeds, as ``audit_seeds`` reads them) as records."""
    return tuple(ExperimentSeeds(experiment=e, seeds=tuple(s)) for e, s in seeds.items())


def experiment_seeds(audit: bytes | None) -> tuple[ExperimentSeeds, ...]:
    """The seeds each experiment ran, from a version of the shipped audit of any format
    (:func:`vhct.reporting.audit.seen.audit_seeds`, the reader the analysis plan's guard uses)."""
    return _experiment_seeds(audit_seeds(_json(audit)))


def claims_diff(before: Any, after: Any) -> tuple[list[str], list[str], list[str], list[str]]:
    """The claim ids added, removed and changed between two versions of the claims file, and its
    other top-level sections that changed."""

    def by_id(doc: Any) -> dict[str, Any]:
        claims = doc.get("claims") if isinstance(doc, dict) else None
        return (
            {str(c["id"]): c for c in claims or () if isinstance(c, dict) and "id" in c}
            if isinstance(claims, list)
            else {}
        )

    old, new = by_id(before), by_id(after)
    added = [i for i in new if i not in old]
    removed = [i for i in old if i not in new]
    changed = [i for i in new if i in old and new[i] != old[i]]
    keys = dict.fromkeys([*(before or {}), *(after or {})]) if _mappings(before, after) else {}
    sections = [k for k in keys if k != "claims" and (before or {}).get(k) != (after or {}).get(k)]
    return added, removed, changed, sections


def _mappings(*docs: Any) -> bool:
    return all(d is None or isinstance(d, dict) for d in docs)


def read_attempts(repo: Path, plan_commits: Sequence[str]) -> tuple[Attempt, ...]:
    """The attempts not shipped of :data:`ATTEMPTS` (none where the file is absent), each naming a
    commit that changed the plan (``plan_commits``); anything else is a one-line :class:`HistoryError`."""
    path = repo / ATTEMPTS
    if not path.is_file():
        return ()
    try:
        attempts = Attempts.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")) or {})
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise HistoryError(f"{path}: not YAML ({' '.join(str(exc).split())})") from None
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "the file"
        raise HistoryError(f"{path}: {where}: {first['msg']}") from None
    for i, attempt in enumerate(attempts.attempts):
        if not any(c.startswith(attempt.plan_commit) for c in plan_commits):
            raise HistoryError(
                f"{path}: attempts.{i}.plan_commit: {attempt.plan_commit} is no commit that changed "
                "the plan (git log of the plan's file)"
            )
    return attempts.attempts


def pilot_seeds(
    repo: Path, pilot_config: str, recorded: dict[str, Any] | None, rev: str | None = None
) -> tuple[PilotExperiment, ...]:
    """Each experiment's pilot seeds: the union of its settings' seeds (caps applied) in the pilot
    config as the pipeline loads it, beside the seeds the plan recorded. ``rev``: the config's folder
    as it was at that commit (the run's: the history of given findings does not move with later
    edits of the config), else the checkout's files."""
    with tempfile.TemporaryDirectory(prefix="vhct-history-") as tmp:
        root = repo
        if rev is not None:
            folder = posixpath.dirname(pilot_config) or "."
            archive = gitlog.git(repo, "archive", "--format=tar", rev, folder)
            with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
                tar.extractall(tmp, filter="data")
            root = Path(tmp)
        try:
            config, _ = load([root / pilot_config], plan=False)
        except (ConfigError, OSError) as exc:
            where = f"{pilot_config} at {rev[:SHORT_ID]}" if rev is not None else str(repo / pilot_config)
            raise HistoryError(f"{where}: the pilot config cannot be loaded ({exc})") from None
    out = []
    for name in config.experiments:
        per_setting = {s: tuple(info.seeds) for s, info in config.setting_info(name).items()}
        seeds = set(config.experiment_info(name).seeds).union(*per_setting.values())
        noted = (recorded or {}).get(name)
        out.append(
            PilotExperiment(
                experiment=name,
                seeds=tuple(sorted(seeds)),
                fewer=tuple((s, len(v)) for s, v in per_setting.items() if len(v) < len(seeds)),
                recorded=tuple(sorted(seed_set(noted))) if isinstance(noted, list) else None,
            )
        )
    return tuple(out)


def _relative(config_file: str, name: str) -> str:
    """``name`` (as a config writes it, relative to the config's folder) relative to the repository."""
    return posixpath.normpath(posixpath.join(posixpath.dirname(config_file), name))


def design_history(repo: Path | str = ".", run: ShippedRun | None = None) -> DesignHistory:
    """The design history of the findings shipped in ``repo`` (see the module): of ``run`` where
    given (the findings a document is rendered from), else of the newest shipped version in git."""
    repo = Path(repo)
    versions = gitlog.changes(repo, SHIPPED_AUDIT)
    head_prov = _json(gitlog.show(repo, versions[0].commit, SHIPPED_PROVENANCE)) if versions else {}
    if run is None:
        if not versions:
            raise HistoryError(f"{repo}: no commit ships findings ({SHIPPED_AUDIT} has no history)")
        run_commit, started = head_prov.get("commit"), _time(head_prov.get("started_utc"))
        finished = _time(head_prov.get("finished_utc"))
        config_files = tuple(str(f) for f in head_prov.get("config_files") or ())
        if not isinstance(run_commit, str) or started is None or not config_files:
            raise HistoryError(
                f"{repo}: {SHIPPED_PROVENANCE} at {versions[0].commit[:7]} names no run commit, start "
                "or config files"
            )
        head_audit = gitlog.show(repo, versions[0].commit, SHIPPED_AUDIT)
        run = ShippedRun(
            commit=run_commit,
            started=started,
            finished=finished,
            config_files=config_files,
            experiments=experiment_seeds(head_audit),
        )
    if run.commit is None or not run.config_files:
        raise HistoryError(f"{repo}: the run records no commit or config files")
    run_commit, started, config_files = run.commit, run.started, run.config_files
    same = head_prov.get("commit") == run_commit and _time(head_prov.get("started_utc")) == started
    findings_commit = versions[0].commit if versions and same else None
    # the plan the run's config names, and the pilot it names
    spec = _yaml(gitlog.show(repo, run_commit, config_files[-1]))
    spec = spec.get(PLAN_KEY) if isinstance(spec, dict) else None
    if not isinstance(spec, dict) or not isinstance(spec.get(PLAN_FILE), str):
        raise NoPlan(
            f"{repo}: {config_files[-1]} at {run_commit[:7]} names no analysis plan (key {PLAN_KEY})"
        )
    plan_path = _relative(config_files[-1], spec[PLAN_FILE])
    pilot_config = _relative(config_files[-1], str(spec.get(PLAN_PILOT, "config.yaml")))
    plan_changes = gitlog.changes(repo, plan_path, rev=run_commit)
    if not plan_changes:
        raise HistoryError(f"{repo}: no commit before the run at {run_commit[:7]} wrote {plan_path}")
    plan_change = plan_changes[0]
    # the shipped versions before the plan, oldest first
    graph = gitlog.ancestry(repo)
    before_plan = gitlog.ancestors(graph, plan_change.commit)
    earlier = [v for v in reversed(versions) if v.commit in before_plan]
    # the claims file the plan names, and its changes after the first shipped findings
    plan_blob = f"{plan_change.commit}:{plan_path}"
    plan_doc = _yaml(gitlog.blobs(repo, [plan_blob]).get(plan_blob))
    plan_doc = plan_doc if isinstance(plan_doc, dict) else {}
    claims_path = (
        _relative(plan_path, plan_doc["claims_file"])
        if isinstance(plan_doc.get("claims_file"), str)
        else DEFAULT_CLAIMS
    )
    claims_log = (
        gitlog.changes(repo, claims_path, rev=plan_change.commit, since=earlier[0].commit, merges=False)
        if earlier
        else []
    )
    provs = gitlog.blobs(repo, [f"{v.commit}:{SHIPPED_PROVENANCE}" for v in earlier])
    claim_blobs = gitlog.blobs(repo, {b for c in claims_log for b in (c.before, c.after) if b})
    seeds = {v.commit: v for v in shipped_versions(repo)}
    shipped = _shipped([seeds[v.commit] for v in earlier if v.commit in seeds], provs)
    runs = [v.version.commit for v in shipped if not v.same_run]
    history = {commit: gitlog.ancestors(graph, commit) for commit in runs}
    claims_changes = []
    for change in reversed(claims_log):
        added, removed, changed, sections = claims_diff(
            _yaml(claim_blobs.get(change.before or "")), _yaml(claim_blobs.get(change.after or ""))
        )
        after = [commit for commit in runs if change.commit not in history[commit]]
        claims_changes.append(
            ClaimsChange(
                commit=change.commit,
                date=change.date,
                subject=change.subject,
                added=tuple(added),
                removed=tuple(removed),
                changed=tuple(changed),
                sections=tuple(sections),
                after=after[-1] if after else None,
            )
        )
    last_changes = []
    for path in (*config_files, plan_path, claims_path):
        found = plan_changes if path == plan_path else gitlog.changes(repo, path, rev=run_commit)
        if found:
            last = found[0]
            last_changes.append(
                FileChange(
                    path=path,
                    commit=last.commit,
                    date=last.date,
                    subject=last.subject,
                    before_run=started - last.date,
                )
            )
    pilot = plan_doc.get("pilot")
    return DesignHistory(
        shipped=shipped,
        claims_changes=tuple(claims_changes),
        claims_path=claims_path,
        plan=Plan(
            path=plan_path,
            commit=plan_change.commit,
            date=plan_change.date,
            subject=plan_change.subject,
            written_at=plan_doc.get("commit") if isinstance(plan_doc.get("commit"), str) else None,
        ),
        run=FinalRun(
            commit=run_commit,
            findings_commit=findings_commit,
            config_files=config_files,
            started=started,
            finished=run.finished,
            experiments=run.experiments,
        ),
        last_changes=tuple(last_changes),
        attempts=read_attempts(repo, [c.commit for c in gitlog.changes(repo, plan_path)]),
        pilot_config=pilot_config,
        pilot=pilot_seeds(
            repo, pilot_config, pilot.get("seeds") if isinstance(pilot, dict) else None, run_commit
        ),
    )


def shipped_run(provenance: Provenance, audit: Audit) -> ShippedRun:
    """The run whose findings a document is rendered from: its provenance's commit, times and
    config files, and the seeds each experiment ran in its audit."""
    return ShippedRun(
        commit=provenance.commit,
        started=datetime.fromisoformat(provenance.started_utc),
        finished=datetime.fromisoformat(provenance.finished_utc),
        config_files=tuple(provenance.config_files),
        experiments=experiment_seeds(audit_json(audit).encode()),
    )


def history_of(repo: Path | str, run: ShippedRun) -> DesignHistory | Unavailable:
    """The design history of ``run`` read from the git repository whose top folder is ``repo`` (the
    checkout the documents are rendered in), or why it cannot be told there: no git repository
    there, a shallow clone, a run without a commit or with one the repository lacks, a run whose
    config names no plan. A record that is there but wrong is a :class:`HistoryError`."""
    repo = Path(repo)
    try:
        top = gitlog.git(repo, "rev-parse", "--show-toplevel").decode().strip()
    except gitlog.GitError:
        return Unavailable(reason="no-git")
    if Path(top).resolve() != repo.resolve():
        return Unavailable(reason="no-git")
    if gitlog.git(repo, "rev-parse", "--is-shallow-repository").decode().strip() == "true":
        return Unavailable(reason="shallow")
    if run.commit is None:
        return Unavailable(reason="no-commit")
    try:
        gitlog.resolve(repo, run.commit)
    except gitlog.GitError:
        return Unavailable(reason="unknown-commit", commit=run.commit)
    try:
        return design_history(repo, run)
    except NoPlan:
        return Unavailable(reason="no-plan", commit=run.commit)


def _shipped(versions: list[ShippedVersion], provs: dict[str, bytes]) -> tuple[ShippedFindings, ...]:
    """Each shipped version (oldest first) with the run its provenance names."""
    out: list[ShippedFindings] = []
    previous: tuple[Any, Any] | None = None
    for version in versions:
        prov = _json(provs.get(f"{version.commit}:{SHIPPED_PROVENANCE}"))
        run_key = (prov.get("run_id"), prov.get("started_utc"))
        out.append(
            ShippedFindings(
                version=version,
                run_commit=prov.get("commit") if isinstance(prov.get("commit"), str) else None,
                config_files=tuple(str(f) for f in prov.get("config_files") or ()),
                run_started=_time(prov.get("started_utc")),
                same_run=previous == run_key and any(run_key),
            )
        )
        previous = run_key
    return tuple(out)


# ------------------------------------------------------------------ rendering


def environment() -> Environment:
    """The section's template environment (the reporting templates, Markdown cells)."""
    env = template_environment()
    env.filters.update(
        duration=duration_text,
        ranges=seed_ranges,
        clip=clipped,
        when=when,
        short=lambda sha: sha[:SHORT_ID],
    )
    env.globals.update(grouped=grouped)
    return env


def render(history: DesignHistory | Unavailable, level: int = 2) -> str:
    """The Markdown section "Design history" of ``history`` (its heading at ``level``); where the
    record cannot give it (:class:`Unavailable`), the section says so in one sentence."""
    unavailable = isinstance(history, Unavailable)
    return environment().get_template(TEMPLATE).render(h=history, hashes="#" * level, unavailable=unavailable)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m vhct.reporting.history", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--repo", type=Path, default=Path("."), help="the repository (default: .)")
    parser.add_argument("--markdown", type=Path, help="write the section to this file too")
    args = parser.parse_args(argv)
    try:
        text = render(design_history(args.repo))
    except (HistoryError, gitlog.GitError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if args.markdown is not None:
        tmp = args.markdown.with_name(f".{args.markdown.name}.tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(args.markdown)
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
