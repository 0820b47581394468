"""The replication's findings, shipped with the repository: ``docs/findings.md`` and its figures.

    python -m vhct.reporting.findings ship     # after `make paper-local`: copy its results, render
    python -m vhct.reporting.findings render   # render docs/findings.md from the shipped results

Both also rewrite the README's findings block (between ``README_BEGIN`` and ``README_END``):
the headline and a link to the document, on the README's first screen.

``ship`` copies what a finished pipeline run produced into ``docs/``: the audit's JSON, the
final and timing aggregates of every audited experiment and the run's provenance record into
``docs/findings/``, the figures' PNGs into ``docs/figures/``. ``render`` writes
``docs/findings.md`` from those files alone, so the document is never typed by hand and a
test can check that it is what the shipped files give.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import shutil
import sys
import tempfile
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pandas as pd

from vhct.pipeline.files import atomic_paths
from vhct.reporting.audit import records
from vhct.reporting.audit.records import Audit
from vhct.reporting.audit.render import headline as render_headline
from vhct.reporting.audit.render import render_findings

#: the shipped inputs of the document, relative to the docs directory
DATA_DIR = "findings"
AUDIT_JSON = "audit.json"
PROVENANCE_JSON = "provenance.json"
AGGREGATES = ("final.csv", "timing.csv")
FIGURES_DIR = "figures"
DOCUMENT = "findings.md"
#: the README's block that `write` keeps equal to the shipped headline (between these markers)
README_BEGIN = "<!-- findings:begin (written by `make findings`) -->"
README_END = "<!-- findings:end -->"
class FindingsError(RuntimeError):
    """A shipped input is missing or unreadable; the message names the file."""


def _read_json(path: Path) -> dict[str, Any]:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise FindingsError(f"{path}: cannot read it as JSON ({exc})") from exc


def read_audit(path: Path) -> Audit:
    """The audit record the document is rendered from (validated by the records' one reader); one
    written by another audit format, or lacking a field, is refused with the file named.

    The document's verdicts, summary and cost table are read from the audit's typed records, so
    rendering an audit of an older format would mix two standards in one document.
    """
    try:
        return records.read_audit(path)
    except records.AuditRecordError as exc:
        raise FindingsError(str(exc)) from exc


def audited_experiments(audit: Audit | Mapping[str, Any]) -> list[str]:
    """Experiments the audit read (its context's config summary), in config order."""
    context = audit.context if isinstance(audit, Audit) else audit["context"]
    return list(context["experiments"])


def headline(audit: Audit | Mapping[str, Any]) -> str:
    """One sentence: the verdict counts at the run's number of seeds, and the flips (the renderer's)."""
    return render_headline(audit)


def render(docs: Path | str) -> str:
    """``docs/findings.md`` from the shipped files under ``docs/findings`` and ``docs/figures``."""
    docs = Path(docs)
    data = docs / DATA_DIR
    audit = read_audit(data / AUDIT_JSON)
    prov = _read_json(data / PROVENANCE_JSON)
    aggregates = {}
    for name in audited_experiments(audit):
        tables = {}
        for file in AGGREGATES:
            path = data / "aggregates" / name / file
            try:
                tables[file] = pd.read_csv(path)
            except (OSError, ValueError) as exc:
                raise FindingsError(f"{path}: cannot read the aggregate ({exc})") from exc
        aggregates[name] = tables
    figures = sorted((docs / FIGURES_DIR).glob("*.png"))
    return render_findings(audit, prov, aggregates, figures, FIGURES_DIR)


#: seconds of slack when comparing file times with the recorded run's start and end
#: (file systems store modification times at up to 2 s resolution)
TIME_SLACK = 2.0
#: what the provenance record must hold to identify its run (vhct.pipeline.provenance)
RUN_KEYS = ("run_id", "started_utc", "finished_utc", "config_files", "config_sha256", "figures")
#: a figure link in the rendered document
FIGURE_LINK = re.compile(rf"\]\(({FIGURES_DIR}/[^)#\s]+\.png)\)")


def _mtime(path: Path) -> datetime:
    return datetime.fromtimestamp(path.stat().st_mtime, UTC)


def _same_paths(a: Sequence[str], b: Sequence[str]) -> bool:
    return [Path(p).resolve() for p in a] == [Path(p).resolve() for p in b]


def check_one_run(
    audit: Mapping[str, Any],
    prov: Mapping[str, Any],
    audit_path: Path,
    outputs: Sequence[Path],
    aggregates: Mapping[str, Path],
) -> None:
    """Raise :class:`FindingsError` naming the mismatch unless the audit, the aggregates and the
    figures all come from the run the provenance record describes.

    The audit must name the config files the record names (and, where it records them, the same
    checksums and run id), and must have been written during the run; no output may have been
    written after the run ended (a later `make figures` with another config rewrites them); each
    final aggregate must hold the settings, horizons and seeds of the audited config.
    """
    lacking = [k for k in RUN_KEYS if k not in prov]
    if lacking:
        raise FindingsError(
            f"the provenance record lacks {', '.join(lacking)} (an older recorder): "
            "run `make paper-local` again"
        )
    context = audit.get("context", {})
    audited = context.get("configfiles", [])
    if not _same_paths(audited, prov["config_files"]):
        raise FindingsError(
            f"{audit_path} was made with the config file(s) {', '.join(audited) or '-'}, "
            f"the recorded run with {', '.join(prov['config_files'])}: they come from different runs "
            "(run `make paper-local` again, then `make findings`)"
        )
    for key, recorded in (("config_sha256", prov["config_sha256"]), ("run_id", prov["run_id"])):
        if context.get(key) is not None and context[key] != recorded:
            raise FindingsError(
                f"{audit_path} records {key} {context[key]!r}, the provenance record {recorded!r}: "
                "they come from different runs"
            )
    started = datetime.fromisoformat(prov["started_utc"]) - timedelta(seconds=TIME_SLACK)
    finished = datetime.fromisoformat(prov["finished_utc"]) + timedelta(seconds=TIME_SLACK)
    written = _mtime(audit_path)
    if not started <= written <= finished:
        raise FindingsError(
            f"{audit_path} was written at {written:%Y-%m-%d %H:%M:%S} UTC, outside the recorded run "
            f"({prov['started_utc']} to {prov['finished_utc']}): it comes from another run"
        )
    for path in outputs:
        if _mtime(path) > finished:
            raise FindingsError(
                f"{path} was written at {_mtime(path):%Y-%m-%d %H:%M:%S} UTC, after the recorded run "
                f"ended ({prov['finished_utc']}): another run has rewritten it"
            )
    for name, path in aggregates.items():
        exp = context["experiments"][name]
        expected = {
            setting: min(exp["horizon"], info.get("max_horizon", exp["horizon"]))
            for setting, info in exp["settings"].items()
        }
        final = pd.read_csv(path)
        found = dict(zip(final["setting"], final["horizon"], strict=True))
        seeds = dict(zip(final["setting"], final["n_seeds"], strict=True))
        wanted = {  # a setting's max_seeds runs only the first that many of the experiment's seeds
            s: min(_n_seeds(info.get("seeds", exp["seeds"])), info.get("max_seeds", math.inf))
            for s, info in exp["settings"].items()
        }
        if found != expected or seeds != wanted:
            raise FindingsError(
                f"{path} holds settings and horizons {found} with seeds {seeds}, the audited config "
                f"{expected} with seeds {wanted}: they come from different runs"
            )


def _n_seeds(seeds: int | Sequence[int]) -> int:
    """How many seeds a config's ``seeds`` value (a count or a list) runs."""
    return seeds if isinstance(seeds, int) else len(seeds)


def ship(
    results: Path | str, figures: Path | str, docs: Path | str, readme: Path | str | None = None
) -> list[Path]:
    """Ship one finished run into ``docs``: its audit JSON, aggregates and provenance record,
    the PNGs of the figures its config declares that the document links, the document, and
    (given ``readme``) the README's findings block; return the shipped files.

    Nothing in ``docs`` or the README changes unless everything checks: every input exists, all
    come from the recorded run (:func:`check_one_run`), the document renders, the README has its
    markers. The new files are staged in a folder inside ``docs`` and swapped in at the end.
    """
    results, figures, docs = Path(results), Path(figures), Path(docs)
    audit_path = results / AUDIT_JSON
    prov_path = results / PROVENANCE_JSON
    audit = _read_json(audit_path)
    prov = _read_json(prov_path)
    data = {audit_path: Path(DATA_DIR) / AUDIT_JSON, prov_path: Path(DATA_DIR) / PROVENANCE_JSON}
    finals = {}
    for name in audited_experiments(audit):
        for file in AGGREGATES:
            source = results / "aggregates" / name / file
            data[source] = Path(DATA_DIR) / "aggregates" / name / file
        finals[name] = results / "aggregates" / name / AGGREGATES[0]
    pngs = {figures / f"{name}.png": Path(FIGURES_DIR) / f"{name}.png" for name in prov.get("figures", [])}
    missing = [str(p) for p in (*data, *pngs) if not p.is_file()]
    if missing:
        raise FindingsError(
            f"missing input(s) of the findings (run `make paper-local` first): {', '.join(missing)}"
        )
    check_one_run(audit, prov, audit_path, [p for p in (*data, *pngs) if p != prov_path], finals)
    docs.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=".findings-staging-", dir=docs))
    try:
        for source, target in {**data, **pngs}.items():
            (stage / target).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, stage / target)
        (stage / FIGURES_DIR).mkdir(exist_ok=True)
        text = render(stage)
        linked = set(FIGURE_LINK.findall(text))
        unshipped = sorted(link for link in linked if not (stage / link).is_file())
        if unshipped:
            raise FindingsError(f"the document links figure(s) the run did not make: {', '.join(unshipped)}")
        for target in pngs.values():
            if str(target) not in linked:
                (stage / target).unlink()
        (stage / DOCUMENT).write_text(text, encoding="utf-8")
        updated = None
        if readme is not None:
            updated = with_readme_block(Path(readme).read_text(encoding="utf-8"), readme_block(stage))
        _swap_in(stage, docs)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    if updated is not None:
        with atomic_paths(readme) as (tmp,):
            tmp.write_text(updated, encoding="utf-8")
    shipped = [docs / t for t in data.values()] + [docs / t for t in pngs.values() if str(t) in linked]
    return [*shipped, docs / DOCUMENT]


def _swap_in(stage: Path, docs: Path) -> None:
    """Move the staged folders and document into ``docs``, the old ones into the stage (removed
    with it); if a move fails, the old ones are put back."""
    moved: list[tuple[Path, Path]] = []
    try:
        for name in (DATA_DIR, FIGURES_DIR, DOCUMENT):
            if (docs / name).exists():
                (docs / name).rename(stage / f"old-{name}")
                moved.append((stage / f"old-{name}", docs / name))
            (stage / name).rename(docs / name)
            moved.append((docs / name, stage / name))
    except OSError as exc:
        for now, before in reversed(moved):
            if now.exists():
                now.rename(before)
        raise FindingsError(f"could not replace the findings in {docs} ({exc}); nothing changed") from exc


def readme_block(docs: Path | str) -> str:
    """The README's findings block: the shipped audit's headline and a link to the document."""
    audit = read_audit(Path(docs) / DATA_DIR / AUDIT_JSON)
    return "\n".join(
        [
            README_BEGIN,
            f"**{headline(audit)}** Every claim's verdict and why, the implementation choices that "
            f"change verdicts, the discrepancies found and the figures at that scale: "
            f"[docs/findings.md](docs/{DOCUMENT}).",
            README_END,
        ]
    )


def with_readme_block(readme: str, block: str) -> str:
    """``readme`` with the text between the findings markers replaced by ``block``."""
    start, end = readme.find(README_BEGIN), readme.find(README_END)
    if start < 0 or end < start:
        raise FindingsError(f"the README lacks the findings markers {README_BEGIN!r} ... {README_END!r}")
    return readme[:start] + block + readme[end + len(README_END) :]


def write(docs: Path | str, readme: Path | str | None = None) -> Path:
    """Render and write ``docs/findings.md`` and, given ``readme``, its findings block (atomically)."""
    path = Path(docs) / DOCUMENT
    text = render(docs)
    updated = None
    if readme is not None:
        updated = with_readme_block(Path(readme).read_text(encoding="utf-8"), readme_block(docs))
    with atomic_paths(path) as (tmp,):
        tmp.write_text(text, encoding="utf-8")
    if updated is not None:
        with atomic_paths(readme) as (tmp,):
            tmp.write_text(updated, encoding="utf-8")
    return path


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m vhct.reporting.findings", description=__doc__.splitlines()[0]
    )
    parser.add_argument("action", choices=["ship", "render"])
    parser.add_argument("--results", type=Path, default=Path("results"), help="results of the run (ship)")
    parser.add_argument("--figures", type=Path, default=Path("figures"), help="figures of the run (ship)")
    parser.add_argument("--docs", type=Path, default=Path("docs"))
    parser.add_argument(
        "--readme", type=Path, default=Path("README.md"), help="README whose findings block to update"
    )
    args = parser.parse_args(argv)
    try:
        if args.action == "ship":
            shipped = ship(args.results, args.figures, args.docs, args.readme)
            print(f"shipped {len(shipped)} files into {args.docs}")
            path = args.docs / DOCUMENT
        else:
            path = write(args.docs, args.readme)
    except FindingsError as exc:
        print(exc, file=sys.stderr)
        return 1
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
