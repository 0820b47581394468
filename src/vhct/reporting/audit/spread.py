"""The spread the audit's calibration draws its samples with, measured from an audit JSON (by
default the shipped findings' ``docs/findings/audit.json``): every comparison's per-seed values and
the seed counts its experiments and settings ran."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from vhct.reporting.audit.records import AUDIT_FORMAT, parse_audit

#: the shipped audit whose per-seed values give the spread of the normal samples
SHIPPED_AUDIT = Path(__file__).resolve().parents[4] / "docs" / "findings" / "audit.json"

__all__ = ["SHIPPED_AUDIT", "AuditSpread", "audit_spread", "shipped_cv", "shipped_cvs", "shipped_seeds"]


@dataclass(frozen=True)
class AuditSpread:
    """What the calibration reads from an audit: the per-seed values of each side of each comparison
    (seed -> value) and the distinct seed counts of its experiments and settings."""

    samples: list[dict[str, float]]
    seed_counts: frozenset[int]


def audit_spread(path: Path | str = SHIPPED_AUDIT) -> AuditSpread:
    """The per-seed samples and seed counts of an audit JSON, read by the audit's one reader (each
    setting's seeds as the config computed them: ``Audit.context``); an audit of an older format by
    :func:`_stale_audit_spread`."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    shape = data.get("format", 1) if isinstance(data, dict) else None
    if isinstance(shape, int) and shape < AUDIT_FORMAT:
        return _stale_audit_spread(data)
    audit = parse_audit(data, str(path))
    comparisons = [c for claim in audit.claims for e in claim.experiments for c in e.comparisons]
    experiments = audit.context.experiments.values()
    counts = {len(e.seeds) for e in experiments}
    counts |= {len(s.seeds) for e in experiments for s in e.settings.values()}
    return AuditSpread([v for c in comparisons for v in (c.values_a, c.values_b)], frozenset(counts))


def _stale_audit_spread(data: dict[str, Any]) -> AuditSpread:
    """The same from an audit of an older format, read by key (the typed reader refuses it).

    Why: the shipped findings (``docs/findings/audit.json``) are still an audit of format 2, whose
    context has each experiment's seeds and each setting's ``max_seeds`` cap rather than its seeds;
    issue 32 re-ships them at the current format, after which this fallback goes.
    """
    samples = [
        {str(k): float(v) for k, v in (c.get(key) or {}).items()}
        for claim in data["claims"]
        for exp in claim["experiments"]
        for c in exp["comparisons"]
        for key in ("values_a", "values_b")
    ]
    counts = set()
    for exp in data["context"]["experiments"].values():
        n = len(exp["seeds"])
        counts.add(n)
        counts.update(min(n, s["max_seeds"]) for s in exp["settings"].values() if s.get("max_seeds"))
    return AuditSpread(samples, frozenset(counts))


def shipped_cvs(path: Path | str = SHIPPED_AUDIT) -> np.ndarray:
    """Coefficients of variation (sd / mean) of every per-seed sample in an audit JSON."""
    out = []
    for values in audit_spread(path).samples:
        x = np.array(list(values.values()), dtype=float)
        if x.size >= 2 and x.mean() > 0:
            out.append(x.std(ddof=1) / x.mean())
    if not out:
        raise ValueError(f"audit {path} has no per-seed values to measure a spread from")
    return np.array(out)


def shipped_cv(quantile: float = 0.9, path: Path | str = SHIPPED_AUDIT) -> float:
    """A quantile of the shipped samples' coefficients of variation (the calibration's spread)."""
    return float(np.quantile(shipped_cvs(path), quantile))


def shipped_seeds(path: Path | str = SHIPPED_AUDIT) -> tuple[int, ...]:
    """The distinct seed counts of the settings of the shipped audit's experiments, largest first."""
    return tuple(sorted(audit_spread(path).seed_counts, reverse=True))
