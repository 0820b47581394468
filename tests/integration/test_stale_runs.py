"""A changed config is never served old runs, even without ``.snakemake/`` (issue 31, the probe
"stale results are taken for new ones"): each run's sidecar records its spec, and the rules
compare it with the config when they are read, before any job."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml
from support import ok, snakemake

from vhct.pipeline.config import load
from vhct.pipeline.tables import read_sidecar, sidecar_path
from vhct.pipeline.versions import package_versions

pytestmark = pytest.mark.integration

EXPERIMENT = "garland"
FINAL = f"results/aggregates/{EXPERIMENT}/final.csv"


def small_config(folder: Path, horizon: int, rho: float) -> Path:
    """Two settings, two seeds, one synthetic experiment (its figure is not asked for)."""
    config = {
        "settings": {
            "VHCT": {"algorithm": "VHCT", "params": {"rho": rho}},
            "HCT": {"algorithm": "HCT", "params": {"rho": 0.75}},
        },
        "experiments": {
            EXPERIMENT: {"objective": "garland", "noise": 0.05, "horizon": horizon, "seeds": 2,
                         "settings": ["VHCT", "HCT"]},
        },
        "figures": {"regret": {"kind": "regret", "panels": [{"experiment": EXPERIMENT}]}},
        "output": "",  # one folder for both files: a config changed in place
    }  # fmt: skip
    path = folder / f"h{horizon}-rho{rho}.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def files(root: Path) -> dict[str, int]:
    """Every file under results/ and its modification time."""
    return {
        str(p.relative_to(root)): p.stat().st_mtime_ns for p in (root / "results").rglob("*") if p.is_file()
    }


def test_a_changed_config_without_snakemake_s_records_fails_before_any_job(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    first, second = small_config(tmp_path, 30, 0.75), small_config(tmp_path, 40, 0.5)
    ok(snakemake(work, FINAL, configfile=first))
    assert set(pd.read_csv(work / FINAL)["horizon"]) == {30}
    shutil.move(work / ".snakemake", tmp_path / "moved")  # a copied workdir, a fresh checkout of results

    before = files(work)
    dry = snakemake(work, FINAL, "--dry-run", configfile=second)
    assert dry.returncode != 0  # before any job: today "Nothing to be done" and the old aggregates
    assert files(work) == before  # nothing written or deleted
    log = dry.stdout + dry.stderr
    assert "4 run(s) were made for another config than this one" in log
    vhct = f"results/runs/{EXPERIMENT}/VHCT/seed0.csv.gz"
    assert f"{vhct}: params.rho: the run has 0.75, the config asks for 0.5" in log
    hct = f"results/runs/{EXPERIMENT}/HCT/seed1.csv.gz"
    assert f"{hct}: horizon: the run has 30, the config asks for 40" in log
    remedy = log[log.index("`rm ") + 1 :].split("`")[0].split()[1:]
    for path in remedy:  # the remedy it prints, followed
        (work / path).unlink()
    # the runs are targets of the default target (here asked for directly, without the figures)
    ok(snakemake(work, FINAL, *(p for p in remedy if p.endswith(".csv.gz")), configfile=second))
    assert set(pd.read_csv(work / FINAL)["horizon"]) == {40}
    record = read_sidecar(work / vhct)
    assert record.run.params == {"rho": 0.5} and record.rounds == 40
    # the spec the config made, passed to the job as JSON (the rule's params), recorded whole
    assert record.run == load([second])[0].run_spec(EXPERIMENT, "VHCT", 0)


def test_a_changed_parameter_with_snakemake_s_records_reruns_its_runs(tmp_path):
    """With `.snakemake/` in place, Snakemake's own parameter trigger reruns the changed runs (the
    pipeline reference's promise), and the check leaves them to it."""
    work = tmp_path / "work"
    work.mkdir()
    first, second = small_config(tmp_path, 30, 0.75), small_config(tmp_path, 30, 0.5)
    ok(snakemake(work, FINAL, configfile=first))
    hct_before = (work / f"results/runs/{EXPERIMENT}/HCT/seed0.csv.gz").stat().st_mtime_ns
    ok(snakemake(work, FINAL, configfile=second))
    vhct = read_sidecar(work / f"results/runs/{EXPERIMENT}/VHCT/seed0.csv.gz")
    assert vhct.run.params == {"rho": 0.5}  # the changed setting ran again
    assert (work / f"results/runs/{EXPERIMENT}/HCT/seed0.csv.gz").stat().st_mtime_ns == hct_before


def test_a_run_of_other_package_versions_fails_before_any_job_naming_the_package(tmp_path):
    """The version policy is refusing: Snakemake, its records in place, would never rerun a run for
    another install, so the check when the rules are read refuses it, naming the package."""
    work = tmp_path / "work"
    work.mkdir()
    config = small_config(tmp_path, 30, 0.75)
    ok(snakemake(work, FINAL, configfile=config))
    hct = f"results/runs/{EXPERIMENT}/HCT/seed1.csv.gz"
    sidecar = work / sidecar_path(hct)
    record = json.loads(sidecar.read_text())  # as the run job wrote it
    assert record["versions"] == package_versions()
    record["versions"]["numpy"] = "1.0"  # an install since updated
    sidecar.write_text(json.dumps(record))
    before = files(work)
    dry = snakemake(work, FINAL, "--dry-run", configfile=config)
    assert dry.returncode != 0 and files(work) == before
    log = dry.stdout + dry.stderr
    installed = re.escape(package_versions()["numpy"])
    assert re.search(rf"{re.escape(hct)}: versions: numpy 1\.0 \(installed: {installed}\)", log)
    assert f"`rm {hct} {sidecar_path(hct)}`" in log
