"""The one reader of a published run's folder: the shipped ``docs/findings/`` or a finished run's
results folder (``results/paper-local``), as the findings document, the article and the redraw read it.

It reads the provenance record (:func:`vhct.pipeline.provenance.read_provenance`), then every file it
serves, each checked against the sha256 the record holds for it before it is parsed: the audit
(:func:`vhct.reporting.audit.records.read_audit`, which checks its vocabulary and estimates), each
audited experiment's final and timing aggregates, and every setting's per-round curve and timing
aggregates present (the results cache). The audit must name the record's run and config, and the final
aggregates hold the audited settings, horizons and seeds. A table must have its columns, at least one
row and finite numbers. Anything else is a :class:`FindingsError` in one line naming the file and the
command that makes it again; nothing is served until every file is read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from vhct.pipeline.aggregate import CURVE_COLUMNS, FINAL_COLUMNS, TIMING_COLUMNS
from vhct.pipeline.files import sha256
from vhct.pipeline.layout import (
    CURVE_TABLE,
    FINAL_TABLE,
    PROVENANCE_JSON,
    SETTING_TABLES,
    TIMING_TABLE,
    ResultsFolder,
)
from vhct.pipeline.provenance import REMAKE_OUTPUTS, Provenance, ProvenanceError, read_provenance
from vhct.reporting.audit import records
from vhct.reporting.audit.records import Audit

#: the folder under ``docs/`` the findings are shipped into (``vhct.reporting.ship``)
DATA_DIR = "findings"
#: the columns of each table the reader serves that must be finite numbers
FINITE = {
    CURVE_TABLE: ("t", "n_seeds", "mean", "std"),
    TIMING_TABLE: ("seed", "rounds", "wall_seconds"),
    FINAL_TABLE: ("horizon", "n_seeds", "final_mean", "final_std"),
}
#: what makes a changed file of each kind of folder again
REMAKE = {
    "findings": "restore it (`git checkout -- docs/findings`) or ship the run again (`make findings`)",
    "results": f"make the outputs again under the recorder (`{REMAKE_OUTPUTS}`)",
}


class FindingsError(RuntimeError):
    """A published input that is missing, unreadable, malformed or not the recorded run's: the
    message names the file (one line)."""


@dataclass(frozen=True)
class SettingCurve:
    """One setting's per-round curve and timing aggregates (the results cache), read and checked."""

    regret: Path
    timing: Path
    table: pd.DataFrame
    timings: pd.DataFrame


@dataclass(frozen=True)
class Published:
    """A published run's folder, every file checked against its provenance record."""

    folder: Path
    audit: Audit
    provenance: Provenance
    finals: dict[str, pd.DataFrame]
    timings: dict[str, pd.DataFrame]
    #: experiment -> setting -> its curve (only the settings whose curves the folder holds)
    curves: dict[str, dict[str, SettingCurve]]
    #: the audit's verdict table (None: the run's audit wrote none)
    verdicts: pd.DataFrame | None = None

    def curve(self, experiment: str, setting: str) -> Path:
        """Where a setting's per-round curve aggregate is (or would be: it may be absent)."""
        found = self.curves.get(experiment, {}).get(setting)
        if found is not None:
            return found.regret
        return Path(ResultsFolder(str(self.folder)).setting_table(experiment, setting, CURVE_TABLE))


def read_table(path: Path, columns: Sequence[str], finite: Sequence[str]) -> pd.DataFrame:
    """A CSV table with ``columns`` (others may follow), one row or more, and finite ``finite`` columns."""
    try:
        table = pd.read_csv(path)
    except pd.errors.EmptyDataError as exc:
        raise FindingsError(f"{path}: empty file, not a table") from exc
    except (OSError, ValueError, pd.errors.ParserError) as exc:  # UnicodeDecodeError is a ValueError
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise FindingsError(f"{path}: cannot read it as a CSV table ({reason})") from exc
    missing = [c for c in columns if c not in table.columns]
    if missing:
        raise FindingsError(
            f"{path}: lacks column(s) {', '.join(missing)} (has {', '.join(map(str, table))})"
        )
    if table.empty:
        raise FindingsError(f"{path}: a header and no rows")
    for column in finite:
        values = pd.to_numeric(table[column], errors="coerce").to_numpy(dtype=float)
        bad = np.flatnonzero(~np.isfinite(values))
        if bad.size:
            raise FindingsError(
                f"{path}: column {column} is not a finite number in {bad.size} row(s), the first on line "
                f"{bad[0] + 2} ({table[column].iloc[bad[0]]}; a truncated or edited file?)"
            )
    return table


def check_one_run(
    audit: Audit, prov: Provenance, audit_path: Path, finals: Mapping[str, pd.DataFrame]
) -> None:
    """Refuse (naming the mismatch) an audit without the record's run id, config files and checksum,
    or a final aggregate without the audited config's settings, horizons and seeds."""
    context = audit.context
    audited = context.configfiles
    if [Path(p).resolve() for p in audited] != [Path(p).resolve() for p in prov.config_files]:
        raise FindingsError(
            f"{audit_path} was made with the config file(s) {', '.join(audited) or '-'}, "
            f"the recorded run with {', '.join(prov.config_files)}: they come from different runs "
            "(run `make paper-local` again, then `make findings`)"
        )
    if context.run_id != prov.run_id:
        raise FindingsError(
            f"{audit_path} records run_id {context.run_id!r}, the provenance record "
            f"{prov.run_id!r}: they come from different runs (an audit the recorded run did not write)"
        )
    if context.config_sha256 is not None and context.config_sha256 != prov.config_sha256:
        raise FindingsError(
            f"{audit_path} records config_sha256 {context.config_sha256!r}, the provenance record "
            f"{prov.config_sha256!r}: they come from different runs"
        )
    for name, final in finals.items():
        exp = context.experiments[name]
        expected = {setting: info.horizon for setting, info in exp.settings.items()}
        found = dict(zip(final["setting"], final["horizon"], strict=True))
        seeds = dict(zip(final["setting"], final["n_seeds"], strict=True))
        wanted = {s: len(info.seeds) for s, info in exp.settings.items()}  # as the config ran them
        if found != expected or seeds != wanted:
            raise FindingsError(
                f"aggregate {name}/{FINAL_TABLE} holds settings and horizons {found} with seeds {seeds}, the "
                f"audited config {expected} with seeds {wanted}: they come from different runs"
            )


class _Reader:
    """Reads files of one folder, each checked against its record first."""

    def __init__(self, folder: Path, prov: Provenance, remake: str) -> None:
        self.folder, self.prov, self.remake = folder, prov, remake

    def verified(self, path: Path) -> Path:
        name = path.relative_to(self.folder).as_posix()
        want = self.prov.output_sha256.results.get(name)
        if want is None:
            raise FindingsError(
                f"{path}: the provenance record holds no sha256 of {name}: the recorded run did not make it; "
                f"{self.remake}"
            )
        try:
            got = sha256(path)
        except OSError as exc:
            raise FindingsError(f"{path}: cannot read it ({exc.strerror or exc}); {self.remake}") from exc
        if got != want:
            raise FindingsError(
                f"{path}: sha256 {got[:12]}..., the provenance record holds {want[:12]}...: not the file the "
                f"recorded run made; {self.remake}"
            )
        return path

    def table(self, path: Path, columns: Sequence[str], finite: Sequence[str]) -> pd.DataFrame:
        return read_table(self.verified(path), columns, finite)


def read_published(folder: Path | str, kind: str = "findings") -> Published:
    """Read and check a published folder (``kind``: "findings" or "results", which names the remedy)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise FindingsError(
            f"{folder}: no such folder (give docs/findings or a finished run's results folder)"
        )
    prov_path = folder / PROVENANCE_JSON
    try:
        prov = read_provenance(prov_path)
    except ProvenanceError as exc:
        raise FindingsError(str(exc)) from exc
    reader = _Reader(folder, prov, REMAKE[kind])
    layout = ResultsFolder(str(folder))
    audit_path = reader.verified(Path(layout.audit_json))
    try:
        audit = records.read_audit(audit_path)
    except records.AuditRecordError as exc:
        raise FindingsError(str(exc)) from exc
    finals, timings, curves = {}, {}, {}
    for name, exp in audit.context.experiments.items():
        final = Path(layout.aggregate(name, FINAL_TABLE))
        finals[name] = reader.table(final, FINAL_COLUMNS, FINITE[FINAL_TABLE])
        timing = Path(layout.aggregate(name, TIMING_TABLE))
        timings[name] = reader.table(timing, TIMING_COLUMNS, FINITE[TIMING_TABLE])
        for setting in exp.settings:
            regret, timing = (Path(layout.setting_table(name, setting, table)) for table in SETTING_TABLES)
            if not (regret.exists() or timing.exists()):
                continue
            table = reader.table(regret, CURVE_COLUMNS, FINITE[CURVE_TABLE])
            times = reader.table(timing, TIMING_COLUMNS, FINITE[TIMING_TABLE])
            curves.setdefault(name, {})[setting] = SettingCurve(regret, timing, table, times)
    check_one_run(audit, prov, audit_path, finals)
    table = Path(layout.verdicts)
    verdicts = (
        reader.table(table, ("statement", "reading", "effect", "ci_low", "ci_high"), ())
        if table.exists()
        else None
    )
    return Published(folder, audit, prov, finals, timings, curves, verdicts)
