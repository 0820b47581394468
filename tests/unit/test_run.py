"""The run function and the paper's Garland claims for the core optimizers."""

import time

import numpy as np
import pandas as pd
import pytest
from pydantic import ValidationError
from support import hierarchical_algorithms, run_job_of, run_spec

from vhct.objectives import make_objective
from vhct.objectives.base import Objective
from vhct.objectives.noise import UniformNoise
from vhct.optimizers.registry import make_optimizer
from vhct.pipeline.records import RunSpec
from vhct.pipeline.run import run, run_experiment
from vhct.pipeline.tables import WALL_TIME_COLUMNS

#: every fast (numpy-only) algorithm of the registry: the tree searches and their portfolios
CORE = hierarchical_algorithms()
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
    table, meta = run_experiment(run_spec(algorithm, objective, 2000, 3, objective_params=objective_params))
    f = make_objective(objective, **objective_params)
    assert len(table) == 2000
    points = table[[f"x{j}" for j in range(f.dim)]].to_numpy()
    assert np.all(points >= f.domain[:, 0]) and np.all(points <= f.domain[:, 1])
    assert np.all(table["regret"] >= -1e-9)  # f* is the true maximum
    assert np.all(np.abs(table["reward"] - table["value"]) <= 0.05)
    assert meta["final_cumulative_regret"] == pytest.approx(table["cumulative_regret"].iloc[-1])


def test_run_table_columns_and_regret():
    table, meta = run_experiment(run_spec("VHCT", "himmelblau", 300, 0, params={"rho": 0.75}))
    assert list(table.columns) == [
        "t",
        "x0",
        "x1",
        "reward",
        "value",
        "regret",
        "cumulative_regret",
        "depth",
        "selection_bound",
        "guarantee",
        "step_seconds",
        "optimizer_seconds",
    ]
    assert table["t"].tolist() == list(range(1, 301))
    np.testing.assert_allclose(table["regret"], meta["f_star"] - table["value"])
    np.testing.assert_allclose(table["cumulative_regret"], np.cumsum(table["regret"]))
    assert table["depth"].min() >= 1 and (table["step_seconds"] > 0).all()
    own = table["optimizer_seconds"]
    assert (own > 0).all() and (own <= table["step_seconds"]).all()
    assert meta["seed"] == 0 and meta["versions"]["numpy"] == np.__version__


@pytest.mark.parametrize("algorithm", CORE)
def test_same_seed_reproduces_a_run_exactly(algorithm):
    def table(seed):
        spec = run_spec(algorithm, "rastrigin", 500, seed, objective_params={"dim": 2}, noise=0.5)
        t, _ = run_experiment(spec)
        return t.drop(columns=list(WALL_TIME_COLUMNS))

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


class _SleepingObjective(Objective):
    """Garland whose evaluation sleeps ``SLEEP_SECONDS`` first; stochastic, so never memoized."""

    name = "sleeping"
    stochastic = True

    def __init__(self):
        self.inner = make_objective("garland")
        super().__init__(self.inner.domain)

    def __call__(self, x, seed=None):
        time.sleep(SLEEP_SECONDS)
        return self.inner(x)


#: the sleep of each evaluation of ``_SleepingObjective`` (time.sleep sleeps at least this long)
SLEEP_SECONDS = 0.002


def test_optimizer_seconds_exclude_the_objectives_evaluation():
    """The whole round's time includes the sleep; the optimizer's own (ask + tell) does not."""
    f = _SleepingObjective()
    opt = make_optimizer("VHCT", f.domain, 20, seed=0)
    table = run(opt, f, 20, UniformNoise(0.05, np.random.default_rng(0)), seed=0)
    step, own = table["step_seconds"].to_numpy(), table["optimizer_seconds"].to_numpy()
    assert (own > 0).all() and (step >= SLEEP_SECONDS).all()
    assert (step - own >= SLEEP_SECONDS).all()  # the evaluation, sleep included, is outside own


def test_a_run_of_bad_values_is_refused_naming_the_field():
    """The spec refuses them before anything runs; the loop itself refuses an empty horizon."""
    with pytest.raises(ValidationError, match="horizon"):
        run_spec("VHCT", "garland", 0, 0)
    with pytest.raises(ValidationError, match="seed"):
        run_spec("VHCT", "garland", 10, -1)
    with pytest.raises(ValidationError, match="noise"):
        run_spec("VHCT", "garland", 10, 0, noise=-0.1)
    f = make_objective("garland")
    noise = UniformNoise(0.05, np.random.default_rng(0))
    with pytest.raises(ValueError, match="horizon"):
        run(make_optimizer("VHCT", f.domain, 10, seed=0), f, 0, noise, seed=0)


@pytest.mark.slow
def test_garland_paper_settings_vhct_beats_hct_and_regret_is_sublinear():
    """Sec. 5 on Garland, low noise, rho = 0.75, n = 5000, 20 seeds (40 runs of 5000 rounds: slow)."""
    f = make_objective("garland")
    final, at_1000, recommendation_ok = {}, {}, {}
    for algorithm in ("VHCT", "HCT"):
        finals, firsts, good = [], [], 0
        for seed in range(20):
            table, meta = run_experiment(run_spec(algorithm, "garland", 5000, seed, params={"rho": 0.75}))
            finals.append(table["cumulative_regret"].iloc[-1])
            firsts.append(table["cumulative_regret"].iloc[999])
            good += meta["recommendation_value"] >= f.f_star - 0.02
        final[algorithm], at_1000[algorithm], recommendation_ok[algorithm] = (
            np.array(finals),
            np.array(firsts),
            good,
        )
    gap = final["HCT"].mean() - final["VHCT"].mean()
    spread = max(final["HCT"].std(), final["VHCT"].std())
    assert gap > 3 * spread, (final["VHCT"].mean(), final["HCT"].mean(), spread)
    for algorithm in ("VHCT", "HCT"):
        assert final[algorithm].mean() / 5000 < at_1000[algorithm].mean() / 1000
    assert recommendation_ok["VHCT"] >= 18 and recommendation_ok["HCT"] >= 18, recommendation_ok


def test_a_run_job_writes_its_batch_without_importing_pandas(tmp_path):
    """Importing pandas takes about a second: a run job (jobs.run_job) must not pay it."""
    import subprocess
    import sys
    import textwrap

    from vhct.pipeline.store import read_batch

    job = run_job_of(run_spec("HCT", "garland", 50, 3, params={"rho": 0.5}, noise=0.1)).model_dump_json()
    batch = tmp_path / "seeds3-3.npz"
    code = textwrap.dedent(
        f"""
        import sys
        from vhct.pipeline.jobs import run_job
        from vhct.pipeline.store import RunJob
        job = RunJob.model_validate_json({job!r})  # its JSON form, as it crosses into a job
        run_job(job, {str(batch)!r})
        print("pandas" in sys.modules)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
    stored = read_batch(batch).columns
    assert stored["value"].shape == (1, 50) and (stored["step_nanoseconds"] > 0).all()


# ---------------------------------------------------------------- BO's horizon and seeds; batched real data

BO_SETTINGS = ("BO", "BO-restarts5")
REAL_DATA = ("landmine", "mnist")
#: the fewest seeds BO may run where the tree methods run more (issue 20)
MIN_BO_SEEDS = 10


def test_bo_horizon_and_seeds_per_experiment_come_from_the_config(tmp_path):
    """paper-local (its seeds from an analysis plan of a made-up pilot): BO reaches each real-data
    experiment's horizon; its seeds are the config's ``max_seeds`` first seeds of the experiment, in the
    jobs, the run specs and the setting info."""
    from support import made_up_plan

    from vhct.pipeline import config as vc

    cfg, _ = vc.load([made_up_plan(tmp_path)])
    jobs = cfg.run_jobs()
    for experiment in ("garland", *REAL_DATA):
        exp = cfg.experiments[experiment]
        for setting in BO_SETTINGS:
            if setting not in exp.settings:
                continue
            cap = cfg.setting_cap(experiment, setting, "max_seeds")  # the setting's or caps'
            expected = cfg.seeds(experiment)[:cap]
            assert len(expected) >= MIN_BO_SEEDS
            assert [k for e, s, k in jobs if (e, s) == (experiment, setting)] == expected
            info = cfg.setting_info(experiment)[setting]
            assert info.seeds == expected
            horizon = min(exp.horizon, cfg.setting_cap(experiment, setting, "max_horizon"))
            assert info.horizon == horizon == cfg.run_spec(experiment, setting, 0).horizon
    # a made-up cap below an experiment's horizon stops the setting there, in the setting info and the
    # run spec; every BO fit run on an experiment runs all its seeds (the claims' minimum, issue 29)
    config = cfg.as_dict()
    capped = cfg.experiments["garland"].horizon // 2
    config["experiments"]["garland"].setdefault("caps", {})["BO"] = {"max_horizon": capped}
    recapped = vc.validate_config(config, [made_up_plan(tmp_path / "again")])
    assert recapped.setting_info("garland")["BO"].horizon == capped
    assert recapped.run_spec("garland", "BO", 0).horizon == capped
    for experiment in ("garland", *REAL_DATA):
        for setting in BO_SETTINGS:
            if setting in cfg.experiments[experiment].settings:
                assert cfg.setting_info(experiment)[setting].seeds == cfg.seeds(experiment)
    # the tree methods keep every seed
    assert cfg.setting_info("landmine")["VHCT-rho0.75"].seeds == cfg.seeds("landmine")


def test_max_seeds_is_checked_and_caps_batches_too(tiny_fixtures):
    from vhct.pipeline import config as vc

    config = vc.load([tiny_fixtures])[0].as_dict()
    config["settings"]["BO"]["max_seeds"] = 0
    with pytest.raises(vc.ConfigError, match="max_seeds"):
        vc.validate_config(config, [tiny_fixtures])
    config["settings"]["BO"]["max_seeds"] = 1
    config["settings"]["PCT"]["max_seeds"] = 1
    config["experiments"]["landmine"]["runs_per_job"] = 3
    cfg = vc.validate_config(config, [tiny_fixtures])
    assert [k for e, s, k in cfg.run_jobs() if (e, s) == ("landmine", "BO")] == [0]
    batched = [(b.setting, k) for b in cfg.run_batches() if b.experiment == "landmine" for k in b.seeds]
    assert ("PCT", 0) in batched and ("PCT", 1) not in batched and ("VHCT-rho0.75", 1) in batched


def spec(objective: str, objective_params: dict, seed: int, horizon: int, setting: str = "HCT") -> RunSpec:
    extra = {"params": {"rho": 0.5}, "objective_params": objective_params, "setting": setting}
    return run_spec("HCT", objective, horizon, seed, **extra)


def landmine_params(tiny_fixtures) -> dict:
    return {"data_path": str(tiny_fixtures.parent / "mirror" / "landmine" / "LandmineData.mat")}


def test_a_batched_real_data_job_runs_each_seed_as_a_one_seed_job_does(tiny_fixtures, tmp_path):
    """Landmine, three seeds in one job, one batch file: each seed's run as a one-seed job makes it."""
    from vhct.pipeline.jobs import run_job
    from vhct.pipeline.tables import READ_COLUMNS, read_runs

    params, seeds, horizon = landmine_params(tiny_fixtures), [0, 1, 2], 6
    specs = [spec("landmine", params, k, horizon) for k in seeds]
    batch, alone = run_job_of(*specs), run_job_of(specs[1])
    paths = {"batch": batch.path(str(tmp_path)), "alone": alone.path(str(tmp_path))}
    run_job(batch, paths["batch"])
    run_job(alone, paths["alone"])
    assert paths["batch"].endswith("/seeds0-2.npz") and paths["alone"].endswith("/seeds1-1.npz")
    columns = [c for c in READ_COLUMNS if c not in WALL_TIME_COLUMNS]
    jobs = {paths["batch"]: batch, paths["alone"]: alone}
    runs, records = read_runs(
        {s: [p] for s, p in paths.items()}, columns, {"batch": horizon, "alone": horizon}, jobs
    )
    assert [(r.seed, r.run.seed, r.rounds) for r in records["batch"]] == [(k, k, horizon) for k in seeds]
    finals = [table["cumulative_regret"].iloc[-1] for table in runs["batch"]]
    assert len(set(finals)) == len(seeds)  # three different runs, not one written three times
    pd.testing.assert_frame_equal(runs["batch"][1], runs["alone"][0], check_exact=True)


def test_a_run_shorter_than_its_declared_horizon_or_under_another_seed_is_refused(tmp_path):
    """The aggregate reads each setting's batches against the config's horizon (BO's ``max_horizon``),
    and each batch against what its job asks (its seeds)."""
    import shutil

    from vhct.pipeline.jobs import run_job
    from vhct.pipeline.tables import RunTableError, StaleRunError, read_runs

    jobs = {}
    for k in (0, 1):
        job = run_job_of(spec("garland", {}, k, 8, setting="BO"))
        jobs[job.path(str(tmp_path))] = job
        run_job(job, job.path(str(tmp_path)))
    paths = {"BO": list(jobs)}
    runs, metas = read_runs(paths, ["cumulative_regret"], {"BO": 8}, jobs)
    assert [record.seed for record in metas["BO"]] == [0, 1]
    with pytest.raises(RunTableError, match=r"seeds0-0\.npz: seed 0: 8 rounds recorded, the config 10"):
        read_runs(paths, ["cumulative_regret"], {"BO": 10}, jobs)
    first, second = paths["BO"]
    shutil.copy(first, second)  # seed 0's run under seed 1's name
    with pytest.raises(StaleRunError, match=r"seeds1-1\.npz: it holds seeds \[0\], the job asks for \[1\]"):
        read_runs(paths, ["cumulative_regret"], {"BO": 8}, jobs)


def test_the_legend_says_when_a_setting_runs_fewer_seeds_or_rounds():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from vhct.pipeline.specs import ExperimentInfo
    from vhct.reporting.plots.regret import draw_regret_panel

    exp = ExperimentInfo.model_validate(
        {
            "name": "landmine",
            "title": "Landmine",
            "objective": "landmine",
            "objective_params": {},
            "noise": 0.05,
            "horizon": 4,
            "seeds": [0, 1, 2],
            "settings": {
                "VHCT": {
                    "algorithm": "VHCT",
                    "label": "VHCT",
                    "params": {},
                    "horizon": 4,
                    "seeds": [0, 1, 2],
                },
                "BO": {"algorithm": "BO", "label": "BO", "params": {}, "horizon": 2, "seeds": [0, 1]},
            },
        }
    )
    table = pd.DataFrame(
        {
            "setting": ["VHCT"] * 4 + ["BO"] * 2,
            "t": [1, 2, 3, 4, 1, 2],
            "n_seeds": [3] * 4 + [2] * 2,
            "mean": 1.0,
            "std": 0.0,
        }
    )
    fig, ax = plt.subplots()
    draw_regret_panel(ax, exp, table, ["VHCT", "BO"], average=False, title=None)
    assert ax.get_legend_handles_labels()[1] == ["VHCT (3 seeds)", "BO (stops at t=2; 2 seeds)"]
    plt.close(fig)
