"""What a run must pass before ``ship`` publishes it: the paper's scale (the claims' minimum seeds),
its files the content the provenance record fixed when the run ended (the record covers only what
its command wrote), and one set of package versions across provenance, audit and stored runs."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from vhct.pipeline.files import sha256
from vhct.pipeline.layout import ResultsFolder
from vhct.pipeline.provenance import REMAKE_OUTPUTS, Provenance
from vhct.pipeline.stale import AuditJob, read_spec
from vhct.pipeline.store import StoreError, read_batch
from vhct.reporting.audit.records import Audit
from vhct.reporting.published import FindingsError


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


def check_hashes(prov: Provenance, files: Mapping[Path, tuple[str, str]]) -> None:
    """Each file must have the sha256 the provenance record gave it when its run ended; ``files``:
    path -> (its part of ``output_sha256``, "results" or "figures", and its name there)."""
    recorded = prov.output_sha256
    for path, (part, name) in files.items():
        want = getattr(recorded, part).get(name)
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


def check_versions(prov: Provenance, audit: Audit, audit_path: Path, results: Path) -> None:
    """The package versions of the provenance record, the audit (when it records them) and every run of
    the batch files the audit read (its spec file's ``run_paths``, ``vhct.pipeline.stale``; each read
    by the run store's one reader: one that is not a valid batch file is refused, named) must agree."""
    versions = prov.versions
    records: list[tuple[Path, Mapping[str, str | None]]] = []
    if audit.context.versions is not None:
        records.append((audit_path, audit.context.versions))
    spec = Path(ResultsFolder(str(results)).spec("audit", "audit"))
    if not spec.is_file():
        raise FindingsError(
            f"{spec} is missing: the audit's spec names the runs it read; run it again (`make paper-local`)"
        )
    paths = {
        p
        for by_setting in read_spec(spec, AuditJob).run_paths.values()
        for files in by_setting.values()
        for p in files
    }
    for path in sorted(paths):
        try:
            batch = read_batch(path)
        except StoreError as exc:
            raise FindingsError(f"{exc}: run it again (`make paper-local`)") from exc
        records += [(Path(path), run.versions) for run in batch.record.runs]
    for path, found in records:
        keys = sorted(set(found) | set(versions))
        differ = [f"{k} {found.get(k)} vs {versions.get(k)}" for k in keys if found.get(k) != versions.get(k)]
        if differ:
            raise FindingsError(
                f"{path} was made with other package versions than the recorded run "
                f"({'; '.join(differ)}; this file vs the provenance record): the run mixes "
                "installs, run it again in one environment"
            )
