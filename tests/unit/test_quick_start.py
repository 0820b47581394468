"""The quick start (config/config.yaml) decides the claims that rest on synthetic functions
(issue 30): its synthetic experiments run at the paper's scale, at least every such claim's minimum
seeds, and an audit of runs shaped like them evaluates every such claim."""

from __future__ import annotations

import numpy as np
import pandas as pd
from support import REPO

from vhct.objectives import make_objective
from vhct.pipeline import config as vc
from vhct.pipeline.tables import GUARANTEE_CODES
from vhct.reporting.audit.claims import load_claims
from vhct.reporting.audit.evaluate import run_audit
from vhct.reporting.audit.runs import Run
from vhct.reporting.audit.verdicts import NOT_EVALUATED

DEFAULT, _ = vc.load([REPO / "config" / "config.yaml"])
PAPER, _ = vc.load([REPO / "config" / "paper.yaml"])
CLAIMS = load_claims()


#: objectives that read data files (real data: f* unknown)
REAL_DATA = {"landmine", "mnist"}


def synthetic(experiment: str) -> bool:
    exp = DEFAULT.experiments[experiment]
    if exp.objective in REAL_DATA:
        return False
    return make_objective(exp.objective, **exp.objective_params).f_star is not None


#: the claims whose every experiment is a synthetic one the default config runs
SYNTHETIC_CLAIMS = [
    c for c in CLAIMS.claims if all(e in DEFAULT.experiments and synthetic(e) for e in c.experiments_read)
]


def test_the_default_config_runs_every_synthetic_claim_at_the_papers_scale():
    assert len(SYNTHETIC_CLAIMS) >= 10
    for claim in SYNTHETIC_CLAIMS:
        for experiment in claim.experiments_read:
            exp = DEFAULT.experiments[experiment]
            assert exp.horizon == PAPER.experiments[experiment].horizon, (claim.id, experiment)
            for setting in claim.settings:
                if setting in exp.settings:
                    seeds = DEFAULT.setting_seeds(experiment, setting)
                    assert len(seeds) >= claim.min_seeds, (claim.id, experiment, setting)


def test_an_audit_of_runs_shaped_like_the_default_config_evaluates_every_synthetic_claim():
    """Made-up runs with the default config's synthetic experiments, settings and seeds (shorter, for
    speed): no synthetic claim is left "not evaluated" for want of seeds or settings."""
    rng = np.random.default_rng(0)
    horizon = 40
    experiments = {e for c in SYNTHETIC_CLAIMS for e in c.experiments_read}
    runs = {}
    for name in experiments:
        runs[name] = {}
        for setting in DEFAULT.experiments[name].settings:
            stop = horizon if DEFAULT.run_horizon(name, setting) == DEFAULT.experiments[name].horizon else 10
            runs[name][setting] = []
            for seed in DEFAULT.setting_seeds(name, setting):
                t = np.arange(1, stop + 1)
                cumulative = (5.0 + rng.random()) * (t / horizon) ** 0.7
                table = {
                    "t": t,
                    "value": -np.diff(cumulative, prepend=0.0),
                    "cumulative_regret": cumulative,
                    "depth": np.full(stop, 3.0),
                    "guarantee": np.full(stop, GUARANTEE_CODES["holds"]),  # a bound covering every round
                    "step_seconds": np.full(stop, 1e-3),
                    "optimizer_seconds": np.full(stop, 1e-3),
                }
                runs[name][setting].append(Run(seed, pd.DataFrame(table), 0.0))
    claims = CLAIMS.model_copy(update={"claims": SYNTHETIC_CLAIMS, "sensitivity": []})
    scales = {
        "himmelblau": 0.15,
        "rastrigin2d": 0.3,
        "rastrigin10d": 0.3,
        "garland": 0.5,
        "doublesine": 0.4,
        "counterexample": 0.2,
    }
    result = run_audit(claims, runs, None, scales)
    for claim in result.claims:
        assert claim.verdict != NOT_EVALUATED, (claim.id, claim.reason)
        assert "this configuration runs" not in claim.reason, claim.id
