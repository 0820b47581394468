"""The findings document, ``docs/findings.md``, rendered from the shipped files alone (the audit's
JSON, aggregates and provenance record under ``docs/findings/``, the PNGs under ``docs/figures/``):
never typed by hand, and a test can check it is what they give. Shipping is ``vhct.reporting.ship``.
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
#: the audit's verdict table (``render.verdict_table``), written beside its JSON and shipped with it
VERDICTS_CSV = "verdicts.csv"
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
    """The audit record, by the records' one reader: one of another format (the document would mix
    two standards) or lacking a field is refused, the file named."""
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
    aggregates: dict[str, dict[str, pd.DataFrame]] = {}
    for name in audit.context.experiments:
        for file in AGGREGATES:
            path = data / "aggregates" / name / file
            try:
                aggregates.setdefault(name, {})[file] = pd.read_csv(path)
            except (OSError, ValueError) as exc:
                raise FindingsError(f"{path}: cannot read the aggregate ({exc})") from exc
    figures = sorted((docs / FIGURES_DIR).glob("*.png"))
    table = f"{DATA_DIR}/{VERDICTS_CSV}" if (data / VERDICTS_CSV).is_file() else None
    return render_findings(audit, prov, aggregates, figures, FIGURES_DIR, table)
