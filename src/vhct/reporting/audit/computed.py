"""The statements of the paper checked by a deterministic computation on the standard partition (the
claims file's ``computed``), not on runs: the per-depth numbers come from ``vhct.objectives.cells``, the
verdict is reproduced or not reproduced by the claim's stated rule, never a p-value (nothing is random).

Why not a kind of claim (``CLAIM_KINDS``): a kind reads per-seed samples of runs of the config's
experiments and decides by tests at alpha (Holm across the claim, calibrated on samples of known truth);
these statements are about a function and a partition, with no experiment, seed or sample to test.
"""

from __future__ import annotations

from collections.abc import Iterable

from vhct.objectives import make_objective
from vhct.objectives.cells import Cells, first_violation, near_optimal_table
from vhct.optimizers.resolution import make_resolution
from vhct.reporting.audit.claims_model import ComputedClaim
from vhct.reporting.audit.records import ComputedVerdict
from vhct.reporting.audit.verdicts import NOT_REPRODUCED, REPRODUCED


def evaluate_computed(claim: ComputedClaim) -> ComputedVerdict:
    """The claim's verdict, why, and the per-depth table it rests on."""
    f = make_objective(claim.objective)
    if claim.check == "near_optimal_growth":
        table = near_optimal_table(f)
        exponential = table.growth >= claim.min_growth
        found = "exponential" if exponential else "polynomial"
        reason = (
            f"N_h, the cells of depth h whose sup f >= f* - eps_h with eps_h = {table.threshold}: "
            f"{table.counts[-1]} of 2^{len(table.counts) - 1} cells at depth {len(table.counts) - 1}; the "
            f"growth per depth beyond a power of h, fitted over the deeper half, is {table.growth:.4g} "
            f"({'>=' if exponential else '<'} {claim.min_growth:g}: {found} growth)"
        )
        verdict = REPRODUCED if found == claim.claimed else NOT_REPRODUCED
        columns = {"depth": _floats(table.depths), "near_optimal_cells": _floats(table.counts)}
        return ComputedVerdict(claim=claim, verdict=verdict, reason=reason, table=columns)
    cells = Cells.of(f)
    gaps = cells.optimal_gaps(claim.max_depth)
    columns = {"depth": _floats(range(len(gaps))), "optimal_cell_drop": gaps}
    parts, held = [], []
    for spec in claim.resolutions:
        phi = make_resolution(spec, nu=1.0, rho=0.5)
        name = ", ".join(f"{k} = {v}" for k, v in spec.items())
        columns[f"phi ({name})"] = [phi(h) for h in range(len(gaps))]
        at = first_violation(gaps, phi)
        held.append(at is None)
        found = f"holds at depths 0..{claim.max_depth}" if at is None else f"fails first at depth {at}"
        parts.append(f"{name}: {found}")
    ok = all(held) if claim.claimed == "holds" else not any(held)
    reason = f"f* - inf f on the optimal cell against phi(h): {'; '.join(parts)}"
    verdict = REPRODUCED if ok else NOT_REPRODUCED
    return ComputedVerdict(claim=claim, verdict=verdict, reason=reason, table=columns)


def _floats(values: Iterable[float]) -> list[float]:
    return [float(v) for v in values]
