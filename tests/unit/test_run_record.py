"""The run record: the real run job's batch file read by the real readers (aggregation and the audit),
validated on reading, and checked against what the config asks now (``Config.batch_jobs``)."""

from __future__ import annotations

import io
import json
import re
import shutil
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
from vhct.pipeline.stale import aggregate_spec
from vhct.pipeline.store import RECORDS, read_batch
from vhct.pipeline.tables import RunTableError, StaleRunError, read_runs
from vhct.pipeline.versions import SHAPING_PACKAGES, package_versions, run_source, source_hash
from vhct.reporting.audit.runs import Run, rebase, samples
from vhct.reporting.audit.runs import read_runs as audit_read_runs

CONFIG = Path(__file__).resolve().parents[2] / "config" / "tiny.yaml"
#: a cheap synthetic experiment of the tiny config: 5 settings x seeds [3, 7], 40 rounds, a batch per seed
EXPERIMENT = "counterexample"


def experiment_tables(targets):  # noqa: N802
    """The three tables at ``targets`` (regret, final, timing), named as the aggregate job names them."""
    return dict(zip(("regret", "final", "timing"), targets, strict=True))


@pytest.fixture(scope="module")
def config() -> Config:
    return load([CONFIG])[0]


@pytest.fixture(scope="module")
def made(tmp_path_factory, config) -> Path:
    """The counterexample's runs, written by the real run job at their paths in the run store (relative
    to this folder, as the rules run them in the working directory)."""
    root = tmp_path_factory.mktemp("runs")
    for path, job in config.batch_jobs(EXPERIMENT).items():
        run_job(job, root / path)
    return root


@pytest.fixture
def workdir(made, monkeypatch) -> Path:
    """The runs' working directory, the current one."""
    monkeypatch.chdir(made)
    return made


@pytest.fixture
def copy_of(made, tmp_path, monkeypatch) -> Path:
    """A copy of the runs a test may damage, the current working directory."""
    shutil.copytree(made, tmp_path / "w")
    monkeypatch.chdir(tmp_path / "w")
    return tmp_path / "w"


def edit(path: str | Path, change, run: int = 0) -> None:
    """Change the record of one run (``run``: its row) of a batch file in place, its arrays as they were."""
    with np.load(path) as archive:
        contents = {name: archive[name] for name in archive.files}
    records = json.loads(str(contents[RECORDS]))
    change(records["runs"][run])
    contents[RECORDS] = np.array(json.dumps(records))
    np.savez_compressed(path, **contents)


def values(path: str | Path) -> np.ndarray:
    """The values f(x) of a batch file's (one) run, as stored."""
    return read_batch(path).columns["value"][0]


def test_the_audit_reads_the_exact_f_star_the_run_job_wrote(workdir, config):
    """Writer meets reader: each per-seed final regret the audit tests is the stored values' regret
    against the exact optimum (the shipped audit measured it against the best value observed)."""
    f_star = make_objective("counterexample").f_star
    paths = config.run_paths(EXPERIMENT)
    runs = audit_read_runs({EXPERIMENT: paths}, config)[EXPERIMENT]
    assert set(runs) == set(config.experiments[EXPERIMENT].settings)
    rebased, reference = rebase(runs)
    assert reference == ""  # f* known: no rebasing, no "best value observed" in the verdicts
    best = max(values(p).max() for ps in paths.values() for p in ps)
    for setting, setting_runs in rebased.items():
        assert [r.seed for r in setting_runs] == [3, 7]
        for run, path in zip(setting_runs, paths[setting], strict=True):
            assert run.f_star == f_star
            exact = float(np.cumsum(f_star - values(path))[-1])
            assert samples([run], "cumulative_regret", 40) == {run.seed: pytest.approx(exact, rel=1e-12)}
            assert exact != pytest.approx(float(np.cumsum(best - values(path))[-1]), rel=1e-6)


def test_the_record_carries_the_spec_f_star_and_the_package_versions(workdir, config):
    path = config.run_paths(EXPERIMENT)["VHCT-rho0.75"][0]
    (record,) = read_batch(path).record.runs
    expected = config.run_spec(EXPERIMENT, "VHCT-rho0.75", 3)
    assert record.run == expected  # the spec the job was given, embedded whole
    assert all(getattr(record.run, field) == getattr(expected, field) for field in SPEC_FIELDS)
    assert record.f_star == make_objective("counterexample").f_star and record.regret_reference == "f_star"
    assert record.regret_from == record.f_star  # regret against f*, where it is known
    assert set(SHAPING_PACKAGES) <= set(record.versions) and record.versions["numpy"] == np.__version__
    assert record.versions["pandas"] == pd.__version__
    with np.load(path) as archive:
        raw = json.loads(str(archive[RECORDS]))["runs"][0]
    assert raw["metadata"]["f_star"] == raw["f_star"] and raw["run"]["seed"] == 3  # old keys kept
    assert "format" not in raw and "table_sha256" not in raw  # the batch's, not each run's


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (lambda d: d.pop("f_star"), "runs.0.f_star: Field required"),
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
        (lambda d: d["run"].pop("horizon"), "runs.0.run.horizon: Field required"),
        (lambda d: d.pop("regret_from"), "runs.0.regret_from: Field required"),  # what regret is read from
        (
            lambda d: [d.pop(k) for k in ("source", "data")],
            "runs.0.source: Field required; runs.0.data: Field",
        ),
    ],
)
def test_an_invalid_record_is_refused_naming_its_file(copy_of, config, change, problem):
    paths = config.run_paths(EXPERIMENT)
    bad = paths["VHCT-rho0.75"][0]
    edit(bad, change)
    with pytest.raises(RunTableError) as err:
        read_runs(paths, ag.AGGREGATED_COLUMNS)
    assert not isinstance(err.value, StaleRunError)
    assert list(err.value.problems) == [bad]
    assert (
        err.value.problems[bad].startswith("its records are not valid (")
        and problem in err.value.problems[bad]
    )
    assert f"\n  - {bad}: its records are not valid" in str(err.value)


def changed(config: Config, **params) -> Config:
    """``config`` with parameters of the setting VHCT-rho0.75 changed."""
    out = config.as_dict()
    out["settings"]["VHCT-rho0.75"]["params"].update(params)
    return validate_config(out)


def test_a_change_of_the_config_names_other_batch_files_for_the_runs_it_changes(config):
    """What is asked of a run is in its batch file's name: a parameter of one setting renames that
    setting's files alone (Snakemake makes them, missing), the experiment's noise every setting's, and
    a label (the setting's legend) none."""
    before = config.run_paths(EXPERIMENT)
    after = changed(config, rho=0.5).run_paths(EXPERIMENT)
    for setting, files in before.items():
        renamed = [a != b for a, b in zip(files, after[setting], strict=True)]
        assert renamed == [setting == "VHCT-rho0.75"] * len(files), setting
    noisier = config.as_dict()
    noisier["experiments"][EXPERIMENT]["noise"] = 0.1
    moved = validate_config(noisier).run_paths(EXPERIMENT)
    assert all(not set(moved[s]) & set(before[s]) for s in before)
    labelled = config.as_dict()
    labelled["settings"]["VHCT-rho0.75"]["label"] = "VHCT, another legend"
    assert validate_config(labelled).run_paths(EXPERIMENT) == before


def test_a_run_of_another_config_at_this_configs_name_is_refused_by_aggregation_and_the_audit(
    copy_of, config
):
    """A batch file copied to the name of what another config asks (by hand, or a stale file) is read
    against that config's job: refused naming the file and the first field that differs."""
    other = changed(config, rho=0.5)
    paths, mine = other.run_paths(EXPERIMENT), config.run_paths(EXPERIMENT)
    for theirs, ours in zip(paths["VHCT-rho0.75"], mine["VHCT-rho0.75"], strict=True):
        Path(theirs).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ours, theirs)
    targets = [copy_of / "regret.csv", copy_of / "final.csv", copy_of / "timing.csv"]
    info = other.setting_info(EXPERIMENT)
    with pytest.raises(StaleRunError) as err:
        ag.aggregate_runs(paths, info, experiment_tables(targets), other.batch_jobs(EXPERIMENT))
    msg = str(err.value)
    assert msg.startswith("2 batch file(s) of runs are damaged or not what is asked:")
    for path, seed in zip(paths["VHCT-rho0.75"], (3, 7), strict=True):  # one line per file
        assert f"\n  - {path}: seed {seed}: params.rho: the run has 0.75, the config asks for 0.5\n" in msg
    assert msg.endswith(f"`rm {' '.join(paths['VHCT-rho0.75'])}`")
    assert not any(t.exists() for t in targets)
    with pytest.raises(StaleRunError, match=r"seeds3-3\.npz: seed 3: params\.rho: the run has 0\.75"):
        audit_read_runs({EXPERIMENT: paths}, other)
    added = changed(config, refresh="current")
    for theirs, ours in zip(added.run_paths(EXPERIMENT)["VHCT-rho0.75"], mine["VHCT-rho0.75"], strict=True):
        Path(theirs).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ours, theirs)
    with pytest.raises(
        StaleRunError, match=r"params\.refresh: the run has none, the config asks for 'current'"
    ):
        audit_read_runs({EXPERIMENT: added.run_paths(EXPERIMENT)}, added)
    ag.aggregate_runs(
        mine, config.setting_info(EXPERIMENT), experiment_tables(targets), config.batch_jobs(EXPERIMENT)
    )
    assert set(pd.read_csv(targets[1])["n_seeds"]) == {2}  # the config's own runs: served


def test_runs_of_other_package_versions_are_refused_by_every_reader(copy_of, config):
    """Issue 31, one policy: a run's recorded versions must equal the installed ones wherever runs are
    read (aggregation, the audit, a plain read); refused, naming the package and both versions, never
    served with a warning."""
    paths = config.run_paths(EXPERIMENT)
    other = paths["HCT-rho0.75"][0]
    edit(other, lambda d: d["versions"].update(numpy="1.0"))
    named = rf"{re.escape(other)}: versions: numpy 1\.0 \(installed: {re.escape(np.__version__)}\)"
    with pytest.raises(StaleRunError, match=named) as err:
        read_runs(paths, ag.AGGREGATED_COLUMNS)
    assert list(err.value.problems) == [other]
    asked = rf"{re.escape(other)}: seed 3: versions: numpy 1\.0 \(installed: {re.escape(np.__version__)}\)"
    with pytest.raises(StaleRunError, match=asked):
        read_runs(paths, ag.AGGREGATED_COLUMNS, jobs=config.batch_jobs(EXPERIMENT))
    with pytest.raises(StaleRunError, match=r"seeds3-3\.npz: seed 3: versions: numpy 1\.0"):
        audit_read_runs({EXPERIMENT: paths}, config)


def test_runs_of_other_run_code_are_refused_by_every_reader(copy_of, config):
    """Issue 39: the package's version does not change with its code, so each record carries the
    hash of the run code that made it; a run of other code is refused wherever runs are read."""
    paths = config.run_paths(EXPERIMENT)
    other = paths["HCT-rho0.75"][1]
    edit(other, lambda d: d.update(source="0" * 64))
    named = rf"{re.escape(other)}: (seed 7: )?source: the run was made by run code 000000000000, "
    named += "the installed code is "
    with pytest.raises(StaleRunError, match=named + re.escape(source_hash("run")[:12])):
        read_runs(paths, ag.AGGREGATED_COLUMNS)
    with pytest.raises(StaleRunError, match=named):
        audit_read_runs({EXPERIMENT: paths}, config)
    targets = [copy_of / "regret.csv", copy_of / "final.csv", copy_of / "timing.csv"]
    with pytest.raises(StaleRunError, match=named):
        ag.aggregate_runs(
            paths, config.setting_info(EXPERIMENT), experiment_tables(targets), config.batch_jobs(EXPERIMENT)
        )
    assert not any(t.exists() for t in targets)


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


def test_a_batch_copied_from_another_seed_or_edited_by_hand_is_refused_by_every_reader(copy_of, config):
    """Issue 39: `cp seed7.csv.gz seed3.csv.gz` was aggregated (n_seeds 2, std 0), as were values edited
    by hand; a batch file's records name their seeds, checked against the job, and hold its arrays'
    sha256, checked by the store's one reader, naming the file."""
    paths = config.run_paths(EXPERIMENT)
    first, second = map(Path, paths["HCT-rho0.75"])
    original = first.read_bytes()
    shutil.copyfile(second, first)  # cp seeds7-7.npz seeds3-3.npz
    targets = [copy_of / "regret.csv", copy_of / "final.csv", copy_of / "timing.csv"]
    jobs = config.batch_jobs(EXPERIMENT)
    copied = rf"\n  - {re.escape(str(first))}: it holds seeds \[7\], the job asks for \[3\]\n"
    with pytest.raises(StaleRunError, match=copied):
        ag.aggregate_runs(paths, config.setting_info(EXPERIMENT), experiment_tables(targets), jobs)
    assert not any(t.exists() for t in targets)
    with pytest.raises(StaleRunError, match=copied):
        audit_read_runs({EXPERIMENT: paths}, config)
    with np.load(io.BytesIO(original)) as archive:
        contents = {name: archive[name] for name in archive.files}
    contents["value"][0, -1] /= 2  # the last round's value, halved by hand
    np.savez_compressed(first, **contents)
    edited = rf"\n  - {re.escape(str(first))}: its arrays \(sha256 [0-9a-f]{{12}}\.\.\.\) are not the ones"
    with pytest.raises(RunTableError, match=edited):
        read_runs(paths, ag.AGGREGATED_COLUMNS)
    with pytest.raises(RunTableError, match=edited):
        audit_read_runs({EXPERIMENT: paths}, config)
    first.write_bytes(original)
    ag.aggregate_runs(paths, config.setting_info(EXPERIMENT), experiment_tables(targets), jobs)
    assert set(pd.read_csv(targets[1])["n_seeds"]) == {2}


def test_the_run_job_records_the_hash_of_the_run_code(workdir, config):
    """One function hashes the package source that shapes each layer's outputs (once per process);
    the run job records the run code's hash, the one its readers check. What each hash covers, and
    that an edit changes the hashes of the layers that import it alone: tests/unit/test_code_hash.py."""
    path = config.run_paths(EXPERIMENT)["VHCT-rho0.75"][0]
    (record,) = read_batch(path).record.runs
    assert record.source == run_source("VHCT") == source_hash("run")  # the writer's, the readers' hash
    assert config.batch_jobs(EXPERIMENT)[path].source == record.source  # and what the config asks
    assert source_hash.cache_info().currsize >= 1  # computed once, then reused


def test_a_settings_aggregate_is_asked_what_the_experiments_aggregate_is_asked_of_that_setting(config):
    """One builder (``stale.aggregate_spec``) for both aggregate spec files: a setting's is the
    experiment's restricted to that setting, with the same code hash and versions, so an edit of the
    aggregation code or an update of a package reruns both."""
    info = config.setting_info(EXPERIMENT)
    paths = config.run_paths(EXPERIMENT)
    whole = aggregate_spec(info, paths)
    assert whole.source == {"aggregate": source_hash("aggregate")}
    assert whole.versions == package_versions()
    assert len(info) > 1
    for setting in info:
        one = aggregate_spec({setting: info[setting]}, {setting: paths[setting]})
        assert one.info == {setting: whole.info[setting]}
        assert one.run_paths == {setting: paths[setting]}
        assert (one.source, one.versions) == (whole.source, whole.versions)
