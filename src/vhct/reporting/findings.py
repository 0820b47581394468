"""The replication's findings document, ``docs/findings.md``, rendered from the shipped files.

:func:`render` writes the document from the files under ``docs/findings/`` (the audit's JSON,
the aggregates, the run's provenance record) and ``docs/figures/`` alone, so the document is
never typed by hand and a test can check that it is what the shipped files give. Shipping a run
into ``docs/`` (its checks, the all-or-nothing swap, the README's findings block, the command
line of ``make findings``) is ``vhct.reporting.ship``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from vhct.reporting.audit import records
from vhct.reporting.audit.records import Audit
from vhct.reporting.render import render_findings

#: the shipped inputs of the document, relative to the docs directory
DATA_DIR = "findings"
AUDIT_JSON = "audit.json"
PROVENANCE_JSON = "provenance.json"
AGGREGATES = ("final.csv", "timing.csv")
FIGURES_DIR = "figures"
DOCUMENT = "findings.md"
#: the README's block that `vhct.reporting.ship` keeps equal to the shipped headline (between these markers)
README_BEGIN = "<!-- findings:begin (written by `make findings`) -->"
README_END = "<!-- findings:end -->"
class FindingsError(RuntimeError):
    """A shipped input is missing or unreadable; the message names the file."""


def read_json(path: Path) -> dict[str, Any]:
    """A shipped JSON file (the provenance record, a sidecar, the journal); unreadable: named."""
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


def render(docs: Path | str) -> str:
    """``docs/findings.md`` from the shipped files under ``docs/findings`` and ``docs/figures``."""
    docs = Path(docs)
    data = docs / DATA_DIR
    audit = read_audit(data / AUDIT_JSON)
    prov = read_json(data / PROVENANCE_JSON)
    aggregates = {}
    for name in audit.context.experiments:
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
