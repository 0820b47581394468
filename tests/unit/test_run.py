"""The run function and the paper's Garland claims for the core optimizers."""

import numpy as np
import pandas as pd
import pytest

from vhct.objectives import make_objective
from vhct.objectives.base import Objective
from vhct.objectives.noise import UniformNoise
from vhct.optimizers.registry import make_optimizer
from vhct.pipeline.run import run, run_experiment

CORE = ["VHCT", "HCT", "T-HOO", "POO", "PCT"]
SYNTHETIC = [
    ("garland", {}),
    ("doublesine", {}),
    ("ackley", {}),
    ("counterexample", {}),
    ("himmelblau", {}),
    ("rastrigin", {"dim": 1}),
    ("rastrigin", {"dim": 2}),
    ("rastrigin", {"dim": 10}),
    ("difficult", {}),
]


@pytest.mark.parametrize("algorithm", CORE)
@pytest.mark.parametrize(("objective", "objective_params"), SYNTHETIC)
def test_every_algorithm_runs_2000_rounds_on_every_objective(algorithm, objective, objective_params):
    table, meta = run_experiment(algorithm, {}, objective, objective_params, 0.05, 2000, seed=3)
    f = make_objective(objective, **objective_params)
    assert len(table) == 2000
    points = table[[f"x{j}" for j in range(f.dim)]].to_numpy()
    assert np.all(points >= f.domain[:, 0]) and np.all(points <= f.domain[:, 1])
    assert np.all(table["regret"] >= -1e-9)  # f* is the true maximum
    assert np.all(np.abs(table["reward"] - table["value"]) <= 0.05)
    assert meta["final_cumulative_regret"] == pytest.approx(table["cumulative_regret"].iloc[-1])


def test_run_table_columns_and_regret():
    table, meta = run_experiment("VHCT", {"rho": 0.75}, "himmelblau", {}, 0.05, 300, seed=0)
    assert list(table.columns) == [
        "t", "x0", "x1", "reward", "value", "regret", "cumulative_regret", "depth", "step_seconds",
    ]
    assert table["t"].tolist() == list(range(1, 301))
    np.testing.assert_allclose(table["regret"], meta["f_star"] - table["value"])
    np.testing.assert_allclose(table["cumulative_regret"], np.cumsum(table["regret"]))
    assert table["depth"].min() >= 1 and (table["step_seconds"] > 0).all()
    assert meta["seed"] == 0 and meta["versions"]["numpy"] == np.__version__


@pytest.mark.parametrize("algorithm", CORE)
def test_same_seed_reproduces_a_run_exactly(algorithm):
    def table(seed):
        t, _ = run_experiment(algorithm, {}, "rastrigin", {"dim": 2}, 0.5, 500, seed=seed)
        return t.drop(columns="step_seconds")

    pd.testing.assert_frame_equal(table(11), table(11))
    assert not table(11).equals(table(12))


class _SeededObjective(Objective):
    """Returns a value drawn from a generator seeded by the seed the runner passes."""

    name = "seeded"
    stochastic = True

    def __init__(self):
        super().__init__([[0.0, 1.0]])
        self.seen = []

    def __call__(self, x, seed=None):
        self.seen.append(seed)
        return float(np.random.default_rng(list(seed)).uniform())


def test_stochastic_objectives_get_seed_and_round():
    f = _SeededObjective()
    opt = make_optimizer("HCT", f.domain, 5, seed=0)
    table = run(opt, f, 5, UniformNoise(0.0, np.random.default_rng(0)), seed=9)
    assert f.seen == [(9, t) for t in range(1, 6)]
    assert table["value"].iloc[2] == np.random.default_rng([9, 3]).uniform()


def test_run_rejects_bad_arguments():
    with pytest.raises(ValueError, match="horizon"):
        run_experiment("VHCT", {}, "garland", {}, 0.05, 0, seed=0)
    with pytest.raises(ValueError, match="seed"):
        run_experiment("VHCT", {}, "garland", {}, 0.05, 10, seed=-1)
    with pytest.raises(ValueError, match="noise"):
        run_experiment("VHCT", {}, "garland", {}, -0.1, 10, seed=0)


def test_garland_paper_settings_vhct_beats_hct_and_regret_is_sublinear():
    """Sec. 5 on Garland, low noise, rho = 0.75, n = 5000, 20 seeds."""
    f = make_objective("garland")
    final, at_1000, recommendation_ok = {}, {}, {}
    for algorithm in ("VHCT", "HCT"):
        finals, firsts, good = [], [], 0
        for seed in range(20):
            table, meta = run_experiment(algorithm, {"rho": 0.75}, "garland", {}, 0.05, 5000, seed=seed)
            finals.append(table["cumulative_regret"].iloc[-1])
            firsts.append(table["cumulative_regret"].iloc[999])
            good += meta["recommendation_value"] >= f.f_star - 0.02
        final[algorithm], at_1000[algorithm], recommendation_ok[algorithm] = (
            np.array(finals), np.array(firsts), good
        )
    gap = final["HCT"].mean() - final["VHCT"].mean()
    spread = max(final["HCT"].std(), final["VHCT"].std())
    assert gap > 3 * spread, (final["VHCT"].mean(), final["HCT"].mean(), spread)
    for algorithm in ("VHCT", "HCT"):
        assert final[algorithm].mean() / 5000 < at_1000[algorithm].mean() / 1000
    assert recommendation_ok["VHCT"] >= 18 and recommendation_ok["HCT"] >= 18, recommendation_ok


def test_a_run_job_writes_its_table_without_importing_pandas(tmp_path):
    """Importing pandas takes about a second: a run job (jobs.run_batch_job) must not pay it."""
    import subprocess
    import sys
    import textwrap

    spec = {
        "experiment": "garland", "setting": "HCT", "algorithm": "HCT", "params": {"rho": 0.5},
        "objective": "garland", "objective_params": {}, "noise": 0.1, "horizon": 50, "seed": 3,
        "progress_every": 0,
    }  # fmt: skip
    code = textwrap.dedent(
        f"""
        import sys
        from vhct.pipeline.jobs import run_batch_job
        run_batch_job([{spec!r}], [{str(tmp_path / "t.csv.gz")!r}], [{str(tmp_path / "t.json")!r}])
        print("pandas" in sys.modules)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
    table = pd.read_csv(tmp_path / "t.csv.gz")
    assert len(table) == 50 and (table["step_seconds"] > 0).all()
