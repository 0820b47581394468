"""The run store (``vhct.pipeline.store``): a batch of runs alike but for their seeds is one file named
by what the runs are, written and read by one writer and one reader; ``tables.read_runs`` serves its
runs with the run's own regret and refuses a run other than the one asked for; the config's planning
puts every run in exactly one batch."""

from __future__ import annotations

import json
import re
import zipfile
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest
from pydantic import ValidationError
from support import CONFIG_DIR, made_up_record, run_job_of, run_spec, write_made_up_batch

from vhct.pipeline.config import load
from vhct.pipeline.jobs import run_job
from vhct.pipeline.run import experiment_columns
from vhct.pipeline.store import (
    RECORDS,
    STORE,
    STORED_COLUMNS,
    RunJob,
    StoreError,
    identity,
    read_batch,
    seeds_name,
    stored_columns,
    write_batch,
)
from vhct.pipeline.tables import READ_COLUMNS, RunTableError, StaleRunError, read_runs

#: a cheap batch of real runs: VHCT on Garland, two seeds
ROUNDS, SEEDS = 60, (0, 1)


def specs(seeds=SEEDS, **changes):
    return [
        run_spec("VHCT", "garland", ROUNDS, k, params={"rho": 0.75}).model_copy(update=changes) for k in seeds
    ]


@pytest.fixture(scope="module")
def batch(tmp_path_factory) -> tuple[str, RunJob]:
    """A batch file written by the real run job, and what it was asked."""
    job = run_job_of(*specs())
    path = job.path(str(tmp_path_factory.mktemp("store")))
    run_job(job, path)
    return path, job


def load_npz(path: Path | str) -> dict[str, np.ndarray]:
    with np.load(path) as archive:
        return {name: archive[name] for name in archive.files}


def rewrite(path: Path | str, contents: dict[str, np.ndarray]) -> None:
    np.savez_compressed(path, **contents)


def edit_records(path: Path | str, change) -> None:
    """Change a batch file's records in place (its arrays, and their hash, as they were)."""
    contents = load_npz(path)
    records = json.loads(str(contents[RECORDS]))
    change(records)
    contents[RECORDS] = np.array(json.dumps(records))
    rewrite(path, contents)


# ---------------------------------------------------------------- the batch file


def test_write_batch_then_read_batch_gives_the_runs_back(tmp_path):
    tables = [
        experiment_columns(s)[0] for s in specs(seeds=(3, 4))
    ]  # the run's own table, stored columns and all
    records = [made_up_record(k, ROUNDS, 0.25 * k) for k in (3, 4)]
    path = tmp_path / "a" / "seeds3-4.npz"
    write_batch(path, tables, records)
    back = read_batch(path)
    assert back.record.runs == records and back.record.format == 1
    assert set(back.columns) == set(STORED_COLUMNS)
    for name, dtype in STORED_COLUMNS.items():
        assert back.columns[name].dtype == np.dtype(dtype) and back.columns[name].shape == (2, ROUNDS)
        np.testing.assert_array_equal(back.columns[name], stored_columns(tables)[name])
    for row, table in enumerate(tables):
        np.testing.assert_array_equal(back.columns["value"][row], table["value"])
        np.testing.assert_array_equal(back.columns["guarantee"][row], table["guarantee"])
        # wall times in the clock's integer nanoseconds, exactly the table's seconds again
        np.testing.assert_array_equal(back.columns["step_nanoseconds"][row] / 1e9, table["step_seconds"])
    assert [p.name for p in path.parent.iterdir()] == ["seeds3-4.npz"]  # no temporary file left
    with zipfile.ZipFile(path) as archive:  # an .npz whose members are bzip2-compressed
        members = archive.infolist()
    assert sorted(m.filename for m in members) == sorted(f"{n}.npy" for n in [*STORED_COLUMNS, RECORDS])
    assert {m.compress_type for m in members} == {zipfile.ZIP_BZIP2}
    with pytest.raises(ValueError, match="1 tables for 2 records"):
        write_batch(tmp_path / "b.npz", tables[:1], records)
    assert not (tmp_path / "b.npz").exists()


def test_the_store_keeps_every_float_exactly(tmp_path):
    """Values and depths come back bit for bit: signed zero, subnormals, the extremes, NaN."""
    rng = np.random.default_rng(5)
    values = rng.standard_normal(20_000) * 10.0 ** rng.integers(-300, 300, 20_000)
    values[:6] = [0.1 + 0.2, -0.0, 5e-324, 1.7976931348623157e308, 1e16, -np.inf]
    depth = values[::-1].copy()
    depth[0] = np.nan
    seconds = np.full(values.size, 1e-3)
    table = {"value": values, "depth": depth, "step_seconds": seconds, "optimizer_seconds": seconds / 4}
    write_made_up_batch(tmp_path / "b.npz", [table], [made_up_record(0, values.size)])
    back = read_batch(tmp_path / "b.npz").columns
    assert back["value"][0].tobytes() == values.tobytes() and np.signbit(back["value"][0][1])
    assert back["depth"][0].tobytes() == depth.tobytes()


def test_a_batch_file_with_an_edited_array_is_refused_naming_it(batch, tmp_path):
    path = tmp_path / "seeds0-1.npz"
    path.write_bytes(Path(batch[0]).read_bytes())
    contents = load_npz(path)
    contents["value"][0, -1] += 1e-12  # one value, by hand
    rewrite(path, contents)
    with pytest.raises(
        StoreError, match=rf"^batch file {re.escape(str(path))}: its arrays .* edited after the run$"
    ):
        read_batch(path)
    contents = load_npz(batch[0])
    contents["step_nanoseconds"], contents["optimizer_nanoseconds"] = (
        contents["optimizer_nanoseconds"],
        contents["step_nanoseconds"],
    )  # two arrays swapped: the same bytes, in other places
    rewrite(path, contents)
    with pytest.raises(StoreError, match="edited after the run"):
        read_batch(path)


def test_a_batch_file_of_another_format_is_refused_naming_it(batch, tmp_path):
    path = tmp_path / "seeds0-1.npz"
    path.write_bytes(Path(batch[0]).read_bytes())
    edit_records(path, lambda r: r.update(format=2))
    message = (
        rf"^batch file {re.escape(str(path))}: its records are not valid "
        r"\(format 2, but batch files are read in format 1 only\)$"
    )
    with pytest.raises(StoreError, match=message):
        read_batch(path)
    edit_records(path, lambda r: r.update(format=1, columns_sha256="x"))
    with pytest.raises(StoreError, match=r"its records are not valid \(columns_sha256: String should match"):
        read_batch(path)
    path.write_text("seed,value\n0,1.0\n")  # a table of another layout
    with pytest.raises(StoreError, match=rf"^batch file {re.escape(str(path))}: cannot be read"):
        read_batch(path)


# ---------------------------------------------------------------- what names a batch


def job_of(runs, **changes) -> RunJob:
    base = run_job_of(*runs)
    return RunJob(
        **{"runs": base.runs, "source": base.source, "versions": base.versions, "data": base.data, **changes}
    )


def test_labels_do_not_name_a_batch_what_shapes_its_numbers_does():
    job = job_of(specs())
    assert job.path().startswith(f"{STORE}/garland/VHCT-") and job.path().endswith("/seeds0-1.npz")
    assert re.fullmatch(rf"{STORE}/garland/VHCT-[0-9a-f]{{12}}/seeds0-1\.npz", job.path())
    same = [
        job_of(specs(experiment="other")),
        job_of(specs(setting="VHCT-renamed")),
        job_of(specs(progress_every=10)),
        job_of(specs(experiment="x", setting="y", progress_every=1)),
    ]
    assert {j.path() for j in same} == {job.path()}
    different = {
        "params": job_of(specs(params={"rho": 0.5})),
        "params added": job_of(specs(params={"rho": 0.75, "nu": 1.0})),
        "noise": job_of(specs(noise=0.1)),
        "horizon": job_of(specs(horizon=ROUNDS + 1)),
        "objective params": job_of(specs(objective_params={"dim": 1})),
        "seeds": job_of(specs(seeds=(0, 1, 2))),
        "other seeds": job_of(specs(seeds=(1, 2))),
        "source": job_of(specs(), source="0" * 64),
        "versions": job_of(specs(), versions={**job.versions, "numpy": "1.0"}),
        "data": job_of(specs(), data={"landmine/LandmineData.mat": {"sha256": "0" * 64}}),
    }
    paths = {name: j.path() for name, j in different.items()}
    assert job.path() not in paths.values() and len(set(paths.values())) == len(paths)
    # the seeds name the file; the rest its folder
    assert Path(paths["seeds"]).parent == Path(job.path()).parent
    assert Path(paths["params"]).name == Path(job.path()).name and paths["params"] != job.path()
    assert job.path("elsewhere/runs") == "elsewhere/runs" + job.path().removeprefix(STORE)


def test_seeds_that_are_not_consecutive_are_named_by_their_list():
    assert seeds_name([0, 1, 2]) == "seeds0-2"
    odd, reordered = seeds_name([0, 2]), seeds_name([2, 0])
    assert re.fullmatch(r"seeds0-2-[0-9a-f]{8}", odd) and odd != seeds_name([0, 1, 2])
    assert reordered.startswith("seeds2-0-") and reordered != odd


def test_a_job_of_runs_differing_in_more_than_their_seed_is_refused():
    runs = specs()
    with pytest.raises(ValidationError, match="the runs of one job differ in more than their seed"):
        job_of([runs[0], runs[1].model_copy(update={"params": {"rho": 0.5}})])
    with pytest.raises(ValidationError, match="differ in more than their seed"):
        job_of([runs[0], runs[1].model_copy(update={"horizon": ROUNDS + 1})])
    with pytest.raises(ValidationError, match=r"a seed twice among \[0, 0\]"):
        job_of([runs[0], runs[0].model_copy(update={"setting": "other"})])
    assert job_of([runs[0], runs[1].model_copy(update={"setting": "other"})]).seeds == [0, 1]  # labels


# ---------------------------------------------------------------- reading runs back


def test_read_runs_derives_the_runs_own_regret_to_the_bit(batch):
    """The store keeps values, not regret: the reader's regret and cumulative regret are the run's
    (``run_columns``) to the bit, and the wall times its seconds."""
    path, job = batch
    tables, records = read_runs({"s": [path]}, READ_COLUMNS, {"s": ROUNDS}, {path: job})
    assert [r.seed for r in records["s"]] == list(SEEDS)
    for table, spec, record in zip(tables["s"], job.runs, records["s"], strict=True):
        assert list(table.columns) == list(READ_COLUMNS)
        memory, meta = experiment_columns(spec)
        assert record.regret_from == meta["regret_reference"] == record.f_star
        for column in ("t", "value", "regret", "cumulative_regret", "depth", "guarantee"):
            assert np.array_equal(table[column].to_numpy(), memory[column], equal_nan=column == "depth"), (
                column
            )
        assert table["regret"].dtype == memory["regret"].dtype
        stored = read_batch(path).columns
        row = list(SEEDS).index(spec.seed)
        np.testing.assert_array_equal(table["step_seconds"], stored["step_nanoseconds"][row] / 1e9)
        np.testing.assert_array_equal(table["optimizer_seconds"], stored["optimizer_nanoseconds"][row] / 1e9)
        assert (table["step_seconds"] >= table["optimizer_seconds"]).all()


def test_a_runs_own_step_seconds_come_back_equal(tmp_path):
    """What the run measured is what is read: ``step_seconds`` of the run's table through the store."""
    spec = specs(seeds=(5,))[0]
    table, meta = experiment_columns(spec)
    record = made_up_record(5, ROUNDS).model_copy(update={"regret_from": meta["regret_reference"]})
    path = str(tmp_path / "seeds5-5.npz")
    write_batch(path, [table], [record])
    back = read_runs({"s": [path]})[0]["s"][0]
    np.testing.assert_array_equal(back["step_seconds"], table["step_seconds"])
    np.testing.assert_array_equal(back["optimizer_seconds"], table["optimizer_seconds"])
    assert np.array_equal(back["cumulative_regret"], table["cumulative_regret"])


@pytest.mark.parametrize(
    ("asked", "problem"),
    [
        (lambda job: job_of(specs(seeds=(0, 2))), "it holds seeds [0, 1], the job asks for [0, 2]"),
        (
            lambda job: job_of(specs(params={"rho": 0.5})),
            "seed 0: params.rho: the run has 0.75, the config asks for 0.5",
        ),
        (lambda job: job_of(specs(noise=0.1)), "seed 0: noise: the run has 0.05, the config asks for 0.1"),
        (lambda job: job_of(specs(), source="0" * 64), "seed 0: source: the run was made by run code "),
        (
            lambda job: job_of(specs(), versions={**job.versions, "numpy": "1.0"}),
            f"seed 0: versions: numpy {np.__version__} (installed: 1.0)",
        ),
        (
            lambda job: job_of(specs(), data={"mnist/x.gz": {"sha256": "0" * 64}}),
            "seed 0: data.mnist/x.gz: the run has none, the config asks for",
        ),
    ],
)
def test_a_run_other_than_the_one_asked_is_refused_naming_file_and_field(batch, asked, problem):
    path, job = batch
    with pytest.raises(StaleRunError) as err:
        read_runs({"s": [path]}, READ_COLUMNS, {"s": ROUNDS}, {path: asked(job)})
    assert err.value.problems == {path: problem} or err.value.problems[path].startswith(problem)
    assert str(err.value).startswith(
        f"1 batch file(s) of runs are damaged or not what is asked:\n  - {path}: "
    )


def reseed(record: dict, seed: int) -> None:
    """Give a stored record another seed in each of its seed fields (a consistent record)."""
    record["seed"] = record["run"]["seed"] = seed
    if "seed" in record["metadata"]:
        record["metadata"]["seed"] = seed


def test_a_record_of_another_seed_or_other_code_is_refused_with_or_without_a_job(batch, tmp_path):
    path, job = batch
    copy = tmp_path / "seeds0-1.npz"
    copy.write_bytes(Path(path).read_bytes())
    edit_records(copy, lambda r: reseed(r["runs"][1], 7))
    with pytest.raises(
        StaleRunError, match=re.escape(f"{copy}: it holds seeds [0, 7], the job asks for [0, 1]")
    ):
        read_runs({"s": [str(copy)]}, jobs={str(copy): job})
    copy.write_bytes(Path(path).read_bytes())
    edit_records(copy, lambda r: r["runs"][0].update(source="0" * 64))
    for jobs in (None, {str(copy): job}):  # the installed code is checked without a job too
        with pytest.raises(
            StaleRunError,
            match=re.escape(f"{copy}: ") + ".*source: the run was made by run code 000000000000",
        ):
            read_runs({"s": [str(copy)]}, jobs=jobs)
    copy.write_bytes(Path(path).read_bytes())
    edit_records(copy, lambda r: r["runs"][1]["versions"].update(numpy="1.0"))
    with pytest.raises(
        StaleRunError, match=re.escape(f"{copy}: versions: numpy 1.0 (installed: {np.__version__})")
    ):
        read_runs({"s": [str(copy)]})


def test_a_run_of_another_horizon_is_refused_naming_the_file(batch):
    path, job = batch
    with pytest.raises(RunTableError) as err:
        read_runs({"s": [path]}, READ_COLUMNS, {"s": ROUNDS - 10})
    assert not isinstance(err.value, StaleRunError)
    assert err.value.problems == {path: f"seed 0: {ROUNDS} rounds recorded, the config {ROUNDS - 10}"}
    shorter = job_of(specs(horizon=ROUNDS - 10))  # asked of the job: a field of its spec
    with pytest.raises(
        StaleRunError, match=rf"seed 0: horizon: the run has {ROUNDS}, the config asks for {ROUNDS - 10}"
    ):
        read_runs({"s": [path]}, jobs={path: shorter})


def test_every_bad_file_of_every_setting_is_named_once(batch, tmp_path):
    path, job = batch
    damaged = tmp_path / "seeds0-1.npz"
    damaged.write_bytes(Path(path).read_bytes()[:100])
    with pytest.raises(RunTableError) as err:
        read_runs(
            {"a": [path], "b": [str(damaged)]}, jobs={path: job_of(specs(noise=0.1)), str(damaged): job}
        )
    assert not isinstance(err.value, StaleRunError)  # a damaged file is no stale run
    assert list(err.value.problems) == [path, str(damaged)]
    assert str(err.value).endswith(f"once these are deleted: `rm {path} {damaged}`")


def test_a_missing_batch_file_is_made_again_not_deleted(batch, tmp_path):
    """A file that is not there is named, and the remedy is the next run, not an ``rm`` of it."""
    path, job = batch
    missing = str(tmp_path / "seeds2-3.npz")
    with pytest.raises(RunTableError) as err:
        read_runs({"a": [path], "b": [missing]}, jobs={path: job, missing: job})
    message = str(err.value)
    assert missing in err.value.problems and "cannot be read" in err.value.problems[missing]
    assert message.endswith("The next snakemake run makes them") and "rm " not in message


# ---------------------------------------------------------------- planning


@pytest.mark.parametrize("name", ["tiny.yaml", "config.yaml"])
def test_every_run_of_a_config_is_in_exactly_one_batch(name):
    config = load([CONFIG_DIR / name])[0]
    batches = config.run_batches()
    runs = [(b.experiment, b.setting, seed) for b in batches for seed in b.seeds]
    assert sorted(runs) == sorted(config.run_jobs()) and len(set(runs)) == len(runs)
    for b in batches:
        assert 1 <= len(b.seeds) <= config.runs_per_job(b.experiment, b.setting)
    assert any(len(b.seeds) > 1 for b in batches) or name == "tiny.yaml"
    for experiment in config.experiments:
        jobs, paths = config.batch_jobs(experiment), config.run_paths(experiment)
        assert set(paths) == set(config.experiments[experiment].settings)
        assert {p for files in paths.values() for p in files} == set(jobs)  # the two views agree
        for setting, files in paths.items():
            seeds = [seed for path in files for seed in jobs[path].seeds]
            assert seeds == config.setting_seeds(experiment, setting)
            wanted = identity(config.run_spec(experiment, setting, seeds[0]))
            for path in files:
                assert identity(jobs[path].runs[0]) == wanted and path == jobs[path].path()
                assert path.startswith(f"{STORE}/")
    whole = config.batch_jobs()
    assert set(whole) == {p for e in config.experiments for p in config.batch_jobs(e)}
    for first, second in pairwise(batches):  # a setting's chunks in its seeds' order
        if (first.experiment, first.setting) == (second.experiment, second.setting):
            assert second.index == first.index + 1 and first.seeds[-1] < second.seeds[0]
