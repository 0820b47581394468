"""The article's inputs, read once: a folder laid out as ``docs/findings/`` (or a finished run's
results folder, which ``make findings`` copies it from) and the checkout's files it names.

The folder holds ``audit.json`` (read by the audit records' one reader), ``provenance.json`` (the
run's record: commit, command, config files and their sha256, wall time, machine, versions) and
``aggregates/<experiment>/{final,timing}.csv``; per-round curves
(``aggregates/<experiment>/settings/<setting>/regret.csv``, the per-setting aggregates the pipeline
writes) are used where present. Every unreadable or missing file is an :class:`ArticleError` naming it.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from vhct.pipeline.aggregate import CURVE_TABLE, SETTING_TABLE
from vhct.reporting.audit.records import Audit, AuditRecordError, read_audit

AUDIT_JSON = "audit.json"
PROVENANCE_JSON = "provenance.json"
AGGREGATES = "aggregates"
FINAL_CSV = "final.csv"
TIMING_CSV = "timing.csv"
#: the checkout's files the article reads besides the input folder
CITATION = "CITATION.cff"
UPSTREAM_DIR = Path("docs") / "upstream"
#: the upstream folder's index (not a report)
INDEX = "README.md"
#: the config of the paper's full scale, whose cost the article estimates
PAPER_CONFIG = Path("config") / "paper.yaml"
#: provenance keys the article needs
PROVENANCE_KEYS = (
    "commit", "command", "config_files", "config_sha256", "wall_seconds", "machine", "versions",
    "started_utc", "finished_utc",
)  # fmt: skip


class ArticleError(RuntimeError):
    """An input of the article that is missing or unreadable; the message names the file."""


def command(action: Callable[[], str]) -> int:
    """A command line's exit status: 0 with ``action``'s message printed, or 2 with a bad input's one
    line on stderr (nothing is written then)."""
    try:
        message = action()
    except (ArticleError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(message)
    return 0


@dataclass(frozen=True)
class Sources:
    """Every input file's content: the audit record, the provenance record, each audited experiment's
    final and timing aggregates, the curve files found, the checkout's citation record, the upstream
    reports' files, and the sha256 of each config file the run named as it is in the checkout today."""

    folder: Path
    checkout: Path
    audit: Audit
    provenance: dict[str, Any]
    finals: dict[str, pd.DataFrame]
    timings: dict[str, pd.DataFrame]
    citation: dict[str, Any]
    upstream: list[Path]
    config_sha256_now: dict[str, str | None]

    def curve(self, experiment: str, setting: str) -> Path:
        """Where a setting's per-round curve aggregate would be (it may be absent)."""
        return self.folder / SETTING_TABLE.format(experiment=experiment, setting=setting, table=CURVE_TABLE)


def _json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ArticleError(f"{path}: cannot read it as JSON ({exc})") from exc
    if not isinstance(data, dict):
        raise ArticleError(f"{path}: not a JSON object")
    return data


def _csv(path: Path) -> pd.DataFrame:
    try:
        return pd.read_csv(path)
    except (OSError, ValueError) as exc:
        raise ArticleError(f"{path}: cannot read the aggregate ({exc})") from exc


def _sha256(path: Path) -> str | None:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None


def read_sources(folder: Path | str, checkout: Path | str = ".") -> Sources:
    """Read the input folder and the checkout's files (citation, upstream reports, configs)."""
    folder, checkout = Path(folder), Path(checkout)
    if not folder.is_dir():
        raise ArticleError(
            f"{folder}: no such folder (give docs/findings or a finished run's results folder)"
        )
    try:
        audit = read_audit(folder / AUDIT_JSON)
    except AuditRecordError as exc:
        raise ArticleError(str(exc)) from exc
    prov_path = folder / PROVENANCE_JSON
    provenance = _json(prov_path)
    missing = [k for k in PROVENANCE_KEYS if k not in provenance]
    if missing:
        raise ArticleError(f"{prov_path}: lacks key(s) {', '.join(missing)}")
    finals, timings = {}, {}
    for name in audit.context.experiments:
        base = folder / AGGREGATES / name
        finals[name] = _csv(base / FINAL_CSV)
        timings[name] = _csv(base / TIMING_CSV)
    cff = checkout / CITATION
    try:
        citation = yaml.safe_load(cff.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ArticleError(f"{cff}: cannot read the citation record ({exc})") from exc
    upstream_dir = checkout / UPSTREAM_DIR
    reports = upstream_dir.glob("*.md") if upstream_dir.is_dir() else []
    upstream = sorted(p for p in reports if p.name != INDEX)
    now = {name: _sha256(checkout / name) for name in provenance["config_sha256"]}
    return Sources(folder, checkout, audit, provenance, finals, timings, citation, upstream, now)
