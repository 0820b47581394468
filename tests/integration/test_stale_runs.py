"""A changed config is never served old runs, even without ``.snakemake/`` (issue 31, the probe
"stale results are taken for new ones"): each run's sidecar records its spec, and the rules
compare it with the config when they are read, before any job."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml
from support import ok, snakemake

from vhct.pipeline.tables import read_sidecar

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
