"""What a run must pass before ``ship`` publishes it: the paper's scale (the claims' minimum seeds),
its files the content the provenance record fixed when the run ended (the record covers only what
its command wrote), and one set of package versions across provenance, audit and run sidecars."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from vhct.pipeline.files import sha256
from vhct.pipeline.provenance import REMAKE_OUTPUTS
from vhct.pipeline.tables import SIDECAR_SUFFIX, TABLE_SUFFIX, RunTableError, read_sidecar
from vhct.reporting.audit.records import Audit
from vhct.reporting.findings import FindingsError

#: what the provenance record must hold to identify its run (vhct.pipeline.provenance)
RUN_KEYS = ("run_id", "started_utc", "finished_utc", "config_files", "config_sha256", "figures", "versions",
            "output_sha256")  # fmt: skip


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


def check_one_run(
    audit: Audit, prov: Mapping[str, Any], audit_path: Path, aggregates: Mapping[str, Path]
) -> None:
    """Refuse (naming the mismatch) an audit without the record's run id, config files and checksum,
    or a final aggregate without the audited config's settings, horizons and seeds."""
    lacking = [k for k in RUN_KEYS if k not in prov]
    if lacking:
        raise FindingsError(
            f"the provenance record lacks {', '.join(lacking)} (an older recorder): "
            "run `make paper-local` again"
        )
    context = audit.context
    audited = context.configfiles
    if [Path(p).resolve() for p in audited] != [Path(p).resolve() for p in prov["config_files"]]:
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
    """Each file must have the sha256 the provenance record gave it when its run ended; ``files``:
    path -> (its part of ``output_sha256``, "results" or "figures", and its name there)."""
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


def check_versions(prov: Mapping[str, Any], audit: Audit, audit_path: Path, results: Path) -> None:
    """The package versions of the provenance record, the audit (when it records them) and every run
    sidecar (``runs/<experiment>/<setting>/seed<n>.json``, read by the pipeline's one reader
    ``read_sidecar``: one that is no valid run record is refused, named) of the audited experiments
    must agree."""
    versions = prov["versions"]
    records: list[tuple[Path, Mapping[str, str | None]]] = []
    if audit.context.versions is not None:
        records.append((audit_path, audit.context.versions))
    folders = [results / "runs" / name for name in audit.context.experiments]
    for path in sorted(p for folder in folders for p in folder.glob(f"*/seed*{SIDECAR_SUFFIX}")):
        table = path.with_name(path.name.removesuffix(SIDECAR_SUFFIX) + TABLE_SUFFIX)
        try:
            records.append((path, read_sidecar(table).versions))
        except RunTableError as exc:
            problems = "; ".join(exc.problems.values())
            raise FindingsError(f"run {table}: {problems}: run it again (`make paper-local`)") from exc
    for path, found in records:
        keys = sorted(set(found) | set(versions))
        differ = [f"{k} {found.get(k)} vs {versions.get(k)}" for k in keys if found.get(k) != versions.get(k)]
        if differ:
            raise FindingsError(
                f"{path} was made with other package versions than the recorded run "
                f"({'; '.join(differ)}; this file vs the provenance record): the run mixes "
                "installs, run it again in one environment"
            )


