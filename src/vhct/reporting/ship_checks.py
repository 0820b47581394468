"""The checks a run must pass before ``ship`` publishes it: its scale (the claims' minimum seeds),
that its audit, aggregates and figures are the content the provenance record fixed when the run
ended (and were made by that run: the record covers only what its command wrote), and one set
of package versions across provenance, audit and sidecars (the sidecars read through the
pipeline's one reader, ``vhct.pipeline.tables.read_sidecar``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from vhct.pipeline.files import sha256
from vhct.pipeline.provenance import REMAKE_OUTPUTS
from vhct.pipeline.tables import SIDECAR_SUFFIX, TABLE_SUFFIX, RunTableError, read_sidecar
from vhct.reporting.audit.records import Audit
from vhct.reporting.findings import FindingsError

#: what the provenance record must hold to identify its run (vhct.pipeline.provenance)
RUN_KEYS = (
    "run_id",
    "started_utc",
    "finished_utc",
    "config_files",
    "config_sha256",
    "figures",
    "versions",
    "output_sha256",
)


# ---------------------------------------------------------------- the scale of a run
def check_scale(audit: Audit, audit_path: Path, reduced: bool) -> None:
    """Refuse a run below the paper's scale unless ``reduced`` says it is meant."""
    short = audit.below_paper()
    if not short or reduced:
        return
    listed = ", ".join(f"{name} ({n})" for name, n in short.items())
    raise FindingsError(
        f"{audit_path}: not a paper-scale run: experiment(s) {listed} ran fewer seeds than the "
        f"{audit.paper_seeds} the audited claims need (min_seeds). Run `make paper-local` and ship that, "
        "or ship this run as a reduced-scale one with --reduced (its headline then says so)"
    )


# ---------------------------------------------------------------- one run's files
def _same_paths(a: Sequence[str], b: Sequence[str]) -> bool:
    return [Path(p).resolve() for p in a] == [Path(p).resolve() for p in b]


def check_one_run(
    audit: Audit, prov: Mapping[str, Any], audit_path: Path, aggregates: Mapping[str, Path]
) -> None:
    """Raise :class:`FindingsError` naming the mismatch unless the audit and its final aggregates
    come from the run the provenance record describes.

    The audit must carry the record's run id and config files (and checksums, when it records
    them); each final aggregate must hold the settings, horizons and seeds of the audited config.
    """
    lacking = [k for k in RUN_KEYS if k not in prov]
    if lacking:
        raise FindingsError(
            f"the provenance record lacks {', '.join(lacking)} (an older recorder): "
            "run `make paper-local` again"
        )
    context = audit.context
    audited = context.configfiles
    if not _same_paths(audited, prov["config_files"]):
        raise FindingsError(
            f"{audit_path} was made with the config file(s) {', '.join(audited) or '-'}, "
            f"the recorded run with {', '.join(prov['config_files'])}: they come from different runs "
            "(run `make paper-local` again, then `make findings`)"
        )
    if context.run_id != prov["run_id"]:
        raise FindingsError(
            f"{audit_path} records run_id {context.run_id!r}, the provenance record "
            f"{prov['run_id']!r}: they come from different runs (an audit the recorded run did not write)"
        )
    if context.config_sha256 is not None and context.config_sha256 != prov["config_sha256"]:
        raise FindingsError(
            f"{audit_path} records config_sha256 {context.config_sha256!r}, the provenance record "
            f"{prov['config_sha256']!r}: they come from different runs"
        )
    for name, path in aggregates.items():
        exp = context.experiments[name]
        expected = {setting: info.horizon for setting, info in exp.settings.items()}
        final = pd.read_csv(path)
        found = dict(zip(final["setting"], final["horizon"], strict=True))
        seeds = dict(zip(final["setting"], final["n_seeds"], strict=True))
        wanted = {s: len(info.seeds) for s, info in exp.settings.items()}  # as the config ran them
        if found != expected or seeds != wanted:
            raise FindingsError(
                f"{path} holds settings and horizons {found} with seeds {seeds}, the audited config "
                f"{expected} with seeds {wanted}: they come from different runs"
            )


def check_hashes(prov: Mapping[str, Any], files: Mapping[Path, tuple[str, str]]) -> None:
    """Each file must have the sha256 the provenance record gives it when its run ended.

    ``files``: path -> (part of ``output_sha256``: "results" or "figures", name recorded there).
    """
    recorded = prov["output_sha256"]
    for path, (part, name) in files.items():
        want = recorded.get(part, {}).get(name)
        if want is None:
            raise FindingsError(
                f"{path}: the provenance record has no checksum of {part}/{name}: the recorded run did "
                "not make it (the record covers only the outputs its command wrote; a rerun with nothing "
                f"to do makes none). Make them again under the recorder: `{REMAKE_OUTPUTS}`, then ship"
            )
        got = sha256(path)
        if got != want:
            raise FindingsError(
                f"{path}: sha256 {got[:12]}..., the recorded run left {want[:12]}...: the file changed "
                "after the run (another run, or an edit)"
            )


def sidecars(results: Path, experiments: Sequence[str]) -> list[Path]:
    """The run sidecars of ``experiments`` (``runs/<experiment>/<setting>/seed<n>.json``), sorted."""
    runs = [results / "runs" / name for name in experiments]
    return sorted(p for folder in runs for p in folder.glob(f"*/seed*{SIDECAR_SUFFIX}"))


def sidecar_versions(path: Path) -> dict[str, str | None]:
    """The package versions the run record at ``path`` (a sidecar) recorded, read by the pipeline's
    one reader; :class:`FindingsError` naming the file when it is not a valid run record."""
    table = path.with_name(path.name.removesuffix(SIDECAR_SUFFIX) + TABLE_SUFFIX)
    try:
        return read_sidecar(table).versions
    except RunTableError as exc:
        problems = "; ".join(exc.problems.values())
        raise FindingsError(f"run {table}: {problems}: run it again (`make paper-local`)") from exc


def version_differences(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[str]:
    """Packages whose versions differ between two ``versions`` records, as "name a vs b"."""
    return [f"{k} {a.get(k)} vs {b.get(k)}" for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]


def check_versions(
    prov: Mapping[str, Any], audit: Audit, audit_path: Path, results: Path
) -> None:
    """The package versions of the provenance record, the audit (when it records them) and every run
    sidecar of the audited experiments must agree; the error names the file and the packages."""
    versions = prov["versions"]
    records: list[tuple[Path, Mapping[str, str | None]]] = []
    if audit.context.versions is not None:  # the audit's own record of them
        records.append((audit_path, audit.context.versions))
    records += [(path, sidecar_versions(path)) for path in sidecars(results, list(audit.context.experiments))]
    for path, found in records:
        differ = version_differences(found, versions)
        if differ:
            raise FindingsError(
                f"{path} was made with other package versions than the recorded run "
                f"({'; '.join(differ)}; this file vs the provenance record): the run mixes "
                "installs, run it again in one environment"
            )


