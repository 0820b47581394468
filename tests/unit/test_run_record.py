"""The run record: the real run job's sidecar read by the real readers (aggregation and the audit),
validated on reading, and checked against the config a consumer runs with."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from vhct.objectives import make_objective
from vhct.pipeline import aggregate as ag
from vhct.pipeline.config import Config, load, validate_config
from vhct.pipeline.jobs import run_job
from vhct.pipeline.records import SPEC_FIELDS
from vhct.pipeline.specs import SettingInfo
from vhct.pipeline.stale import check_current_runs, expected_specs
from vhct.pipeline.tables import RunTableError, StaleRunError, read_runs, read_sidecar, sidecar_path
from vhct.pipeline.versions import SHAPING_PACKAGES
from vhct.reporting.audit.runs import Run, rebase, samples
from vhct.reporting.audit.runs import read_runs as audit_read_runs

CONFIG = Path(__file__).resolve().parents[2] / "config" / "tiny.yaml"
#: a cheap synthetic experiment of the tiny config: 4 settings x seeds [3, 7], 40 rounds
EXPERIMENT = "counterexample"
PATTERN = "results/runs/{experiment}/{setting}/seed{seed}.csv.gz"
#: top-level keys the first sidecar layout lacked (it kept f_star and versions in its metadata)
FIRST_LAYOUT_LACKS = ("format", "f_star", "regret_reference", "versions")


@pytest.fixture(scope="module")
def config() -> Config:
    return load([CONFIG])[0]


@pytest.fixture(scope="module")
def workdir(tmp_path_factory, config) -> Path:
    """The counterexample's runs, written by the real run job under the rules' layout."""
    root = tmp_path_factory.mktemp("runs")
    for experiment, setting, seed in config.run_jobs([EXPERIMENT]):
        table = root / PATTERN.format(experiment=experiment, setting=setting, seed=seed)
        table.parent.mkdir(parents=True, exist_ok=True)
        run_job(config.run_spec(experiment, setting, seed), table, sidecar_path(table))
    return root


def paths_of(root: Path, config: Config) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for experiment, setting, seed in config.run_jobs([EXPERIMENT]):
        out.setdefault(setting, []).append(
            str(root / PATTERN.format(experiment=experiment, setting=setting, seed=seed))
        )
    return out


@pytest.fixture
def copy_of(workdir, tmp_path) -> Path:
    """A copy of the runs a test may damage."""
    import shutil

    shutil.copytree(workdir, tmp_path / "w")
    return tmp_path / "w"


def test_the_audit_reads_the_exact_f_star_the_run_job_wrote(workdir, config):
    """Writer meets reader: each per-seed final regret the audit tests is the table's regret
    against the exact optimum (the shipped audit measured it against the best value observed)."""
    f_star = make_objective("counterexample").f_star
    runs = audit_read_runs({EXPERIMENT: paths_of(workdir, config)}, config)[EXPERIMENT]
    assert set(runs) == set(config.experiments[EXPERIMENT].settings)
    rebased, reference = rebase(runs)
    assert reference == ""  # f* known: no rebasing, no "best value observed" in the verdicts
    for setting, setting_runs in rebased.items():
        assert [r.seed for r in setting_runs] == [3, 7]
        for run, path in zip(setting_runs, paths_of(workdir, config)[setting], strict=True):
            assert run.f_star == f_star
            raw = pd.read_csv(path)
            exact = float(np.cumsum(f_star - raw["value"].to_numpy())[-1])
            assert samples([run], "cumulative_regret", 40) == {run.seed: pytest.approx(exact, rel=1e-12)}
            best = max(pd.read_csv(p)["value"].max() for ps in paths_of(workdir, config).values() for p in ps)
            assert exact != pytest.approx(float(np.cumsum(best - raw["value"].to_numpy())[-1]), rel=1e-6)


def test_the_record_carries_the_spec_f_star_and_the_package_versions(workdir, config):
    table = paths_of(workdir, config)["VHCT-rho0.75"][0]
    record = read_sidecar(table)
    expected = config.run_spec(EXPERIMENT, "VHCT-rho0.75", 3)
    assert record.run == expected  # the spec the job was given, embedded whole
    assert all(getattr(record.run, field) == getattr(expected, field) for field in SPEC_FIELDS)
    assert record.f_star == make_objective("counterexample").f_star and record.regret_reference == "f_star"
    assert set(SHAPING_PACKAGES) <= set(record.versions) and record.versions["numpy"] == np.__version__
    assert record.versions["pandas"] == pd.__version__
    raw = json.loads(sidecar_path(table).read_text())
    assert raw["metadata"]["f_star"] == raw["f_star"] and raw["run"]["seed"] == 3  # old keys kept


def edit(table: str | Path, change) -> Path:
    path = sidecar_path(table)
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (lambda d: d.pop("f_star"), "f_star: Field required"),
        (
            lambda d: d.update(f_star=None, regret_reference="best_observed"),
            "synthetic objective 'counterexample'",
        ),
        (lambda d: d["run"].update(seed=4), "the seed fields disagree: seed = 3, run.seed = 4"),
        (lambda d: d["metadata"].update(seed=4), "seed = 3, run.seed = 3, metadata.seed = 4"),
        (
            lambda d: d.update(regret_reference="best_observed"),
            "regret_reference = 'best_observed' with f_star",
        ),
        (lambda d: d["metadata"].update(f_star=0.5), "but metadata.f_star = 0.5"),
        (lambda d: d["run"].pop("horizon"), "run.horizon: Field required"),
        (lambda d: [d.pop(k) for k in FIRST_LAYOUT_LACKS], "format: Field required"),  # no longer read
        (lambda d: d.update(format=1), "format 1, but runs are read in format 2 only"),
    ],
)
def test_an_invalid_record_is_refused_naming_its_file(copy_of, config, change, problem):
    paths = paths_of(copy_of, config)
    bad = paths["VHCT-rho0.75"][0]
    sidecar = edit(bad, change)
    with pytest.raises(RunTableError) as err:
        read_runs(paths, ag.AGGREGATED_COLUMNS)
    msg = str(err.value)
    assert msg.startswith(f"run table {bad}: its sidecar {sidecar} is not a valid run record")
    assert problem in msg


def changed(config: Config, **params) -> Config:
    """``config`` with parameters of the setting VHCT-rho0.75 changed."""
    out = config.as_dict()
    out["settings"]["VHCT-rho0.75"]["params"].update(params)
    return validate_config(out)


def test_a_run_of_another_config_is_refused_by_aggregation_and_the_audit(workdir, config, tmp_path):
    paths = paths_of(workdir, config)
    other = changed(config, rho=0.5)
    targets = [tmp_path / "regret.csv", tmp_path / "final.csv", tmp_path / "timing.csv"]
    info = config.setting_info(EXPERIMENT)
    outputs = dict(zip(("regret", "final", "timing"), targets, strict=True))
    ag.aggregate_runs(paths, info, outputs, expected_specs(config, EXPERIMENT, paths))
    with pytest.raises(StaleRunError) as err:
        ag.aggregate_runs(paths, info, outputs, expected_specs(other, EXPERIMENT, paths))
    msg = str(err.value)
    assert msg.startswith("2 run(s) were made for another config")
    for path in paths["VHCT-rho0.75"]:
        assert f"  - {path}: params.rho: the run has 0.75, the config asks for 0.5" in msg
    assert f"snakemake --forcerun {' '.join(paths['VHCT-rho0.75'])}" in msg
    with pytest.raises(StaleRunError, match=r"seed3\.csv\.gz: params\.rho: the run has 0\.75"):
        audit_read_runs({EXPERIMENT: paths}, other)
    noisier = config.as_dict()
    noisier["experiments"][EXPERIMENT]["noise"] = 0.1  # every setting: the first differing field named
    noisier = validate_config(noisier)
    with pytest.raises(StaleRunError, match=r"noise: the run has 0\.05, the config asks for 0\.1"):
        audit_read_runs({EXPERIMENT: paths}, noisier)
    added = changed(config, refresh="current")
    with pytest.raises(
        StaleRunError, match=r"params\.refresh: the run has none, the config asks for 'current'"
    ):
        audit_read_runs({EXPERIMENT: paths}, added)


def test_the_check_before_any_job_names_stale_runs_and_how_to_redo_them(copy_of, config, monkeypatch):
    monkeypatch.chdir(copy_of)
    check_current_runs(config, PATTERN)  # current runs, installed versions: nothing refused
    other = changed(config, rho=0.5)
    with pytest.raises(StaleRunError) as err:
        check_current_runs(other, PATTERN)
    msg = str(err.value)
    stale = [PATTERN.format(experiment=EXPERIMENT, setting="VHCT-rho0.75", seed=k) for k in (3, 7)]
    assert all(f"  - {p}: params.rho: the run has 0.75, the config asks for 0.5" in msg for p in stale)
    assert "--forcerun" not in msg  # it could not help: this check runs before Snakemake's
    assert f"`rm {stale[0]} {sidecar_path(stale[0])} {stale[1]} {sidecar_path(stale[1])}`" in msg
    Path(stale[0]).unlink()  # a missing table reruns anyway; an unreadable sidecar fails its consumers
    sidecar_path(stale[1]).write_text("{")
    check_current_runs(other, PATTERN)


def test_runs_of_other_package_versions_are_refused_by_every_reader(copy_of, config, monkeypatch):
    """Issue 31, one policy: a run's recorded versions must equal the installed ones wherever runs are
    read (aggregation, the audit, a plain read, the check before any job); refused, naming the package
    and both versions, never served with a warning."""
    paths = paths_of(copy_of, config)
    other = paths["HCT-rho0.75"][0]
    edit(other, lambda d: d["versions"].update(numpy="1.0"))
    named = rf"{re.escape(other)}: versions: numpy 1\.0 \(installed: {re.escape(np.__version__)}\)"
    with pytest.raises(StaleRunError, match=named) as err:
        read_runs(paths, ag.AGGREGATED_COLUMNS)
    assert str(err.value).startswith("1 run(s) were made for another config than this one, or with other")
    with pytest.raises(StaleRunError, match=named):
        read_runs(paths, ag.AGGREGATED_COLUMNS, specs=expected_specs(config, EXPERIMENT, paths))
    with pytest.raises(StaleRunError, match=r"seed3\.csv\.gz: versions: numpy 1\.0"):
        audit_read_runs({EXPERIMENT: paths}, config)
    monkeypatch.chdir(copy_of)
    with pytest.raises(StaleRunError, match=r"HCT-rho0\.75/seed3\.csv\.gz: versions: numpy 1\.0") as err:
        check_current_runs(config, PATTERN)
    assert "--forcerun" not in str(err.value)  # before any job: deleting them is the remedy


def real_run(seed: int, values: list[float]) -> Run:
    """A real-data run (f* unknown): its table's regret against 1, as the run job writes it."""
    value = np.array(values)
    t = np.arange(1, len(value) + 1)
    return Run(
        seed, pd.DataFrame({"t": t, "value": value, "cumulative_regret": np.cumsum(1.0 - value)}), None
    )


def test_the_audit_and_the_aggregates_share_one_regret_against_the_best_observed():
    rng = np.random.default_rng(5)
    exp_runs = {s: [real_run(k, list(0.5 + 0.4 * rng.random(30))) for k in range(3)] for s in ("A", "B")}
    rebased, reference = rebase(exp_runs)
    tables = {s: [r.table for r in runs] for s, runs in exp_runs.items()}
    best = ag.best_observed(tables)
    assert reference == f"regret against the best value observed in any run, {best:.4g} (not 1)"
    info = {s: SettingInfo(algorithm=a, label=s, params={}, horizon=30, seeds=[0]) for s, a in ("Ax", "By")}
    regret = ag.regret_table(tables, info)
    final = ag.final_table(tables, info).set_index("setting")
    for setting, runs in rebased.items():
        per_seed = np.vstack([r.table["cumulative_regret"].to_numpy() for r in runs])
        np.testing.assert_array_equal(
            per_seed.mean(axis=0), regret[regret.setting == setting]["mean_vs_best"]
        )
        finals = samples(runs, "cumulative_regret", 30)
        assert np.mean(list(finals.values())) == final.loc[setting, "final_vs_best_mean"]
    assert rebased["A"][0].f_star is None
