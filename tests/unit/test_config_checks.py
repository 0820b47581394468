"""Every config mistake fails in the pre-check (``python -m vhct.pipeline.config FILE``) and in the
workflow's own load, before any job, naming the file, the line and the key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from support import REPO, TINY, snakemake

from vhct.pipeline import config as vc


def precheck(path: Path, capsys) -> str:
    """The pre-check's error line for a config that must be rejected."""
    assert vc.main([str(path)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err  # one line
    return err.rstrip("\n")


def derived(tmp_path: Path, text: str) -> Path:
    """A config extending the tiny one with ``text`` (line 1 is ``base``)."""
    path = tmp_path / "derived.yaml"
    path.write_text(f"base: {TINY}\n{text}", encoding="utf-8")
    return path


def test_a_key_given_twice_is_rejected_with_its_line(tmp_path, capsys):
    """Two settings `VHCT-rho0.75` (the second with rho 0.1) no longer run silently under one name."""
    lines = TINY.read_text(encoding="utf-8").splitlines()
    first = next(i for i, s in enumerate(lines) if s.startswith("  VHCT-rho0.75:")) + 1
    lines.insert(first, '  VHCT-rho0.75: {algorithm: VHCT, label: "VHCT", params: {rho: 0.1}}')
    path = tmp_path / "twice.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    err = precheck(path, capsys)
    assert err == (
        f"{path}:{first + 1}:3: duplicate key 'VHCT-rho0.75' (first given on line {first}): "
        "a mapping may give a key only once"
    )
    with pytest.raises(vc.ConfigError, match=f"^{path}:{first + 1}:3: duplicate key"):
        vc.load([path])
    # in a file that is only a base of the one given, too
    child = tmp_path / "child.yaml"
    child.write_text(f"base: {path.name}\n", encoding="utf-8")
    with pytest.raises(vc.ConfigError, match=f"^{path}:{first + 1}:3: duplicate key"):
        vc.load([child])


def test_duplicates_deep_inside_and_yaml_merge_keys(tmp_path):
    path = tmp_path / "deep.yaml"
    path.write_text("a:\n  b: {c: 1, d: 2, c: 3}\n", encoding="utf-8")
    with pytest.raises(vc.ConfigError, match=f"^{path}:2:19: duplicate key 'c' \\(first given on line 2\\)"):
        vc.read_config_file(path)
    # a key brought in by a YAML merge may be overridden: that is what the merge is for
    path.write_text("x-d: &d {p: 1, q: 2}\na: {<<: *d, q: 3}\n", encoding="utf-8")
    assert vc.read_config_file(path)["a"] == {"p": 1, "q": 3}


@pytest.mark.integration  # a Snakemake subprocess (a dry run)
def test_the_workflow_rejects_a_duplicate_key_before_any_job(tmp_path):
    """Snakemake's own --configfile load keeps the last value; the workflow reads the file again
    through the package's loader and stops at parse time, naming the file and line."""
    lines = TINY.read_text(encoding="utf-8").splitlines()
    at = lines.index("progress_every: 20") + 1
    lines.insert(at, "progress_every: 30")
    path = tmp_path / "twice.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    done = snakemake(tmp_path / "w", "--dry-run", configfile=path)
    assert done.returncode != 0
    output = done.stdout + done.stderr
    assert (
        f"invalid config: {path}:{at + 1}:1: duplicate key 'progress_every' (first given on line {at})"
        in output
    )
    assert not (tmp_path / "w" / "results").exists()


@pytest.mark.parametrize(
    ("text", "line", "key", "words"),
    [
        # each of these passed the former pre-check and failed only inside a job
        (
            "settings:\n  T-HOO-rho0.25: {params: {truncation: 5}}\n",
            3,
            "settings/T-HOO-rho0.25/params/truncation",
            "truncation",
        ),
        ("settings:\n  PCT:\n    params: {schedule: fast}\n", 4, "settings/PCT/params/schedule", "fast"),
        (
            "settings:\n  VHCT-rho0.75: {params: {rho: .nan}}\n",
            3,
            "settings/VHCT-rho0.75/params/rho",
            "finite number, got nan",
        ),
        ("experiments:\n  garland: {noise: .inf}\n", 3, "experiments/garland/noise", "got inf"),
        (
            "settings:\n  VHCT-rho0.75:\n    params: {variance_floor: -1}\n",
            4,
            "settings/VHCT-rho0.75/params/variance_floor",
            "variance_floor",
        ),
        ("settings:\n  PCT:\n    params: {first_epoch: 1.5}\n", 4, "settings/PCT/params/first_epoch", "1.5"),
        ("experiments:\n  garland: {horizon: 1000000}\n", 3, "experiments/garland/horizon", "mem_mb"),
        ("experiments:\n  garland: {horizon: 1000001}\n", 3, "experiments/garland/horizon", "MAX_HORIZON"),
        (
            "experiments:\n  rastrigin-high-noise:\n    objective_params: {dim: 0}\n",
            4,
            "experiments/rastrigin-high-noise/objective_params/dim",
            "dim",
        ),
        (
            "experiments:\n  mnist:\n    objective_params: {modus: official}\n",
            4,
            "experiments/mnist/objective_params/modus",
            "does not accept",
        ),
        ("resources:\n  run: {mem_mb: .inf}\n", 3, "resources/run/mem_mb", "finite"),
    ],
)
def test_formerly_job_time_errors_fail_in_the_precheck_with_file_line_and_key(
    tmp_path, capsys, text, line, key, words
):
    path = derived(tmp_path, text)
    err = precheck(path, capsys)
    assert err.startswith(f"{path}:{line}: config key {key}: "), err
    assert words in err


@pytest.mark.parametrize(
    ("params", "algorithm", "key"),
    [
        ({"rho": 1.5}, "VHCT", "rho"),
        ({"nu": True}, "VHCT", "nu"),
        ({"split": "diagonal"}, "VHCT", "split"),
        ({"resolution": {"kind": "cubic"}}, "VHCT", "resolution"),
        ({"resolution": {"kind": "polynomial", "a": -1}}, "VHCT", "resolution"),
        ({"rho_max": 0}, "POO", "rho_max"),
    ],
)
def test_a_parameter_out_of_its_range_is_refused_in_the_optimizers_own_words(
    tmp_path, capsys, params, algorithm, key
):
    """Issue 49: a parameter's range is written once, in the optimizer's own check, which the config
    asks (it builds each setting's optimizer); the message names the file, line and key."""
    from vhct.optimizers.registry import make_optimizer

    with pytest.raises(ValueError) as own:
        make_optimizer(algorithm, [[0.0, 1.0]], 60, 0, **params)
    setting = {"VHCT": "VHCT-rho0.75", "POO": "POO"}[algorithm]
    path = derived(tmp_path, f"settings:\n  {setting}: {{params: {json.dumps(params)}}}\n")
    err = precheck(path, capsys)
    assert err.startswith(f"{path}:3: config key settings/{setting}/params/{key}: "), err
    assert str(own.value) in err, err


def test_a_setting_no_experiment_runs_has_its_parameters_checked_all_the_same(tmp_path, capsys):
    """Its optimizer is built on a stand-in box: the range is the optimizer's there too."""
    path = derived(tmp_path, "settings:\n  spare: {algorithm: HCT, params: {rho: 1.5}}\n")
    err = precheck(path, capsys)
    assert err.startswith(f"{path}:3: config key settings/spare/params/rho: HCT rejects it "), err
    assert "no experiment runs it" in err and "rho must lie in (0, 1), got 1.5" in err
    fine = derived(tmp_path, "settings:\n  spare: {algorithm: HCT, params: {rho: 0.5}}\n")
    vc.load([fine])


def test_nan_is_rejected_wherever_it_stands(tmp_path):
    """NaN passes a `minimum` (every comparison with NaN is false) and hides in free mappings."""
    config = vc.merged_files([TINY])[0]
    config["figures"]["osc"]["panels"][0]["title"] = "fine"
    config["experiments"]["garland"]["objective_params"] = {"weights": [1.0, float("nan")]}
    with pytest.raises(vc.ConfigError, match="config key experiments/garland/objective_params/weights/1: "):
        vc.validate_config(config)
    with pytest.raises(vc.ConfigError, match="progress_every"):
        vc.load([TINY], {"progress_every": float("inf")})


def test_a_horizon_whose_table_fits_mem_mb_passes_and_the_message_says_what_fits(tmp_path, capsys):
    config = vc.load([TINY])[0].as_dict()
    from vhct.pipeline.tables import MEASURE_COLUMNS

    columns = 1 + 1 + len(MEASURE_COLUMNS)  # t, x0 and the measures: garland is 1-D
    per_round = columns * vc.TABLE_BYTES_PER_VALUE / 1e6
    fits = int((1000 - vc.RUN_BASE_MB) / per_round)
    ok = derived(
        tmp_path, f"resources:\n  run: {{mem_mb: 1000}}\nexperiments:\n  garland: {{horizon: {fits}}}\n"
    )
    assert vc.load([ok])[0].experiments["garland"].horizon == fits
    bad = derived(
        tmp_path, f"resources:\n  run: {{mem_mb: 1000}}\nexperiments:\n  garland: {{horizon: {fits + 2}}}\n"
    )
    err = precheck(bad, capsys)
    assert err.startswith(f"{bad}:5: config key experiments/garland/horizon: a run of {fits + 2} rounds")
    assert f"at most {fits} rounds fit" in err
    # a setting's own mem_mb counts; its capped horizon is the one that must fit
    config["settings"]["short"]["max_horizon"] = vc.MAX_HORIZON
    config["experiments"]["garland"]["horizon"] = vc.MAX_HORIZON
    with pytest.raises(
        vc.ConfigError, match=f"config key experiments/garland/horizon: a run of {vc.MAX_HORIZON} rounds"
    ):
        vc.validate_config(config)


def test_experiments_asking_for_the_same_runs_share_their_batch_files(tmp_path):
    """No rule is named after an experiment any more (the run store's rules take every batch), so
    names that differ only in ``-`` and ``_`` are two experiments; asking for the same runs, they
    name the same batch files: each run is made once."""
    text = (
        "experiments:\n"
        "  gar-land: {title: a, objective: garland, noise: 0.05, horizon: 10, seeds: 2, settings: [POO]}\n"
        "  gar_land: {title: b, objective: garland, noise: 0.05, horizon: 10, seeds: 2, settings: [POO]}\n"
        "  noisier: {title: c, objective: garland, noise: 0.1, horizon: 10, seeds: 2, settings: [POO]}\n"
    )
    path = derived(tmp_path, text)
    assert vc.main([str(path)]) == 0
    cfg = vc.load([path])[0]
    shared = cfg.run_paths("gar-land")
    assert shared == cfg.run_paths("gar_land") and len(shared["POO"]) == 2  # runs_per_job 1: a file per seed
    assert set(cfg.batch_jobs("gar-land")) == set(cfg.batch_jobs("gar_land")) == set(shared["POO"])
    assert set(cfg.run_paths("noisier")["POO"]).isdisjoint(shared["POO"])  # other runs
    every = {p for e in cfg.experiments for files in cfg.run_paths(e).values() for p in files}
    assert set(cfg.batch_jobs()) == every  # one job per file


@pytest.mark.parametrize(
    ("panel", "key", "words"),
    [
        ("{experiment: garland, setting: VHCT-rho0.75, seed: 5, round: 30}", "seed", "seed 5 is not run"),
        # the OSC report exists for VHCT and HCT only
        ("{experiment: garland, setting: short, seed: 0, round: 30}", "setting", "needs one of HCT, VHCT"),
        (
            "{experiment: garland, setting: VHCT-rho0.75, seed: 0, round: 61}",
            "round",
            "exceeds the horizon 60",
        ),
    ],
)
def test_osc_panels_need_a_run_seed_and_a_round_within_the_horizon(tmp_path, capsys, panel, key, words):
    path = derived(tmp_path, f"figures:\n  osc:\n    panels: [{panel}]\n")
    err = precheck(path, capsys)
    assert err.startswith(f"{path}:4: config key figures/osc/panels/0/{key}: "), err
    assert words in err


def test_an_osc_round_past_the_settings_capped_horizon_is_rejected():
    config = vc.load([TINY])[0].as_dict()
    config["settings"]["VHCT-rho0.75"]["max_horizon"] = 25  # garland runs 60 rounds, this setting 25
    config["figures"]["osc"]["panels"][0]["round"] = 30
    with pytest.raises(vc.ConfigError, match="round: 30 exceeds the horizon 25 of setting 'VHCT-rho0.75'"):
        vc.validate_config(config)
    config["figures"]["osc"]["panels"][0]["round"] = 25
    vc.validate_config(config)


def test_the_shipped_configs_pass_every_check():
    for name in ("tiny", "config", "paper", "paper-local"):
        # paper-local runs its analysis plan's seeds (tests/unit/test_plan.py): validated without it here
        cfg, files = vc.load([REPO / "config" / f"{name}.yaml"], plan=name != "paper-local")
        assert files[-1] == (REPO / "config" / f"{name}.yaml").resolve()
        assert cfg.run_jobs()


def test_real_data_objectives_are_checked_from_their_source_without_importing_them():
    """Their parameter names and dimension come from the module's source (no torch at parse time)."""
    import inspect

    from vhct.objectives.landmine import LANDMINE_DOMAIN, LandmineSVM
    from vhct.objectives.mnist import MNIST_DOMAIN, MnistMLP

    for cls, domain in ((LandmineSVM, LANDMINE_DOMAIN), (MnistMLP, MNIST_DOMAIN)):
        params, dim = vc.lazy_objective(f"{cls.__module__}:{cls.__name__}")
        assert params == set(inspect.signature(cls).parameters) and dim == len(domain)


@pytest.mark.parametrize(
    ("text", "line", "key", "words"),
    [
        ("experiments:\n  garland: {seeds: 2.0}\n", 3, "experiments/garland/seeds", "got a number 2.0"),
        ('experiments:\n  garland: {horizon: "10"}\n', 3, "experiments/garland/horizon", "got a string '10'"),
        ("experiments:\n  garland: {seeds: [0, 1.5]}\n", 3, "experiments/garland/seeds/1", "integer"),
        ("progress_every: 2.5\n", 2, "progress_every", "valid integer"),
        ("settings:\n  POO: {runs_per_job: true}\n", 3, "settings/POO/runs_per_job", "got a boolean True"),
        (
            "settings:\n  VHCT-rho0.75: {params: {rho: '0.5'}}\n",
            3,
            "settings/VHCT-rho0.75/params/rho",
            "number",
        ),
        ("resources:\n  run: {mem_mb: 1000.0}\n", 3, "resources/run/mem_mb", "valid integer"),
    ],
)
def test_a_number_of_the_wrong_type_is_refused_with_file_line_and_key(
    tmp_path, capsys, text, line, key, words
):
    """Issue 31: `seeds: 2.0` crashed the pre-check with a raw TypeError; strict types refuse it, named."""
    path = derived(tmp_path, text)
    err = precheck(path, capsys)
    assert err.startswith(f"{path}:{line}: config key {key}: "), err
    assert words in err, err


# ---------------------------------------------------------------- data: only verified files, inside data/
@pytest.mark.parametrize("path", ["../../../outside/x", "landmine/../../../outside/x", "./landmine/x", ".."])
def test_a_data_file_path_leaving_the_data_directory_is_refused_naming_the_key(tmp_path, capsys, path):
    """The probe: `data.files.landmine.path: ../../../outside/x` passed the pre-check and the job
    failed with a traceback (its rule would write outside the project)."""
    config = derived(tmp_path, f"data:\n  files:\n    landmine:\n      path: {path}\n")
    err = precheck(config, capsys)
    assert err == (
        f"{config}:5: config key data/files/landmine/path: a data file's 'path' must stay inside the data "
        f"directory (relative, without '.', '..' or empty parts), got {path!r}"
    )


@pytest.mark.parametrize(
    "value",
    [
        "/tmp/flipped/LandmineData.mat",  # an unverified file outside the project
        "data/landmine/Flipped.mat",  # inside data/, never verified
        "data/landmine/../landmine/LandmineData.mat",
        "data/mnist/t10k-images-idx3-ubyte.gz",  # verified, but for another experiment
        "data",
    ],
)
def test_a_data_path_outside_the_experiments_verified_files_is_refused(tmp_path, capsys, value):
    """The probe: `objective_params.data_path` naming Landmine with flipped labels passed the pre-check,
    and every run read it while the verified file's stamp was the job's input: its checksum bypassed."""
    config = derived(tmp_path, f"experiments:\n  landmine:\n    objective_params: {{data_path: {value}}}\n")
    err = precheck(config, capsys)
    assert err == (
        f"{config}:4: config key experiments/landmine/objective_params/data_path: {value!r} is not a "
        "verified data file of the experiment (its `data` list: data/landmine/LandmineData.mat); declare "
        "the file under data/files with its checksum and list it in the experiment's `data`"
    )


def test_a_data_dir_whose_files_the_experiment_does_not_verify_is_refused(tmp_path, capsys):
    """MNIST reads its files from `data_dir`: each one its mode reads must be a verified file of the
    experiment (mode `official` reads the training files too, which the tiny config does not list)."""
    official = derived(tmp_path, "experiments:\n  mnist:\n    objective_params: {mode: official}\n")
    err = precheck(official, capsys)
    assert "config key experiments/mnist/objective_params/data_dir: objective 'mnist' reads " in err
    assert (
        "data/mnist/train-images-idx3-ubyte.gz, data/mnist/train-labels-idx1-ubyte.gz from 'data/mnist'"
        in err
    )
    other = derived(tmp_path, "experiments:\n  mnist:\n    objective_params: {data_dir: /tmp/mnist}\n")
    assert "'/tmp/mnist': objective 'mnist' is not a folder inside data/" in precheck(other, capsys)
    elsewhere = derived(tmp_path, "experiments:\n  mnist:\n    objective_params: {data_dir: data/other}\n")
    assert "reads data/other/t10k-images-idx3-ubyte.gz" in precheck(elsewhere, capsys)
    # listing the training files (declared with their checksums) makes the official mode valid
    train = yaml.safe_load((REPO / "config" / "config.yaml").read_text(encoding="utf-8"))["data"]["files"]
    files = {name: train[name] for name in ("mnist-train-images", "mnist-train-labels")}
    listed = derived(
        tmp_path,
        f"data:\n  files: {json.dumps(files)}\n"
        "experiments:\n  mnist:\n    objective_params: {mode: official}\n"
        "    data: [mnist-test-images, mnist-test-labels, mnist-train-images, mnist-train-labels]\n",
    )
    assert vc.main([str(listed)]) == 0, capsys.readouterr().err


def test_the_objectives_declared_reads_are_what_it_reads(tmp_path):
    """The literals the pre-check reads from the MNIST module's source are the files the objective
    opens: each mode built on a folder holding exactly those files."""
    pytest.importorskip("torch")
    from support import write_mnist_dir

    from vhct.objectives.mnist import MnistMLP
    from vhct.pipeline.config.checks import data_dir_reads

    for mode in ("official", "test-split"):
        folder = write_mnist_dir(tmp_path / mode)
        reads = data_dir_reads("mnist", {"mode": mode})
        for extra in sorted({p.name for p in folder.iterdir()} - set(reads)):
            (folder / extra).unlink()
        MnistMLP(folder, mode=mode, n_train=20, n_valid=10)
        for name in reads:  # and each of them is needed
            kept = (folder / name).read_bytes()
            (folder / name).unlink()
            with pytest.raises(ValueError, match=f"lacks {name}"):
                MnistMLP(folder, mode=mode, n_train=20, n_valid=10)
            (folder / name).write_bytes(kept)
    assert data_dir_reads("mnist", {}) == data_dir_reads("mnist", {"mode": "official"})  # the default


@pytest.mark.integration  # a Snakemake subprocess (a dry run)
def test_the_workflow_refuses_an_unverified_data_path_before_any_job(tmp_path):
    config = derived(
        tmp_path, "experiments:\n  landmine:\n    objective_params: {data_path: /tmp/flipped.mat}\n"
    )
    done = snakemake(tmp_path / "w", "--dry-run", configfile=config)
    assert done.returncode != 0
    assert (
        f"invalid config: {config}:4: config key experiments/landmine/objective_params/data_path: "
        "'/tmp/flipped.mat' is not a verified data file" in done.stdout + done.stderr
    )
    assert not (tmp_path / "w" / "results").exists()
