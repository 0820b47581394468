"""End to end: Snakemake on the tiny config, run as a subprocess into temporary directories.

One complete run (module fixture) is checked for figures and tables, then re-invoked with
nothing changed, with one run output deleted, and compared byte for byte with a second
complete run of the aggregates. The real-data experiments of the tiny config (Landmine, MNIST,
BO included) run on fixture files: they are generated into a mirror directory, and the config
is overlaid with that mirror, unreachable "official" URLs and the fixtures' checksums, so the
download stage falls through to the mirror as it does offline.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from fixtures_real import clean_env, fixture_config
from matplotlib import image

from vhct import config as vc
from vhct.aggregate import FINAL_COLUMNS, REGRET_COLUMNS, TIMING_COLUMNS

REPO = Path(__file__).resolve().parents[1]
TINY = REPO / "config" / "tiny.yaml"
SNAKEMAKE = str(Path(sys.executable).parent / "snakemake")
CORES = "2"
#: experiments of the tiny config that read data files
REAL_EXPERIMENTS = ("landmine", "mnist")


def snakemake(workdir: Path, *args: str, configfile: Path = TINY) -> subprocess.CompletedProcess:
    cmd = [
        SNAKEMAKE,
        "--snakefile",
        str(REPO / "Snakefile"),
        "--directory",
        str(workdir),
        "--configfile",
        str(configfile),
        "--cores",
        CORES,
        *args,
    ]
    return subprocess.run(cmd, capture_output=True, text=True, check=False, env=clean_env())


def ok(result: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert result.returncode == 0, result.stdout + result.stderr
    return result


def mtimes(root: Path) -> dict[str, int]:
    return {
        str(p.relative_to(root)): p.stat().st_mtime_ns
        for sub in ("results", "figures")
        for p in (root / sub).rglob("*")
        if p.is_file()
    }


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    return fixture_config(tmp_path_factory.mktemp("fixtures"))


@pytest.fixture(scope="module")
def config(tiny) -> dict:
    return vc.load_config(tiny)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory, tiny) -> Path:
    root = tmp_path_factory.mktemp("pipeline")
    ok(snakemake(root, configfile=tiny))
    return root


def test_every_declared_figure_is_a_valid_nonblank_image(workdir, config):
    for name in config["figures"]:
        pdf, png = workdir / "figures" / f"{name}.pdf", workdir / "figures" / f"{name}.png"
        assert pdf.read_bytes()[:5] == b"%PDF-", name
        assert pdf.stat().st_size > 1000, name
        pixels = image.imread(png)[..., :3]
        assert pixels.shape[0] > 200 and pixels.shape[1] > 200, name
        assert pixels.std() > 0.05, f"{name} looks blank"
        assert (pixels < 0.5).mean() > 0.001, f"{name} has almost no dark pixels"


def test_aggregate_tables_have_expected_rows_and_columns(workdir, config):
    for name, exp in config["experiments"].items():
        folder = workdir / "results" / "aggregates" / name
        regret, final = pd.read_csv(folder / "regret.csv"), pd.read_csv(folder / "final.csv")
        timing = pd.read_csv(folder / "timing.csv")
        assert list(regret.columns) == REGRET_COLUMNS
        assert list(final.columns) == FINAL_COLUMNS
        assert list(timing.columns) == TIMING_COLUMNS
        horizons = {s: vc.run_horizon(config, name, s) for s in exp["settings"]}
        assert len(regret) == sum(horizons.values())
        assert final["setting"].tolist() == exp["settings"]
        assert dict(zip(final["setting"], final["horizon"], strict=True)) == horizons
        assert set(regret["n_seeds"]) == {len(vc.seeds(config, name))}
        assert len(timing) == len(exp["settings"]) * len(vc.seeds(config, name))
        for setting, rows in regret.groupby("setting"):
            assert rows["t"].tolist() == list(range(1, horizons[setting] + 1))
            assert np.all(np.diff(rows["mean"]) >= -1e-9), "cumulative regret decreased"
            assert (rows["std"] >= 0).all()


def test_runs_have_tables_sidecars_and_logs(workdir, config):
    for exp, setting, seed in vc.run_jobs(config):
        base = workdir / "results" / "runs" / exp / setting / f"seed{seed}"
        table = pd.read_csv(f"{base}.csv.gz")
        assert len(table) == vc.run_horizon(config, exp, setting)
        meta = yaml.safe_load(Path(f"{base}.json").read_text())
        assert meta["seed"] == seed and meta["run"]["setting"] == setting and meta["wall_seconds"] > 0
        assert "numpy" in meta["metadata"]["versions"]
        assert (workdir / "logs" / "run" / exp / setting / f"seed{seed}.log").stat().st_size > 0
    assert not list((workdir / "results").rglob("*.tmp"))


def test_second_invocation_runs_nothing(workdir, tiny):
    before = mtimes(workdir)
    result = ok(snakemake(workdir, configfile=tiny))
    assert "Nothing to be done" in result.stdout + result.stderr
    assert mtimes(workdir) == before


def test_deleting_one_run_reruns_only_it_and_its_dependents(workdir, config, tiny):
    target = workdir / "results" / "runs" / "counterexample" / "VHCT-phi2overh" / "seed7.csv.gz"
    before = mtimes(workdir)
    target.unlink()
    ok(snakemake(workdir, configfile=tiny))
    after = mtimes(workdir)
    assert set(after) == set(before)
    changed = {p for p in after if after[p] != before[p]}
    dependents = {
        f"figures/{f}.{e}"
        for f in config["figures"]
        if "counterexample" in vc.figure_experiments(config, f)
        for e in ("pdf", "png")
    }
    required = {
        "results/runs/counterexample/VHCT-phi2overh/seed7.csv.gz",
        "results/runs/counterexample/VHCT-phi2overh/seed7.json",
        *(f"results/aggregates/counterexample/{t}.csv" for t in ("regret", "final", "timing")),
        *dependents,
    }
    assert dependents == {"figures/regret.pdf", "figures/regret.png"}
    assert required <= changed
    # nothing else of the run -> aggregate -> figure chain moved (targets of other rule
    # families reading that run, e.g. an audit, may rerun too)
    chain = {p for p in after if p.startswith(("results/runs/", "results/aggregates/", "figures/"))}
    assert (changed & chain) == required


def test_two_complete_runs_give_identical_aggregates(workdir, config, tiny, tmp_path):
    targets = [f"results/aggregates/{e}/{t}.csv" for e in config["experiments"] for t in ("regret", "final")]
    ok(snakemake(tmp_path, *targets, configfile=tiny))
    for target in targets:
        assert (tmp_path / target).read_bytes() == (workdir / target).read_bytes(), target
    assert not (tmp_path / "figures").exists()


def test_one_figure_alone_runs_only_what_it_needs(tmp_path):
    result = ok(snakemake(tmp_path, "figures/function_1d.pdf"))
    assert (tmp_path / "figures" / "function_1d.png").exists()
    assert not (tmp_path / "results").exists()
    assert "rule run:" not in result.stdout + result.stderr


@pytest.mark.parametrize(
    ("mutate", "key"),
    [
        (lambda c: c["settings"]["POO"].update(algorithm="NOPE"), "['settings']['POO']['algorithm']"),
        (lambda c: c["experiments"]["garland"].update(horizon=-3), "['experiments']['garland']['horizon']"),
        (lambda c: c["experiments"]["garland"].pop("seeds"), "'seeds' is a required property"),
        (
            lambda c: c["figures"]["regret"]["panels"][0].update(experiment="ghost"),
            "figures/regret/panels/0/experiment",
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
    assert key in out
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
    assert "rule run:" in dry.stdout + dry.stderr
    assert not (tmp_path / "results").exists()


def test_captions_state_settings_and_the_data_mode():
    from vhct.plots import experiment_caption

    exp = {"noise": 0.5, "seeds": [0, 1, 2], "horizon": 80, "objective": "garland", "objective_params": {}}
    assert experiment_caption(exp) == "noise U(-0.5, 0.5), 3 seeds, n = 80"
    real = dict(exp, objective="mnist", objective_params={"mode": "test-split", "data_dir": "data/mnist"})
    assert experiment_caption(real).endswith("data: test-split")


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
    ok(snakemake(work, "results/runs/counterexample/VHCT-rho0.75/seed3.csv.gz", configfile=path))
    assert (work / "data" / "fixtures" / "table.txt").read_bytes() == source.read_bytes()
    assert (work / "logs" / "data" / "fixtures" / "table.txt.log").exists()
    assert not (work / "results" / "runs" / "garland").exists()


def test_atomic_paths_leave_nothing_on_failure(tmp_path):
    from vhct.jobs import atomic_paths

    final = tmp_path / "out" / "table.csv"
    with pytest.raises(RuntimeError), atomic_paths(final) as (tmp,):
        tmp.write_text("partial")
        raise RuntimeError("interrupted")
    assert not final.exists() and list(final.parent.iterdir()) == []
    with atomic_paths(final) as (tmp,):
        tmp.write_text("complete")
    assert final.read_text() == "complete" and list(final.parent.iterdir()) == [final]


# ----------------------------------------------------------------------------- real data


def test_real_data_files_fall_through_to_the_mirror(workdir, config):
    mirror = Path(config["data"]["mirror"])
    for spec in config["data"]["files"].values():
        assert (workdir / "data" / spec["path"]).read_bytes() == (mirror / spec["path"]).read_bytes()
        log = (workdir / "logs" / "data" / f"{spec['path']}.log").read_text(encoding="utf-8")
        assert spec["urls"][0] in log  # the official source was tried first ...
        assert f"fetched and verified from mirror {mirror} (config)" in log  # ... then the mirror


def test_real_data_regret_is_against_one_and_against_the_best_observed(workdir, config):
    for name in REAL_EXPERIMENTS:
        values = []
        for _, setting, seed in vc.run_jobs(config, [name]):
            base = workdir / "results" / "runs" / name / setting / f"seed{seed}"
            table = pd.read_csv(f"{base}.csv.gz")
            np.testing.assert_allclose(table["regret"], 1.0 - table["value"], atol=1e-12)
            assert table["value"].between(0, 1).all()
            values.append(table["value"].max())
            meta = yaml.safe_load(Path(f"{base}.json").read_text())
            assert meta["metadata"]["f_star"] is None and meta["metadata"]["regret_reference"] == 1.0
            if name == "mnist":
                assert meta["metadata"]["objective_mode"] == "test-split"
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
    log = (work / "logs" / "data" / "landmine" / "LandmineData.mat.log").read_text(encoding="utf-8")
    assert "could not fetch data file 'landmine/LandmineData.mat'" in log
    assert spec["urls"][0] in log and f"mirror {empty} (config): missing in mirror" in log
    assert "VHCT_DATA_MIRROR" in log
    assert not [p for p in (work / "data").rglob("*") if p.is_file()]  # nothing partial is left


def test_shipped_configs_run_the_real_data_panels():
    for name in ("config", "paper"):
        config = vc.load_config(REPO / "config" / f"{name}.yaml")
        for figure, experiment in (("fig3b_landmine", "landmine"), ("fig3c_mnist", "mnist")):
            assert vc.figure_experiments(config, figure) == [experiment], (name, figure)
            algorithms = {
                config["settings"][s]["algorithm"] for s in config["experiments"][experiment]["settings"]
            }
            assert algorithms == {"VHCT", "HCT", "T-HOO", "POO", "PCT", "BO"}, (name, experiment)
            # every file the objective reads is a declared data file, so the run jobs wait for it
            declared = set(vc.data_files(config, experiment))
            params = config["experiments"][experiment]["objective_params"]
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
    default = vc.load_config(REPO / "config" / "config.yaml")
    paper = vc.load_config(REPO / "config" / "paper.yaml")
    assert default["experiments"]["mnist"]["objective_params"]["mode"] == "test-split"
    assert paper["experiments"]["mnist"]["objective_params"]["mode"] == "official"
    assert paper["experiments"]["mnist"]["objective_params"]["n_train"] == 60000


def test_the_run_writes_the_audit_and_the_report(workdir, config, tiny):
    """The audit stage is part of `all`; `--report` then gathers figures, captions and audit."""
    from vhct.audit import claims_experiments, load_claims

    result = json.loads((workdir / "results" / "audit.json").read_text(encoding="utf-8"))
    claims = load_claims()
    assert [c["id"] for c in result["claims"]] == [c["id"] for c in claims["claims"]]
    assert sum(result["summary"].values()) == len(result["claims"])
    expected = {e for e in claims_experiments(claims) if e in config["experiments"]}
    assert set(result["context"]["experiments"]) == expected
    md = (workdir / "results" / "audit.md").read_text(encoding="utf-8")
    assert "## Discrepancies in the paper" in md
    # sensitivity: every choice is evaluated on garland with its variant settings, run by the tiny config
    assert "## Sensitivity to implementation choices" in md
    assert [c["id"] for c in result["sensitivity"]] == [c["id"] for c in claims["sensitivity"]]
    for choice in result["sensitivity"]:
        assert choice["claims"], choice["id"]
        row = next(r for r in choice["claims"] if r["claim"] == "fig3-vhct-lowest")
        garland = next(e for e in row["variant_experiments"] if e["experiment"] == "garland")
        compared = {c["b"] for c in garland["comparisons"] if c["verdict"] != "not evaluated"}
        assert compared & set(choice["substitute"].values()), choice["id"]
        assert row["variant_verdict"] != "not evaluated"
    for figure in config["figures"]:
        assert (workdir / "results" / "report" / f"{figure}.rst").exists()
    report = workdir / "report.html"
    ok(snakemake(workdir, "--report", str(report), configfile=tiny))
    assert report.stat().st_size > 0
