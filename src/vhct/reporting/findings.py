"""The findings document, ``docs/findings.md``, rendered from the shipped files alone (the audit's
JSON, aggregates and provenance record under ``docs/findings/``, the PNGs under ``docs/figures/``):
never typed by hand, and a test can check it is what they give. Shipping is ``vhct.reporting.ship``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from vhct.pipeline.layout import AUDIT_JSON, FINAL_TABLE, PROVENANCE_JSON, TIMING_TABLE, VERDICTS_CSV
from vhct.reporting import history
from vhct.reporting.audit import records
from vhct.reporting.audit.records import Audit
from vhct.reporting.gitlog import GitError
from vhct.reporting.published import DATA_DIR, FindingsError, read_published
from vhct.reporting.render import render_findings
from vhct.reporting.view import PAPER_CONFIG, build_view, paper_scale

__all__ = [
    "AUDIT_JSON",
    "PROVENANCE_JSON",
    "VERDICTS_CSV",
    "FindingsError",
    "read_audit",
    "read_json",
    "render",
]

#: the shipped inputs of the document, relative to the docs directory (and DATA_DIR, the published one's)
FIGURES_DIR = "figures"
DOCUMENT = "findings.md"
#: the README's block that `vhct.reporting.ship` keeps equal to the shipped headline (between these markers)
README_BEGIN = "<!-- findings:begin (written by `make findings`) -->"
README_END = "<!-- findings:end -->"


def read_json(path: Path) -> dict[str, Any]:
    """A JSON file of the ship's own (its journal); unreadable: named."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise FindingsError(f"{path}: cannot read it as JSON ({exc})") from exc


def read_audit(path: Path) -> Audit:
    """The audit record, by the records' one reader: one of another format (the document would mix
    two standards) or lacking a field is refused, the file named."""
    try:
        return records.read_audit(path)
    except records.AuditRecordError as exc:
        raise FindingsError(str(exc)) from exc


def render(docs: Path | str, checkout: Path | str | None = None) -> str:
    """``docs/findings.md`` from the shipped files under ``docs/findings`` (read and checked by the
    one reader, :func:`vhct.reporting.published.read_published`) and ``docs/figures``, through the
    view (:mod:`vhct.reporting.view`), which compares the run with the checkout's ``config/paper.yaml``;
    its design history is read from the checkout's git record (``checkout``: the folder above
    ``docs`` unless given; :func:`vhct.reporting.history.history_of`)."""
    docs = Path(docs)
    checkout = docs.parent if checkout is None else Path(checkout)
    found = read_published(docs / DATA_DIR)
    aggregates = {
        name: {FINAL_TABLE: found.finals[name], TIMING_TABLE: found.timings[name]}
        for name in found.audit.context.experiments
    }
    figures = sorted((docs / FIGURES_DIR).glob("*.png"))
    table = f"{DATA_DIR}/{VERDICTS_CSV}" if found.verdicts is not None else None
    paper = checkout / PAPER_CONFIG
    view = build_view(found.audit, paper_scale(paper) if paper.is_file() else None)
    try:
        record = history.history_of(checkout, history.shipped_run(found.provenance, found.audit))
    except (history.HistoryError, GitError) as exc:
        raise FindingsError(f"design history: {exc}") from None
    return render_findings(
        found.audit,
        found.provenance,
        aggregates,
        figures,
        FIGURES_DIR,
        table,
        view,
        history.render(record),
    )
