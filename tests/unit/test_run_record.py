"""The run record: the real run job's sidecar read by the real readers (aggregation and the audit),
validated on reading, and checked against the config a consumer runs with."""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from vhct.objectives import make_objective
from vhct.pipeline import aggregate as ag
from vhct.pipeline.config import Config, load, validate_config
from vhct.pipeline.files import sha256
from vhct.pipeline.jobs import run_job
from vhct.pipeline.records import SPEC_FIELDS
from vhct.pipeline.specs import SettingInfo
from vhct.pipeline.stale import aggregate_spec, check_current_runs, expected_specs
from vhct.pipeline.tables import (
    RunTableError,
    StaleRunError,
    read_runs,
    read_sidecar,
    seed_of,
    sidecar_path,
)
from vhct.pipeline.versions import SHAPING_PACKAGES, package_versions, source_hash
from vhct.reporting.audit.runs import Run, rebase, samples
from vhct.reporting.audit.runs import read_runs as audit_read_runs

CONFIG = Path(__file__).resolve().parents[2] / "config" / "tiny.yaml"
#: a cheap synthetic experiment of the tiny config: 4 settings x seeds [3, 7], 40 rounds
EXPERIMENT = "counterexample"
PATTERN = "results/runs/{experiment}/{setting}/seed{seed}.csv.gz"
#: the rules' layout of a run's spec file (its request)
REQUEST = "results/.specs/runs/{experiment}/{setting}/seed{seed}.json"
#: top-level keys the first sidecar layout lacked (it kept f_star and versions in its metadata)
FIRST_LAYOUT_LACKS = ("format", "f_star", "regret_reference", "versions")
#: top-level keys the second layout lacked (what made the run beyond versions, its table's hash)
SECOND_LAYOUT_LACKS = ("source", "data", "table_sha256")


def experiment_tables(targets):  # noqa: N802
    """The three tables at ``targets`` (regret, final, timing), named as the aggregate job names them."""
    return dict(zip(("regret", "final", "timing"), targets, strict=True))


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
        (lambda d: [d.pop(k) for k in SECOND_LAYOUT_LACKS], "source: Field required; data: Field required"),
        (lambda d: d.update(format=2), "format 2, but runs are read in format 3 only"),
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
    assert msg.startswith("2 run(s) are not what is asked now")
    for path in paths["VHCT-rho0.75"]:  # one line per run, with the commands that fix it
        assert (
            f"\n  - {path}: params.rho: the run has 0.75, the config asks for 0.5; fix: "
            f"`rm {path} {sidecar_path(path)}` or `snakemake --forcerun {path}`\n"
        ) in msg + "\n"
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


def test_the_check_before_any_job_writes_each_run_s_request_and_refuses_what_nothing_reruns(
    copy_of, config, monkeypatch
):
    """Issue 39: each run's spec file is rewritten only when what is asked of it changes (then it is
    newer than the run, and Snakemake reruns the run whatever `.snakemake/` holds); a run whose record
    differs from its request while its spec file is not newer fails before any job, one line each."""
    monkeypatch.chdir(copy_of)
    runs = len(config.run_jobs())
    assert check_current_runs(config, PATTERN, REQUEST) == runs  # every run's request, written
    requests = {p: p.stat().st_mtime_ns for p in Path("results/.specs").rglob("*.json")}
    assert len(requests) == runs
    assert check_current_runs(config, PATTERN, REQUEST) == 0  # unchanged: not rewritten
    assert {p: p.stat().st_mtime_ns for p in requests} == requests
    stale = [PATTERN.format(experiment=EXPERIMENT, setting="VHCT-rho0.75", seed=k) for k in (3, 7)]
    spec = Path(REQUEST.format(experiment=EXPERIMENT, setting="VHCT-rho0.75", seed=3))
    request = json.loads(spec.read_text())
    assert request["run"] == config.run_spec(EXPERIMENT, "VHCT-rho0.75", 3).model_dump(mode="json")
    assert request["source"] == source_hash("run") and request["versions"] == package_versions()
    other = changed(config, rho=0.5)
    changed_runs = [run for run in config.run_jobs() if run[1] == "VHCT-rho0.75"]
    assert check_current_runs(other, PATTERN, REQUEST) == len(changed_runs)  # only the changed runs
    for path in stale:  # newer than the run: Snakemake reruns it, nothing refused
        written = Path(REQUEST.format(experiment=EXPERIMENT, setting="VHCT-rho0.75", seed=seed_of(path)))
        assert written.stat().st_mtime_ns > Path(path).stat().st_mtime_ns
        # the run's outputs touched after (copied, restored): nothing would rerun them
        for file in (Path(path), sidecar_path(path)):
            os.utime(file, ns=(time.time_ns(), written.stat().st_mtime_ns + 1))
    with pytest.raises(StaleRunError) as err:
        check_current_runs(other, PATTERN, REQUEST)
    lines = str(err.value).splitlines()
    assert lines[0].startswith("2 run(s) are not what is asked now")
    assert lines[1:] == [
        f"  - {p}: params.rho: the run has 0.75, the config asks for 0.5; fix: `rm {p} {sidecar_path(p)}`"
        for p in stale
    ]  # --forcerun could not help: this check runs before Snakemake's
    Path(stale[0]).unlink()  # a missing table reruns anyway; an unreadable sidecar fails its consumers
    sidecar_path(stale[1]).write_text("{")
    check_current_runs(other, PATTERN, REQUEST)


def ran_after_their_requests(config: Config) -> None:
    """Date every run's outputs after its spec file, as when the run job ran after the rules were read."""
    for experiment, setting, seed in config.run_jobs([EXPERIMENT]):
        names = {"experiment": experiment, "setting": setting, "seed": seed}
        later = Path(REQUEST.format(**names)).stat().st_mtime_ns + 1
        for file in (Path(PATTERN.format(**names)), sidecar_path(PATTERN.format(**names))):
            os.utime(file, ns=(later, later))


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
    assert str(err.value).startswith("1 run(s) are not what is asked now (another config, run code, package")
    with pytest.raises(StaleRunError, match=named):
        read_runs(paths, ag.AGGREGATED_COLUMNS, specs=expected_specs(config, EXPERIMENT, paths))
    with pytest.raises(StaleRunError, match=r"seed3\.csv\.gz: versions: numpy 1\.0"):
        audit_read_runs({EXPERIMENT: paths}, config)
    monkeypatch.chdir(copy_of)
    check_current_runs(config, PATTERN, REQUEST)  # the requests, as the parse before the runs wrote them
    ran_after_their_requests(config)
    with pytest.raises(StaleRunError, match=r"HCT-rho0\.75/seed3\.csv\.gz: versions: numpy 1\.0") as err:
        check_current_runs(config, PATTERN, REQUEST)
    assert "--forcerun" not in str(err.value)  # before any job: deleting them is the remedy


def test_runs_of_other_run_code_are_refused_by_every_reader(copy_of, config, monkeypatch):
    """Issue 39: the package's version does not change with its code, so each record carries the
    hash of the run code that made it; a run of other code is refused wherever runs are read."""
    paths = paths_of(copy_of, config)
    other = paths["PCT"][1] if "PCT" in paths else paths["HCT-rho0.75"][1]
    old = "0" * 64
    edit(other, lambda d: d.update(source=old))
    named = rf"{re.escape(other)}: source: the run was made by run code 000000000000, the installed code is "
    with pytest.raises(StaleRunError, match=named + re.escape(source_hash("run")[:12])):
        read_runs(paths, ag.AGGREGATED_COLUMNS)
    with pytest.raises(StaleRunError, match=named):
        audit_read_runs({EXPERIMENT: paths}, config)
    targets = [copy_of / "regret.csv", copy_of / "final.csv", copy_of / "timing.csv"]
    with pytest.raises(StaleRunError, match=named):
        ag.aggregate_runs(paths, config.setting_info(EXPERIMENT), experiment_tables(targets))
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


def test_a_table_copied_from_another_seed_or_edited_by_hand_is_refused_by_every_reader(copy_of, config):
    """Issue 39: `cp seed7.csv.gz seed3.csv.gz` was aggregated (n_seeds 2, std 0), as were values edited
    by hand; the record holds its table's sha256, and every reader checks it, naming the file."""
    paths = paths_of(copy_of, config)
    first, second = map(Path, paths["HCT-rho0.75"])
    assert read_sidecar(first).table_sha256 == sha256(first)  # the real writer's hash of its bytes
    original = first.read_bytes()
    shutil.copyfile(second, first)  # cp seed7.csv.gz seed3.csv.gz
    targets = [copy_of / "regret.csv", copy_of / "final.csv", copy_of / "timing.csv"]
    copied = rf"^run table {re.escape(str(first))}: its bytes \(sha256 {sha256(second)[:12]}\.\.\.\) are not "
    with pytest.raises(RunTableError, match=copied) as err:
        ag.aggregate_runs(paths, config.setting_info(EXPERIMENT), experiment_tables(targets))
    assert len(str(err.value).splitlines()) == 1 and "copied from another run or edited" in str(err.value)
    assert not any(t.exists() for t in targets)
    with pytest.raises(RunTableError, match=copied):
        audit_read_runs({EXPERIMENT: paths}, config)
    text = gzip.decompress(original).decode()
    rows = text.splitlines()
    cells = rows[-1].split(",")
    cells[-4] = str(float(cells[-4]) / 2)  # the last round's cumulative regret, halved by hand
    first.write_bytes(gzip.compress("\n".join([*rows[:-1], ",".join(cells)]).encode() + b"\n"))
    with pytest.raises(RunTableError, match=rf"^run table {re.escape(str(first))}: its bytes"):
        read_runs(paths, ag.AGGREGATED_COLUMNS)
    first.write_bytes(original)
    ag.aggregate_runs(paths, config.setting_info(EXPERIMENT), experiment_tables(targets))
    assert set(pd.read_csv(targets[1])["n_seeds"]) == {2}


def test_the_run_job_records_the_hash_of_the_run_code(workdir, config):
    """One function hashes the package source that shapes each layer's outputs (once per process);
    the run job records the run code's hash, the one its readers check. What each hash covers, and
    that an edit changes the hashes of the layers that import it alone: tests/unit/test_code_hash.py."""
    table = paths_of(workdir, config)["VHCT-rho0.75"][0]
    assert read_sidecar(table).source == source_hash("run")  # the real writer's, the readers' hash
    assert source_hash.cache_info().currsize >= 1  # computed once, then reused


def test_a_settings_aggregate_is_asked_what_the_experiments_aggregate_is_asked_of_that_setting(config):
    """One builder (``stale.aggregate_spec``) for both aggregate spec files: a setting's is the
    experiment's restricted to that setting, with the same code hash and versions, so an edit of the
    aggregation code or an update of a package reruns both."""
    info = config.setting_info(EXPERIMENT)
    paths = {s: [f"runs/{EXPERIMENT}/{s}/seed{k}.csv.gz" for k in (3, 7)] for s in info}
    whole = aggregate_spec(info, paths)
    assert list(whole) == ["info", "run_paths", "source", "versions"]  # the spec file's keys, in order
    assert whole["source"] == {"aggregate": source_hash("aggregate")}
    assert whole["versions"] == package_versions()
    assert len(info) > 1
    for setting in info:
        one = aggregate_spec({setting: info[setting]}, {setting: paths[setting]})
        assert one["info"] == {setting: whole["info"][setting]}
        assert one["run_paths"] == {setting: paths[setting]}
        assert (one["source"], one["versions"]) == (whole["source"], whole["versions"])
