"""End to end: Snakemake on the tiny config, run as a subprocess into temporary directories.

One complete run (the session's, conftest's ``tiny_run``) is checked for figures and tables, then
re-invoked with nothing changed, with one batch of runs deleted, and compared byte for byte with a
second complete run of the aggregates. The real-data experiments of the tiny config (Landmine, MNIST,
BO included) run on fixture files: they are generated into a mirror directory, and the config
is overlaid with that mirror, unreachable "official" URLs and the fixtures' checksums, so the
download stage falls through to the mirror as it does offline.
"""

from __future__ import annotations

import base64
import hashlib
import os
import shlex
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from matplotlib import image
from support import (
    BIN,
    CORES,
    REPO,
    SNAKEMAKE,
    TINY,
    UMASK,
    batch_of,
    clean_env,
    fixture_config,
    interruptible,
    ok,
    planned,
    set_umask,
    snakemake,
)

from vhct.pipeline import config as vc
from vhct.pipeline.aggregate import FINAL_COLUMNS, REGRET_COLUMNS, TIMING_COLUMNS
from vhct.pipeline.config.owner import OWNER_FILE
from vhct.pipeline.data import MIRROR_ENV
from vhct.pipeline.figure_kinds import AUDIT_FIGURES
from vhct.pipeline.files import TEMP_SUFFIX
from vhct.pipeline.store import BATCH_SUFFIX, STORE, read_batch
from vhct.pipeline.tables import READ_COLUMNS, read_runs
from vhct.reporting.audit.records import AUDIT_FORMAT

#: experiments of the tiny config that read data files
REAL_EXPERIMENTS = ("landmine", "mnist")
#: a rejected config is reported in a few lines (Snakemake's header around our one line), not a schema dump
MAX_ERROR_LINES = 10


def mtimes(root: Path) -> dict[str, int]:
    return {
        str(p.relative_to(root)): p.stat().st_mtime_ns
        for sub in ("results", "figures")
        for p in (root / sub).rglob("*")
        if p.is_file()
    }


@pytest.fixture(scope="module")
def tiny(tiny_fixtures) -> Path:
    return tiny_fixtures


@pytest.fixture(scope="module")
def config(tiny) -> vc.Config:
    return vc.load([tiny])[0]


@pytest.fixture(scope="module")
def workdir(tiny_run) -> Path:
    return tiny_run


def test_every_declared_figure_is_a_valid_nonblank_image(workdir, config):
    for name in config.figures:
        pdf, png = workdir / "figures" / f"{name}.pdf", workdir / "figures" / f"{name}.png"
        assert pdf.read_bytes()[:5] == b"%PDF-", name
        assert pdf.stat().st_size > 1000, name
        pixels = image.imread(png)[..., :3]
        assert pixels.shape[0] > 200 and pixels.shape[1] > 200, name
        assert pixels.std() > 0.05, f"{name} looks blank"
        assert (pixels < 0.5).mean() > 0.001, f"{name} has almost no dark pixels"


def test_aggregate_tables_have_expected_rows_and_columns(workdir, config):
    for name, exp in config.experiments.items():
        folder = workdir / "results" / "aggregates" / name
        regret, final = pd.read_csv(folder / "regret.csv"), pd.read_csv(folder / "final.csv")
        timing = pd.read_csv(folder / "timing.csv")
        assert list(regret.columns) == REGRET_COLUMNS
        assert list(final.columns) == FINAL_COLUMNS
        assert list(timing.columns) == TIMING_COLUMNS
        horizons = {s: config.run_horizon(name, s) for s in exp.settings}
        assert len(regret) == sum(horizons.values())
        assert final["setting"].tolist() == exp.settings
        assert dict(zip(final["setting"], final["horizon"], strict=True)) == horizons
        assert set(regret["n_seeds"]) == {len(config.seeds(name))}
        assert len(timing) == len(exp.settings) * len(config.seeds(name))
        for setting, rows in regret.groupby("setting"):
            assert rows["t"].tolist() == list(range(1, horizons[setting] + 1))
            assert np.all(np.diff(rows["mean"]) >= -1e-9), "cumulative regret decreased"
            assert (rows["std"] >= 0).all()


def test_runs_are_in_the_store_with_their_records_and_logs(workdir, config):
    """Every batch the config asks for is a file of the run store holding its seeds' runs, one row of
    each stored array per run, as many rounds as the run's horizon, and its job's log."""
    jobs = config.batch_jobs()
    for path, job in jobs.items():
        batch = read_batch(workdir / path)
        assert [r.seed for r in batch.record.runs] == job.seeds, path
        for record, spec in zip(batch.record.runs, job.runs, strict=True):
            assert record.run == spec and record.wall_seconds > 0 and "numpy" in record.versions
        assert all(a.shape == (len(job.seeds), job.runs[0].horizon) for a in batch.columns.values()), path
        assert (workdir / config.layout.run_log(path)).stat().st_size > 0
    assert sum(len(job.seeds) for job in jobs.values()) == len(config.run_jobs())  # no run twice
    assert sorted(str(p.relative_to(workdir)) for p in (workdir / STORE).rglob("*") if p.is_file()) == sorted(
        jobs
    )
    assert not list((workdir / "results").rglob("*.tmp"))


def modes(root: Path, *subdirs: str) -> dict[str, int]:
    """Permission bits of every file under ``root/<subdir>``."""
    return {
        str(p.relative_to(root)): stat.S_IMODE(p.stat().st_mode)
        for sub in subdirs
        for p in (root / sub).rglob("*")
        if p.is_file()
    }


def test_outputs_follow_the_umask(workdir, config):
    """Runs, aggregates, figures and the audit are readable by the group (umask 022: mode 0644)."""
    found = modes(workdir, "results", "figures")
    expected_mode = 0o666 & ~UMASK
    assert {p: m for p, m in found.items() if m != expected_mode} == {}
    assert any(p.startswith("results/runs/") for p in found) and "results/audit.json" in found
    assert any(p.startswith("figures/") for p in found)


def test_second_invocation_runs_nothing(workdir, tiny):
    before = mtimes(workdir)
    result = ok(snakemake(workdir, configfile=tiny))
    assert "Nothing to be done" in result.stdout + result.stderr
    assert mtimes(workdir) == before


def test_deleting_one_batch_reruns_only_it_and_its_dependents(workdir, config, tiny):
    """A batch file deleted by hand is made again, and what reads it: its setting's and its
    experiment's aggregates and the figures drawing the setting."""
    batch = batch_of(config, "counterexample", "VHCT-phi2overh", 7)
    before = mtimes(workdir)
    (workdir / batch).unlink()
    ok(snakemake(workdir, configfile=tiny))
    after = mtimes(workdir)
    assert set(after) == set(before)
    changed = {p for p in after if after[p] != before[p]}
    dependents = {
        f"figures/{f}.{e}"
        for f in config.figures
        if "VHCT-phi2overh" in config.figure_settings(f).get("counterexample", [])
        for e in ("pdf", "png")
    }
    required = {
        batch,
        *(f"results/aggregates/counterexample/{t}.csv" for t in ("regret", "final", "timing")),
        *(f"results/aggregates/counterexample/settings/VHCT-phi2overh/{t}.csv" for t in ("regret", "timing")),
        *dependents,
    }
    assert dependents == {"figures/regret.pdf", "figures/regret.png"}
    assert required <= changed
    # nothing else of the run -> aggregate -> figure chain moved (targets of other rule
    # families reading that run, e.g. the audit and its forest figure, may rerun too)
    chain = {
        p
        for p in after
        if p.startswith(("results/runs/", "results/aggregates/", "figures/"))
        and not any(f in p for f in AUDIT_FIGURES)
    }
    assert (changed & chain) == required


@pytest.mark.slow
def test_a_targeted_aggregate_does_not_see_a_deleted_run_unless_the_run_is_named(tmp_path):
    """What docs/pipeline.md promises for targets narrower than the default one.

    Snakemake (9) checks only the requested file and what must run for it: behind an existing
    aggregate it does not look for a deleted run (snakemake/snakemake#1978). Naming the run as
    well reruns it and then the aggregate (its input is newer).
    """
    aggregate = "results/tiny/aggregates/counterexample/regret.csv"  # config/tiny.yaml's folder
    run = batch_of(vc.load([TINY])[0], "counterexample", "VHCT-phi2overh", 7)
    ok(snakemake(tmp_path, aggregate))
    before = mtimes(tmp_path)
    (tmp_path / run).unlink()
    result = ok(snakemake(tmp_path, aggregate))
    assert "Nothing to be done" in result.stdout + result.stderr
    assert not (tmp_path / run).exists()
    ok(snakemake(tmp_path, run, aggregate))
    after = mtimes(tmp_path)
    changed = {p for p in after if after[p] != before.get(p)}
    assert changed == {
        run,
        *(f"results/tiny/aggregates/counterexample/{t}.csv" for t in ("regret", "final", "timing")),
    }


def test_two_complete_runs_give_identical_aggregates(workdir, config, tiny, tmp_path):
    targets = [f"results/aggregates/{e}/{t}.csv" for e in config.experiments for t in ("regret", "final")]
    ok(snakemake(tmp_path, *targets, configfile=tiny))
    for target in targets:
        assert (tmp_path / target).read_bytes() == (workdir / target).read_bytes(), target
    assert not (tmp_path / "figures").exists()


@pytest.fixture(scope="module")
def batched(tmp_path_factory, tiny) -> tuple[Path, Path]:
    """The tiny config with Garland's and Landmine's runs four per job (two settings of two seeds;
    POO and BO one per job)."""
    folder = tmp_path_factory.mktemp("batched")
    config = yaml.safe_load(tiny.read_text(encoding="utf-8"))
    for experiment in BATCHED:
        config["experiments"][experiment]["runs_per_job"] = 4
    config["settings"]["POO"]["runs_per_job"] = 1
    config["settings"]["BO"]["runs_per_job"] = 1
    path = folder / "batched.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    root = folder / "work"
    ok(snakemake(root, *BATCH_TARGETS, configfile=path))
    return root, path


#: experiments the `batched` fixture runs several runs per job: synthetic and real data
BATCHED = ("garland", "landmine")
BATCH_TARGETS = [
    f"results/aggregates/{e}/{t}.csv" for e in (*BATCHED, "counterexample") for t in ("regret", "final")
]


def unclocked(metadata: dict) -> dict:
    """A run's metadata but its wall time (the one field two runs of one seed differ in)."""
    return {k: v for k, v in metadata.items() if k != "wall_seconds"}


def test_a_batch_job_writes_each_run_as_a_one_run_job_would(workdir, config, batched):
    """Each run's numbers and record as with one seed per job (aggregates byte for byte); the batch is
    one file of the store, named by the same key (what its runs are) and its seeds, with one log."""
    root, path = batched
    for target in BATCH_TARGETS:
        assert (root / target).read_bytes() == (workdir / target).read_bytes(), target
    many = vc.load([path])[0]
    for experiment, single_run in (("garland", "POO"), ("landmine", "BO")):
        for setting in ("VHCT-rho0.75", single_run):
            files = many.run_paths(experiment)[setting]
            alone = config.run_paths(experiment)[setting]
            assert [Path(p).parent for p in files] == [Path(alone[0]).parent] * len(files)  # one key
            rows = {
                r.seed: (read_batch(root / f), i)
                for f in files
                for i, r in enumerate(read_batch(root / f).record.runs)
            }
            for single in alone:
                one = read_batch(workdir / single)
                (seed,) = [r.seed for r in one.record.runs]
                batch, row = rows[seed]
                made, alone_made = batch.record.runs[row], one.record.runs[0]
                assert made.run == alone_made.run and made.source == alone_made.source
                assert unclocked(made.metadata) == unclocked(alone_made.metadata)
                for name in ("value", "depth", "guarantee"):
                    np.testing.assert_array_equal(batch.columns[name][row], one.columns[name][0])
            assert all((root / many.layout.run_log(f)).is_file() for f in files)
        assert len(many.run_paths(experiment)["VHCT-rho0.75"]) == 1  # a batch holds one setting's seeds
        assert len(many.run_paths(experiment)[single_run]) == 2  # POO and BO declare one run per job


def test_deleting_one_batch_file_reruns_only_its_job_and_dependents(batched):
    """Garland's batch of VHCT-rho0.75 holds its seeds 0 and 1 (a batch holds one setting's runs):
    deleting its file reruns that batch and the aggregates, no other setting's runs."""
    root, path = batched
    before = mtimes(root)
    (deleted,) = vc.load([path])[0].run_paths("garland")["VHCT-rho0.75"]
    (root / deleted).unlink()
    # named with the aggregates: a narrower target than the default does not look behind them
    plan = planned(ok(snakemake(root, "--dry-run", deleted, *BATCH_TARGETS, configfile=path)))
    assert plan["run"] == [deleted]
    ok(snakemake(root, deleted, *BATCH_TARGETS, configfile=path))
    after = mtimes(root)
    changed = {p for p in after if after[p] != before.get(p)}
    assert changed == {
        deleted,
        *(f"results/aggregates/garland/{t}.csv" for t in ("regret", "final", "timing")),
    }


def planned_jobs(result: subprocess.CompletedProcess) -> dict[str, int]:
    """The job counts of a dry run's "Job stats" table, by rule."""
    lines = (result.stdout + result.stderr).splitlines()
    start = lines.index("Job stats:") + 3  # the title, the header and its rule
    counts = {}
    for line in lines[start:]:
        name, count = line.split()
        if name == "total":
            return counts
        counts[name] = int(count)
    raise AssertionError("no total line in the dry run's job stats")


def test_deleting_one_real_data_batch_plans_only_it_and_its_dependents(batched):
    """Landmine's batch of T-HOO-rho0.25 holds its seeds 0 and 1 (POO and BO run alone): a dry run
    after deleting its file plans that batch (first: it reads data) and the aggregate, nothing else."""
    root, path = batched
    (name,) = vc.load([path])[0].run_paths("landmine")["T-HOO-rho0.25"]
    deleted = root / name
    kept, stat_before = deleted.read_bytes(), deleted.stat()
    deleted.unlink()
    try:  # named with the aggregates, as in the test above
        result = ok(snakemake(root, "--dry-run", name, *BATCH_TARGETS, configfile=path))
    finally:  # put it back as it was, so the other tests of the fixture see an up-to-date run
        deleted.write_bytes(kept)
        os.utime(deleted, ns=(stat_before.st_atime_ns, stat_before.st_mtime_ns))
    assert planned_jobs(result) == {"aggregate": 1, "run_first": 1}
    assert planned(result)["run_first"] == [name]


def test_one_figure_alone_runs_only_what_it_needs(tmp_path):
    result = ok(snakemake(tmp_path, "figures/tiny/function_1d.pdf"))  # config/tiny.yaml's folder
    assert (tmp_path / "figures" / "tiny" / "function_1d.png").exists()
    # no run, aggregate or audit: only the spec files written when the rules are read, and the
    # folder's owner record (vhct.pipeline.config.owner) written when the jobs start
    written = [p for p in (tmp_path / "results").rglob("*") if p.is_file() and ".specs" not in p.parts]
    assert [p.name for p in written] == [OWNER_FILE]
    assert not set(planned(result)) & {"run", "run_first"}


# ----------------------------------------------------------------------------- config files


def make_commands(target: str, configfile: Path, workdir: Path, targets: str = "") -> list[str]:
    """The shell lines ``make <target>`` runs (``make -n``), with Snakemake pointed at ``workdir``.

    ``BIN`` is this interpreter's and ``STAMP`` a fresh file, so the venv step is skipped.
    """
    stamp = workdir.parent / f"{workdir.name}.stamp"
    stamp.touch()
    cmd = ["make", "-n", "--no-print-directory", "-C", str(REPO), target, f"BIN={BIN}", f"STAMP={stamp}"]
    cmd += [f"CONFIG={configfile}", f"CORES={CORES}", f"TARGETS={targets}"]
    lines = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.splitlines()
    assert lines and not any("pip install" in line for line in lines), lines
    where = f"--snakefile {shlex.quote(str(REPO / 'Snakefile'))} --directory {shlex.quote(str(workdir))}"
    return [line.replace(f"{SNAKEMAKE} ", f"{SNAKEMAKE} {where} ") for line in lines]


def shell(line: str, workdir: Path) -> subprocess.CompletedProcess:
    """Run one of the Makefile's lines in ``workdir`` (as make runs it in the project directory)."""
    return subprocess.run(
        line,
        shell=True,
        cwd=workdir,
        capture_output=True,
        text=True,
        check=False,
        env=clean_env(),
        preexec_fn=set_umask,
    )


@pytest.mark.parametrize("text", ["progress_every: 5\n", "{}\n"])
def test_a_config_without_its_sections_is_rejected_not_replaced_by_the_default(tmp_path, text):
    bad = tmp_path / "partial.yaml"
    bad.write_text(text, encoding="utf-8")
    work = tmp_path / "work"
    work.mkdir()
    result = snakemake(work, configfile=bad)
    out = result.stdout + result.stderr
    assert result.returncode != 0
    assert (
        f"invalid config: {bad}: config key <root>: missing top-level key(s) settings, experiments, figures"
        in out
    )
    assert "not merged with yours" in out and len(out.splitlines()) < MAX_ERROR_LINES, out
    assert not (work / "results").exists() and not (work / "logs").exists()


@pytest.mark.parametrize(
    ("text", "snakemake_says", "we_say"),
    [
        (
            "",
            "Config file must be given as JSON or YAML with keys at top level.",
            ": the config file is empty",
        ),
        ("# comments only\n", "Config file must be given as JSON or YAML", ": the config file is empty"),
        (
            "settings:\n  a: {algorithm: VHCT\n  b: [\n",
            "Config file is not valid JSON or YAML",
            ":3:4: YAML syntax",
        ),
    ],
)
def test_unparsable_config_files_fail_before_any_job_and_make_names_file_and_line(
    tmp_path, text, snakemake_says, we_say
):
    """Snakemake parses --configfile before the workflow runs, and names neither file nor line;
    `make figures` checks the file first (python -m vhct.pipeline.config) and does."""
    bad = tmp_path / "bad.yaml"
    bad.write_text(text, encoding="utf-8")
    work = tmp_path / "work"
    work.mkdir()
    result = snakemake(work, configfile=bad)
    assert result.returncode != 0 and snakemake_says in result.stdout + result.stderr
    prepare, run = make_commands("figures", bad, work)
    assert "-m vhct.pipeline.config" in prepare and "--rerun-incomplete" in run
    checked = shell(prepare, work)
    assert checked.returncode != 0
    assert checked.stderr.startswith(f"{bad}{we_say}"), checked.stderr
    assert not (work / "results").exists() and not (work / "logs").exists()


@pytest.mark.parametrize(
    ("mutate", "key"),
    [
        (
            lambda c: c["settings"]["POO"].update(algorithm="NOPE"),
            "config key settings/POO/algorithm: unknown algorithm 'NOPE'",
        ),
        (
            lambda c: c["experiments"]["garland"].update(horizon=-3),
            "config key experiments/garland/horizon: Input should be greater than or equal to 1, got -3",
        ),
        (
            lambda c: c["experiments"]["garland"].pop("seeds"),
            "config key experiments/garland: missing key 'seeds'",
        ),
        (
            lambda c: c["figures"]["regret"]["panels"][0].update(experiment="ghost"),
            "figures/regret/panels/0/experiment",
        ),
        (
            lambda c: c.update(experiment=c.pop("experiments")),
            "config key experiment: unknown key 'experiment' (did you mean 'experiments'?",
        ),
    ],
)
def test_invalid_config_fails_before_any_job(tmp_path, mutate, key):
    config = yaml.safe_load(TINY.read_text(encoding="utf-8"))
    mutate(config)
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(config), encoding="utf-8")
    work = tmp_path / "work"
    work.mkdir()
    result = snakemake(work, configfile=bad)
    out = result.stdout + result.stderr
    assert result.returncode != 0
    assert f"invalid config: {bad}:" in out and key in out
    assert len(out.splitlines()) < MAX_ERROR_LINES, out  # one line, no schema dump
    assert not (work / "results").exists() and not (work / "logs").exists()


def test_snakemake_lint_is_clean(tmp_path):
    lint = snakemake(tmp_path, "--lint")
    assert lint.returncode == 0, lint.stdout + lint.stderr


def test_slurm_profile_dry_run(tmp_path):
    profile = REPO / "workflow" / "profiles" / "slurm"
    cmd = [
        SNAKEMAKE,
        "--snakefile",
        str(REPO / "Snakefile"),
        "--directory",
        str(tmp_path),
        "--configfile",
        str(TINY),
        "--profile",
        str(profile),
        "--dry-run",
    ]
    dry = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert dry.returncode == 0, dry.stdout + dry.stderr
    assert planned(dry)["run_first"]  # tiny.yaml's runs are one per job: each first
    # a dry run writes no output: only the spec files written when the rules are read
    assert not [p for p in (tmp_path / "results").rglob("*") if p.is_file() and ".specs" not in p.parts]


def test_captions_state_settings_and_the_data_mode():
    from vhct.pipeline.specs import ExperimentInfo
    from vhct.reporting.plots.common import experiment_caption

    exp = ExperimentInfo(
        name="e",
        title="E",
        noise=0.5,
        seeds=[0, 1, 2],
        horizon=80,
        objective="garland",
        objective_params={},
        settings={},
    )
    assert experiment_caption(exp) == "noise U(-0.5, 0.5), n = 80"  # seeds: per curve, in the legend
    real = exp.model_copy(
        update={"objective": "mnist", "objective_params": {"mode": "test-split", "data_dir": "data/mnist"}}
    )
    caption = experiment_caption(real)  # the data on lines of their own, as wide as a panel
    assert caption.startswith("noise U(-0.5, 0.5), n = 80\ndata: test-split")
    assert " ".join(caption.split()).endswith("(2,000 training + 1,000 validation images of the test set)")
    official = real.model_copy(update={"objective_params": {"mode": "official", "n_train": 3000}})
    expected = "data: official (3,000 of 60,000 training, 1,000 of 10,000 test images)"
    assert " ".join(experiment_caption(official).split("\n")[1:]) == expected


def test_run_jobs_wait_for_their_data_files(tmp_path):
    source = tmp_path / "source" / "table.txt"
    source.parent.mkdir()
    source.write_bytes(b"landmine-like bytes\n")
    config = yaml.safe_load(TINY.read_text(encoding="utf-8"))
    config["data"]["files"]["table"] = {
        "path": "fixtures/table.txt",
        "urls": [source.as_uri()],
        "md5": hashlib.md5(source.read_bytes()).hexdigest(),
    }
    config["experiments"]["counterexample"]["data"] = ["table"]
    path = tmp_path / "with-data.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    work = tmp_path / "work"
    work.mkdir()
    ok(snakemake(work, batch_of(vc.load([path])[0], "counterexample", "VHCT-rho0.75", 3), configfile=path))
    assert (work / "data" / "fixtures" / "table.txt").read_bytes() == source.read_bytes()
    assert (work / "logs" / "with-data" / "data" / "fixtures" / "table.txt.log").exists()
    assert [p.parts[-3] for p in (work / STORE).rglob(f"*{BATCH_SUFFIX}")] == ["counterexample"]


def test_atomic_paths_leave_nothing_on_failure(tmp_path):
    from vhct.pipeline.files import atomic_paths

    final = tmp_path / "out" / "table.csv"
    with pytest.raises(RuntimeError), atomic_paths(final) as (tmp,):
        tmp.write_text("partial")
        raise RuntimeError("interrupted")
    assert not final.exists() and list(final.parent.iterdir()) == []
    with atomic_paths(final) as (tmp,):
        tmp.write_text("complete")
    assert final.read_text() == "complete" and list(final.parent.iterdir()) == [final]


def test_atomic_paths_follow_the_umask_and_remove_a_killed_writers_temporary_files(tmp_path):
    from vhct.pipeline.aggregate import write_table
    from vhct.pipeline.files import atomic_paths

    final = tmp_path / "seed0.csv.gz"
    stale = [tmp_path / ".seed0.csv.gz.abc123.tmp", tmp_path / ".seed0.csv.gz.k_9Xq2.tmp"]  # ours, mkstemp's
    keep = [tmp_path / ".seed0.json.abc123.tmp", tmp_path / ".seed00.csv.gz.abc123.tmp", tmp_path / "x.tmp"]
    for path in stale + keep:
        path.write_text("left by a killed writer")
    old = os.umask(0o027)
    try:
        with atomic_paths(final) as (tmp,):
            assert not any(p.exists() for p in stale)
            tmp.write_text("complete")
        write_table(pd.DataFrame({"t": [1, 2]}), tmp_path / "table.csv")
    finally:
        os.umask(old)
    assert final.read_text() == "complete" and all(p.exists() for p in keep)
    assert stat.S_IMODE(final.stat().st_mode) == 0o640
    assert stat.S_IMODE((tmp_path / "table.csv").stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [final.name, "table.csv", *(p.name for p in keep)]
    )


# ----------------------------------------------------------------------------- interrupted runs

#: the experiment the resume tests interrupt (23 settings x 2 seeds = 46 runs, no data files)
RESUME_EXPERIMENT = "garland"
#: batch files that must exist before the signal: more than the jobs under way at a time (one per
#: core), so that at least one run had been finished and recorded by Snakemake
RESUME_AFTER = int(CORES) + 1
#: how often the test looks at the results folder while waiting for those tables
POLL_SECONDS = 0.05


def incomplete_outputs(workdir: Path) -> set[str]:
    """Outputs Snakemake had marked as under way (one file per output, named by its base64 path)."""
    folder = workdir / ".snakemake" / "incomplete"
    return {base64.b64decode(p.name).decode() for p in folder.iterdir()} if folder.is_dir() else set()


def interrupt(workdir: Path, run_line: str, runs: Path, sig: signal.Signals) -> None:
    """Start the Makefile's Snakemake line; once RESUME_AFTER batch files exist, send ``sig``.

    SIGINT goes to Snakemake and its jobs, as Ctrl-C in a terminal does. SIGKILL goes to the
    Snakemake process only (frozen first, so that it starts no job meanwhile); its jobs finish
    on their own and the test waits for them.
    """
    import psutil

    log = (workdir.parent / f"{workdir.name}-interrupted.log").open("w")
    proc = subprocess.Popen(
        shlex.split(run_line),
        cwd=workdir,
        stdout=log,
        stderr=subprocess.STDOUT,
        env=clean_env(),
        preexec_fn=interruptible,
        start_new_session=True,
    )
    while proc.poll() is None and len(list(runs.rglob(f"*{BATCH_SUFFIX}"))) < RESUME_AFTER:
        time.sleep(POLL_SECONDS)
    assert proc.poll() is None, "Snakemake ended before it could be interrupted"
    if sig == signal.SIGINT:
        os.killpg(proc.pid, signal.SIGINT)
        proc.wait()
    else:
        os.kill(proc.pid, signal.SIGSTOP)
        jobs = psutil.Process(proc.pid).children(recursive=True)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        psutil.wait_procs(jobs)
    log.close()


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL], ids=["ctrl-c", "kill-9"])
def test_the_make_command_resumes_an_interrupted_run(tmp_path, sig):
    """After Ctrl-C or a killed Snakemake, the same command finishes the job: finished runs are
    kept, the runs under way are redone, a stale lock is cleared and no temporary file is left."""
    config, _ = vc.load([TINY])
    target = f"results/tiny/aggregates/{RESUME_EXPERIMENT}/regret.csv"  # config/tiny.yaml's folder
    tables = config.batch_jobs(RESUME_EXPERIMENT)
    work = tmp_path / "work"
    work.mkdir()
    prepare, run = make_commands("figures", TINY, work, targets=target)
    runs = work / STORE / config.experiments[RESUME_EXPERIMENT].objective
    interrupt(work, run, runs, sig)
    present = {p for p in tables if (work / p).exists()}
    assert RESUME_AFTER <= len(present) < len(tables)
    assert not (work / target).exists()
    under_way = incomplete_outputs(work)
    # outputs only: a job interrupted while writing may leave its temporary file (removed below)
    before = {p: m for p, m in mtimes(work).items() if not p.endswith(TEMP_SUFFIX)}
    # a writer killed mid-write leaves its hidden temporary file (simulated: a job killed with -9)
    missing = Path(next(p for p in tables if p not in present))
    stale = work / missing.parent / f".{missing.name}.0123456789ab.tmp"
    stale.parent.mkdir(parents=True, exist_ok=True)
    stale.write_bytes(b"PK partial")
    locked = bool(list((work / ".snakemake" / "locks").glob("*")))
    assert locked == (sig == signal.SIGKILL)  # Ctrl-C releases the lock, a killed Snakemake cannot
    if locked:  # the bare Snakemake command refuses to run ...
        refused = shell(run, work)
        assert refused.returncode != 0 and "LockException" in refused.stdout + refused.stderr

    prepared = shell(prepare, work)  # ... the Makefile clears the stale lock first
    assert prepared.returncode == 0, prepared.stdout + prepared.stderr
    assert ("stale Snakemake lock" in prepared.stderr) == locked
    resumed = shell(run, work)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr

    after = mtimes(work)
    redone = {p for p in before if after.get(p) != before[p]}
    finished = {p for p in before if p.startswith(f"{STORE}/") and p not in under_way}
    assert finished and not (redone & finished)  # no finished run was redone
    assert redone <= under_way and len(under_way) <= 2 * int(CORES)  # at most the runs under way
    for path, job in tables.items():  # each whole (read_batch checks its arrays against its record)
        assert read_batch(work / path).columns["value"].shape == (len(job.seeds), job.runs[0].horizon), path
    assert (work / target).exists() and not stale.exists()
    assert not [p for p in work.rglob("*.tmp")]
    assert set(modes(work, "results").values()) == {0o666 & ~UMASK}
    assert not list((work / ".snakemake" / "locks").glob("*"))


def test_a_lock_is_stale_only_when_no_snakemake_works_in_the_directory(tmp_path):
    from vhct.pipeline import workdir_lock as wl

    work, elsewhere = tmp_path / "work", tmp_path / "elsewhere"
    work.mkdir()
    elsewhere.mkdir()
    assert wl.check(work)[0] == wl.NO_LOCK
    (work / wl.LOCK_DIR).mkdir(parents=True)
    (work / wl.LOCK_DIR / "0.output.lock").write_text("results/x\n")
    # stand-ins for a Snakemake (its command line names it) in the directory and in another one
    holders = [
        subprocess.Popen(
            [sys.executable, "-c", "import sys; sys.stdin.read()", "snakemake"],
            cwd=cwd,
            stdin=subprocess.PIPE,
        )
        for cwd in (work, elsewhere)
    ]
    try:
        code, message = wl.check(work)
        assert code == wl.IN_USE and f"pid {holders[0].pid}" in message
        assert f"pid {holders[1].pid}" not in message
    finally:
        for holder in holders:
            holder.stdin.close()
            holder.wait()
    code, message = wl.check(work)
    assert code == wl.STALE and "stale Snakemake lock" in message
    assert wl.main([str(work)]) == wl.STALE


# ----------------------------------------------------------------------------- real data


def test_real_data_files_fall_through_to_the_mirror(workdir, config):
    mirror = Path(config.data.mirror)
    for spec in config.data.files.values():
        assert (workdir / "data" / spec.path).read_bytes() == (mirror / spec.path).read_bytes()
        log = (workdir / "logs" / "data" / f"{spec.path}.log").read_text(encoding="utf-8")
        assert spec.urls[0] in log  # the official source was tried first ...
        assert f"fetched and verified from mirror {mirror} (config)" in log  # ... then the mirror


def test_real_data_regret_is_against_one_and_against_the_best_observed(workdir, config):
    for name in REAL_EXPERIMENTS:
        paths = {s: [workdir / p for p in files] for s, files in config.run_paths(name).items()}
        tables, records = read_runs(paths, READ_COLUMNS)
        values = []
        for setting, table in ((s, t) for s in tables for t in tables[s]):
            np.testing.assert_allclose(table["regret"], 1.0 - table["value"], atol=1e-12)
            assert table["value"].between(0, 1).all(), setting
            values.append(table["value"].max())
        for record in (r for rs in records.values() for r in rs):
            assert record.f_star is None and record.regret_from == 1.0
            assert record.metadata["f_star"] is None and record.metadata["regret_reference"] == 1.0
            if name == "mnist":
                assert record.metadata["objective_mode"] == "test-split"
        folder = workdir / "results" / "aggregates" / name
        final, regret = pd.read_csv(folder / "final.csv"), pd.read_csv(folder / "regret.csv")
        assert final["best_observed"].tolist() == pytest.approx([max(values)] * len(final))
        assert (regret["mean_vs_best"] >= -1e-12).all()
        assert (regret["mean_vs_best"] <= regret["mean"] + 1e-12).all()
        # the two regrets differ by t * (1 - best observed value)
        shift = final["horizon"] * (1.0 - final["best_observed"])
        np.testing.assert_allclose(final["final_vs_best_mean"], final["final_mean"] - shift, atol=1e-9)
        assert "BO" in set(final["algorithm"])


def test_missing_data_file_fails_naming_the_file_sources_and_the_mirror(tmp_path):
    config = yaml.safe_load(TINY.read_text(encoding="utf-8"))
    empty = tmp_path / "empty-mirror"
    empty.mkdir()
    config["data"]["mirror"] = str(empty)
    spec = config["data"]["files"]["landmine"]
    spec["urls"] = [(tmp_path / "offline" / "LandmineData.mat").as_uri()]
    path = tmp_path / "no-data.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    work = tmp_path / "work"
    work.mkdir()
    result = snakemake(work, "data/landmine/LandmineData.mat", configfile=path)
    assert result.returncode != 0
    log = work / "logs" / "no-data" / "data" / "landmine" / "LandmineData.mat.log"  # no-data.yaml's folder
    log = log.read_text(encoding="utf-8")
    assert "could not fetch data file 'landmine/LandmineData.mat'" in log
    assert spec["urls"][0] in log and f"mirror {empty} (config): missing in mirror" in log
    assert "VHCT_DATA_MIRROR" in log
    assert not [p for p in (work / "data").rglob("*") if p.is_file()]  # nothing partial is left


def test_shipped_configs_run_the_real_data_panels():
    for name in ("config", "paper"):
        config, _ = vc.load([REPO / "config" / f"{name}.yaml"])
        for figure, experiment in (("fig3b_landmine", "landmine"), ("fig3c_mnist", "mnist")):
            assert list(config.figure_settings(figure)) == [experiment], (name, figure)
            algorithms = {config.settings[s].algorithm for s in config.experiments[experiment].settings}
            paper = {"VHCT", "HCT", "T-HOO", "POO", "PCT", "BO"}
            # the paper's algorithms, and today's baselines for the audit's "beyond the paper"
            assert algorithms == paper | {"Random", "TPE", "CMA-ES", "GP-Optuna"}, (name, experiment)
            panel = config.figures[figure].panels[0].settings  # Fig. 3 draws the paper's alone
            assert {config.settings[s].algorithm for s in panel} == paper, (name, figure)
            # every file the objective reads is a declared data file, so the run jobs wait for it
            declared = set(config.data_files(experiment))
            params = config.experiments[experiment].objective_params
            if experiment == "landmine":
                assert params["data_path"] == "data/landmine/LandmineData.mat"
                assert declared == {"landmine/LandmineData.mat"}
            else:
                split = {"test-split": ("t10k",), "official": ("t10k", "train")}[params["mode"]]
                assert declared == {
                    f"mnist/{s}-{kind}-idx{k}-ubyte.gz"
                    for s in split
                    for kind, k in (("images", 3), ("labels", 1))
                }
    default, _ = vc.load([REPO / "config" / "config.yaml"])
    paper, _ = vc.load([REPO / "config" / "paper.yaml"])
    assert default.experiments["mnist"].objective_params["mode"] == "test-split"
    assert paper.experiments["mnist"].objective_params["mode"] == "official"
    assert paper.experiments["mnist"].objective_params["n_train"] == 60000


def test_the_run_writes_the_audit_and_the_report(workdir, config, tiny):
    """The audit stage is part of `all` (its JSON read back by the audit's one reader); `--report`
    then gathers figures, captions and audit."""
    from vhct.reporting.audit.claims import load_claims
    from vhct.reporting.audit.records import read_audit

    result = read_audit(workdir / "results" / "audit.json")
    claims = load_claims()
    assert [c.claim for c in result.claims] == claims.claims  # each verdict embeds its claim
    # the summary counts the paper's statements (a statement's readings once: verdicts.statements)
    assert sum(result.summary.values()) == len({c.reading_of or c.id for c in claims.claims})
    expected = {e for e in claims.experiments if e in config.experiments}
    assert set(result.context.experiments) == expected
    assert result.format == AUDIT_FORMAT
    for figure in AUDIT_FIGURES:  # drawn from the audit JSON
        assert (workdir / "figures" / f"{figure}.png").stat().st_size > 0
    # the audit's verdict table, written beside its JSON, is its verdicts (one row per comparison)
    table = pd.read_csv(workdir / "results" / "verdicts.csv", keep_default_na=False)
    rows = [max(1, sum(max(len(e.comparisons), 1) for e in c.experiments)) for c in result.claims]
    assert len(table) == sum(rows) + len(result.computed)
    readings = [c.claim.id for c in result.claims] + [c.claim.id for c in result.computed]
    assert set(table["reading"]) == set(readings)
    # the claims added from Sec. 4.4 and the appendix read the tiny config's runs (2 seeds, below
    # their minimum: no verdict, and the reason says how many seeds ran and how many they need)
    verdicts = {c.claim.id: c for c in result.claims}
    new_claims = [
        "vhct-faster-low-noise",
        "vhct-lead-low-vs-high-noise",
        "high-noise-vhct-hct-similar",
        "phi-conjecture-with-phi-oe",
        "phi-conjecture-with-default-oe",
        "phi-conjecture-equal-resolution",
        "himmelblau-easier-fig6",
        "synthetic-vhct-hct-small-gap-differences",
    ]
    for new in new_claims:
        assert verdicts[new].verdict == "not evaluated", new
        assert "this configuration runs 2 seeds" in verdicts[new].reason, new
    counter = verdicts["phi-conjecture-with-phi-oe"].experiments[0]
    assert counter.verdict == "not evaluated" and "the claim needs 20" in counter.reason
    # the questions beyond the paper: a separate part, answered on garland-beyond (capped settings
    # labelled with their round), the headline's counts untouched by it
    rows = {(q.question.id, e.experiment): e for q in result.beyond.questions for e in q.experiments}
    for q in (
        "vhct-vs-random",
        "vhct-vs-tpe",
        "vhct-vs-cmaes",
        "vhct-vs-gp-optuna",
        "vhct-vs-bo",
        "hct-vs-random",
        "hct-vs-bo",
    ):
        row = rows[(q, "garland-beyond")]
        assert row.verdict == "inconclusive (too few seeds)", q
        assert row.cost["a"] > 0 and row.cost["b"] > 0, q
    gp = rows[("vhct-vs-gp-optuna", "garland-beyond")].comparison
    assert (gp.round, gp.horizon, gp.label) == (12, 30, "VHCT-rho0.75 vs GP-Optuna at t = 12 of 30")
    assert rows[("vhct-vs-random", "garland-beyond")].comparison.round == 30
    assert rows[("vhct-vs-random", "garland")].verdict == "not evaluated"
    assert sum(result.summary.values()) == len({c.reading_of or c.id for c in claims.claims})
    md = (workdir / "results" / "audit.md").read_text(encoding="utf-8")
    assert "## Discrepancies in the paper" in md
    assert md.index("## Beyond the paper") > md.index("## Discrepancies in the paper")
    assert "| t = 12 of 30 |" in md[md.index("## Beyond the paper") :]
    # sensitivity: every choice is evaluated on garland with its variant settings, run by the tiny config
    assert "## Sensitivity to implementation choices" in md
    assert [s.choice for s in result.sensitivity] == claims.sensitivity  # each embeds its choice
    for s in result.sensitivity:
        choice = s.choice.id
        assert s.claims, choice
        # BO is compared at its own horizon (bo-regret-not-better), the others in Fig. 3's claim
        read = "bo-regret-not-better" if choice == "bo-fit-restarts" else "fig3-vhct-lowest"
        row = next(r for r in s.claims if r.claim == read)
        compared = {
            c.b for e in row.variant_experiments for c in e.comparisons if c.verdict != "not evaluated"
        }
        variants = set(s.choice.substitute.values())
        if s.choice.round is not None:  # the tiny horizons stop before the round: no claim is read there
            assert row.variant_verdict == "not applicable" and "stops before round" in row.variant_reason
            continue
        assert row.variant_verdict == "not evaluated", choice
        if not any(variants & set(exp.settings) for exp in config.experiments.values()):
            continue  # a variant the tiny config does not run (BO-restarts5) is reported, not evaluated
        # the tiny config's 2 seeds are below the claims' minimum: no verdict, and the reason says so
        assert not compared and "this configuration runs 2 seeds" in row.variant_reason, choice
    for figure in config.figures:
        assert (workdir / "results" / "report" / f"{figure}.rst").exists()
    report = workdir / "report.html"
    ok(snakemake(workdir, "--report", str(report), configfile=tiny))
    assert report.stat().st_size > 0


def test_pipeline_recovers_a_corrupted_data_file(tmp_path):
    """One Landmine run on the tiny config: a corrupted data file is fetched again from the mirror.

    First invocation: data/ already holds random bytes (never verified). Second: the verified
    file is truncated afterwards and the run deleted. Both times the run succeeds.
    """
    tiny = fixture_config(tmp_path)
    config = yaml.safe_load(tiny.read_text(encoding="utf-8"))
    rel = config["data"]["files"]["landmine"]["path"]
    source = Path(config["data"]["mirror"]) / rel
    work = tmp_path / "work"
    data_file = work / "data" / rel
    data_file.parent.mkdir(parents=True)
    data_file.write_bytes(np.random.default_rng(0).bytes(source.stat().st_size))
    target = batch_of(vc.load([tiny])[0], "landmine", "T-HOO-rho0.25", 0)
    run = work / target
    ok(snakemake(work, target, configfile=tiny))
    assert data_file.read_bytes() == source.read_bytes() and run.exists()
    data_file.write_bytes(data_file.read_bytes()[: data_file.stat().st_size // 2])  # truncated
    run.unlink()
    result = ok(snakemake(work, target, configfile=tiny))
    assert "rule verify_data" in result.stdout + result.stderr
    assert data_file.read_bytes() == source.read_bytes() and run.exists()
    log = (work / "logs" / "verify_data" / f"{rel}.log").read_text(encoding="utf-8")
    assert f"data/{rel}: the present copy is corrupted" in log
    assert not [p for p in data_file.parent.iterdir() if p.name.endswith(TEMP_SUFFIX)]
    assert clean_env().get(MIRROR_ENV) is None  # the mirror came from the config


def test_a_figure_plans_only_the_runs_of_the_settings_it_draws(tmp_path):
    """Issue 40, item 1: the dry run of one regret figure in an empty workdir plans the runs of its
    panels' settings and nothing else (Garland runs 23 settings, the figure draws 6 of them), and
    no experiment-wide aggregate."""
    config, _ = vc.load([TINY])
    drawn = config.figure_settings("regret")
    result = ok(snakemake(tmp_path, "-n", "figures/tiny/regret.pdf"))  # config/tiny.yaml's folder
    plan = planned(result)
    runs = {p for rule in ("run", "run_first") for p in plan.get(rule, [])}
    assert runs == {p for e, settings in drawn.items() for s in settings for p in config.run_paths(e)[s]}
    assert set(config.experiments["garland"].settings) - set(drawn["garland"])  # some are left out
    assert "results/tiny/aggregates/garland/regret.csv" not in result.stdout
    assert "results/tiny/aggregates/garland/settings/POO/regret.csv" in result.stdout
