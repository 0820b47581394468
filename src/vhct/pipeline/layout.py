"""Where every output lives: one object per folder, from which the rules, ``ship``, the findings, the
analysis plan and the article take every path.

A config writes its results, figures and job logs in a folder of its own, named by its ``output``
(``results/paper-local``, ``figures/paper-local``, ``logs/paper-local``; the default config's are
``results``, ``figures``, ``logs`` themselves: :class:`Layout`). Every config's runs live in the one
run store, ``results/runs`` (``vhct.pipeline.store``), found by what they are. A results folder
(:class:`ResultsFolder`) holds the aggregates, the audit, the spec files, the provenance record and
the folder's owner record; the shipped findings' data folder holds the same names, so one object
reads both.

Every argument of a path method may be a Snakemake wildcard (``"{experiment}"``): the rules build
their patterns with the same methods the package reads the files with.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from vhct.pipeline.store import STORE

#: the roots of a config's folders: results, figures, job logs
RESULTS_ROOT, FIGURES_ROOT, LOGS_ROOT = "results", "figures", "logs"
OUTPUT_ROOTS = (RESULTS_ROOT, FIGURES_ROOT, LOGS_ROOT)
#: an experiment's aggregate tables (``vhct.pipeline.aggregate``): regret curves, final-round
#: summary, per-run timings
REGRET_TABLE, FINAL_TABLE, TIMING_TABLE = "regret.csv", "final.csv", "timing.csv"
EXPERIMENT_TABLES = (REGRET_TABLE, FINAL_TABLE, TIMING_TABLE)
#: a setting's aggregate tables: what a figure drawing it reads
CURVE_TABLE = REGRET_TABLE
SETTING_TABLES = (CURVE_TABLE, TIMING_TABLE)
#: the folder of the aggregates in a results folder
AGGREGATES = "aggregates"
#: the audit's outputs, its verdict table, the provenance record, the owner record
AUDIT_JSON, AUDIT_MD, AUDIT_HTML = "audit.json", "audit.md", "audit.html"
VERDICTS_CSV = "verdicts.csv"
PROVENANCE_JSON = "provenance.json"
OWNER_FILE = ".config-owner.json"
#: the folder of the jobs' spec files (``vhct.pipeline.stale``)
SPEC_DIR = ".specs"
#: the folder of the report's figure captions
REPORT_DIR = "report"
#: the file kinds of a figure
FIGURE_EXTS = ("pdf", "png")


@dataclass(frozen=True)
class ResultsFolder:
    """The paths inside one results folder (a config's, or the shipped findings' data folder)."""

    root: str

    def _path(self, *parts: str) -> str:
        return "/".join([self.root, *parts]) if self.root else "/".join(parts)

    def aggregate(self, experiment: str, table: str) -> str:
        """An experiment's aggregate table (one of :data:`EXPERIMENT_TABLES`)."""
        return self._path(AGGREGATES, experiment, table)

    def setting_table(self, experiment: str, setting: str, table: str) -> str:
        """A setting's aggregate table (one of :data:`SETTING_TABLES`)."""
        return self._path(AGGREGATES, experiment, "settings", setting, table)

    def spec(self, family: str, name: str) -> str:
        """The spec file of a job of ``family`` (aggregates, figures, captions, audit) named ``name``."""
        return self._path(SPEC_DIR, family, f"{name}.json")

    def caption(self, figure: str) -> str:
        """A figure's caption in the report."""
        return self._path(REPORT_DIR, f"{figure}.rst")

    @property
    def audit_json(self) -> str:
        return self._path(AUDIT_JSON)

    @property
    def audit_md(self) -> str:
        return self._path(AUDIT_MD)

    @property
    def audit_html(self) -> str:
        return self._path(AUDIT_HTML)

    @property
    def verdicts(self) -> str:
        return self._path(VERDICTS_CSV)

    @property
    def provenance(self) -> str:
        return self._path(PROVENANCE_JSON)

    @property
    def owner(self) -> str:
        return self._path(OWNER_FILE)


@dataclass(frozen=True)
class Layout:
    """Every folder of one config: its results, figures and logs, and the run store all share."""

    results: ResultsFolder
    figures: str
    logs: str
    store: str = STORE

    @classmethod
    def of(cls, output: str) -> Layout:
        """The layout of a config whose ``output`` is ``output`` (empty: the roots themselves)."""
        results, figures, logs = (f"{root}/{output}" if output else root for root in OUTPUT_ROOTS)
        return cls(ResultsFolder(results), figures, logs)

    def figure(self, name: str, ext: str) -> str:
        """A figure's file (``ext`` one of :data:`FIGURE_EXTS`)."""
        return f"{self.figures}/{name}.{ext}"

    def log(self, family: str, name: str) -> str:
        """The log of a job of ``family`` named ``name`` (a path below the family's folder)."""
        return f"{self.logs}/{family}/{name}.log"

    def run_log(self, batch_file: str) -> str:
        """The log of the run job that writes ``batch_file`` (a path in the store, or its pattern):
        in ``logs/runs``, beside no config's logs, as the store is beside no config's results."""
        return f"{LOGS_ROOT}/runs/{Path(batch_file).relative_to(self.store).with_suffix('')}.log"
