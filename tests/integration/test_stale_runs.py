"""A result is current or it is rerun (issues 31 and 39): whatever `.snakemake/` holds and whichever
rerun triggers are given, a changed config, an edit of the code that shapes the numbers or of the
drawing code reruns what it changes, and a batch file that is not what its name says is refused.

A batch of runs is a file of the run store named by what its runs are (``vhct.pipeline.store``): a
change names another file, which Snakemake makes because it is missing. Every other job's spec file
(``results/.specs/``, ``vhct.pipeline.stale``) is written when the rules are read, rewritten only
when what it asks changes, and is an input of its job."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest
import yaml
from support import CORES, REPO, SNAKEMAKE, batch_of, clean_env, ok, set_umask, snakemake

from vhct.pipeline.config import load
from vhct.pipeline.store import read_batch
from vhct.reporting.audit.records import read_audit

pytestmark = pytest.mark.integration

EXPERIMENT = "garland"
FINAL = f"results/aggregates/{EXPERIMENT}/final.csv"
FIGURE = "figures/regret.png"
#: a figure that draws an objective itself (issue 49: it reads no run, so only its code hash reruns it)
FUNCTION_FIGURE = "figures/difficult.png"
AUDIT = "results/audit.json"
#: Garland's value in the package's source, the line an edit of the run code changes (halves)
GARLAND_LINE = "return t * (1.0 - t) * (GARLAND_ENVELOPE - math.sqrt(abs(math.sin(GARLAND_FREQUENCY * t))))"


def small_config(
    folder: Path,
    horizon: int = 30,
    rho: float = 0.75,
    seeds: int = 2,
    settings: tuple[str, ...] = ("VHCT", "HCT"),
    label: str = "VHCT",
    panel_title: str | None = None,
    name: str = "config",
    function: bool = False,
) -> Path:
    """Up to two settings of one synthetic experiment and one regret figure (with ``function``, also
    a figure of the difficult function, :data:`FUNCTION_FIGURE`)."""
    panel = {"experiment": EXPERIMENT, **({"title": panel_title} if panel_title else {})}
    drawn = {"difficult": {"kind": "function", "panels": [{"objective": "difficult"}]}} if function else {}
    config = {
        "settings": {
            "VHCT": {"algorithm": "VHCT", "label": label, "params": {"rho": rho}},
            "HCT": {"algorithm": "HCT", "params": {"rho": 0.75}},
        },
        "experiments": {
            EXPERIMENT: {
                "objective": "garland",
                "noise": 0.05,
                "horizon": horizon,
                "seeds": seeds,
                "settings": list(settings),
            },
        },
        "figures": {"regret": {"kind": "regret", "panels": [panel]}, **drawn},
        "output": "",  # one folder for both files: a config changed in place
    }
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def files(root: Path) -> dict[str, int]:
    """Every output under results/ (not the spec files a dry run writes) and its modification time."""
    return {
        str(p.relative_to(root)): p.stat().st_mtime_ns
        for p in (root / "results").rglob("*")
        if p.is_file() and ".specs" not in p.parts
    }


def batch(config: Path, setting: str, seed: int) -> str:
    """The batch file (in the run store) of ``setting``'s run of ``seed`` as ``config`` asks it now."""
    return batch_of(load([config])[0], EXPERIMENT, setting, seed)


def record(work: Path, path: str, seed: int):
    """The record of the run of ``seed`` in the batch file ``path``."""
    (found,) = [r for r in read_batch(work / path).record.runs if r.seed == seed]
    return found


def test_a_changed_config_without_snakemake_s_records_reruns_and_drops_what_it_dropped(tmp_path):
    """Issue 39's first probe: seeds 2 -> 1, a setting dropped, a label and a panel changed, and
    `.snakemake/` deleted: "Nothing to be done" served the old aggregates (2 seeds, the dropped
    setting), the old figure and an audit of seeds [0, 1]. Now every layer reflects the new config."""
    work = tmp_path / "work"
    work.mkdir()
    ok(snakemake(work, configfile=small_config(tmp_path)))
    final = pd.read_csv(work / FINAL)
    assert final["setting"].tolist() == ["VHCT", "HCT"] and set(final["n_seeds"]) == {2}
    figure = (work / FIGURE).read_bytes()
    assert read_audit(work / AUDIT).context.experiments[EXPERIMENT].seeds == [0, 1]
    shutil.rmtree(work / ".snakemake")
    # the same file, edited in place
    second = small_config(
        tmp_path, seeds=1, settings=("VHCT",), label="VHCT, relabelled", panel_title="Garland again"
    )
    ok(snakemake(work, configfile=second))
    final = pd.read_csv(work / FINAL)
    assert final["setting"].tolist() == ["VHCT"] and final["n_seeds"].tolist() == [1]
    assert final["label"].tolist() == ["VHCT, relabelled"]
    assert (work / FIGURE).read_bytes() != figure
    context = read_audit(work / AUDIT).context.experiments[EXPERIMENT]
    assert context.seeds == [0] and list(context.settings) == ["VHCT"]
    vhct = record(work, batch(second, "VHCT", 0), 0)
    assert vhct.run == load([second])[0].run_spec(EXPERIMENT, "VHCT", 0)  # the request, run whole
    rerun = snakemake(work, "--dry-run", configfile=second)
    assert "Nothing to be done" in rerun.stdout + rerun.stderr


def test_a_changed_parameter_reruns_its_runs_whatever_the_rerun_triggers(tmp_path):
    """Issue 39's second probe: with `.snakemake/` kept, the horizon and rho changed and
    `--rerun-triggers mtime` given: "Nothing to be done" (the check deferred to Snakemake's record of
    the parameters, which that trigger does not read). Now the changed runs rerun, and only they."""
    work = tmp_path / "work"
    work.mkdir()
    first = small_config(tmp_path)
    ok(snakemake(work, FINAL, configfile=first))
    hct = batch(first, "HCT", 0)
    made = (work / hct).stat().st_mtime_ns
    config = small_config(tmp_path, rho=0.5)  # the config edited in place
    ok(snakemake(work, FINAL, configfile=config))
    assert record(work, batch(config, "VHCT", 0), 0).run.params == {"rho": 0.5}
    assert batch(config, "HCT", 0) == hct and (work / hct).stat().st_mtime_ns == made  # not run again
    second = small_config(tmp_path, horizon=25, rho=0.25)  # edited in place again
    ok(snakemake(work, FINAL, "--rerun-triggers", "mtime", configfile=second))
    assert set(pd.read_csv(work / FINAL)["horizon"]) == {25}
    vhct = record(work, batch(second, "VHCT", 1), 1)
    assert vhct.run.params == {"rho": 0.25} and vhct.rounds == 25
    assert batch(second, "HCT", 0) != hct  # the horizon is every setting's: HCT's runs are others
    assert record(work, batch(second, "HCT", 0), 0).rounds == 25 and (work / hct).stat().st_mtime_ns == made


def package_copy(folder: Path) -> Path:
    """A copy of the package's source to edit, and the folder to put first on PYTHONPATH."""
    source = folder / "src"
    shutil.copytree(REPO / "src" / "vhct", source / "vhct", ignore=shutil.ignore_patterns("__pycache__"))
    return source


def snakemake_with(source: Path, work: Path, *args: str, configfile: Path) -> subprocess.CompletedProcess:
    """Snakemake with the package imported from ``source`` (its jobs too: they inherit the environment)."""
    env = {**clean_env(), "PYTHONPATH": str(source)}
    cmd = [
        SNAKEMAKE,
        "--snakefile",
        str(REPO / "Snakefile"),
        "--directory",
        str(work),
        "--configfile",
        str(configfile),
        "--cores",
        CORES,
        *args,
    ]
    return subprocess.run(cmd, capture_output=True, text=True, check=False, env=env, preexec_fn=set_umask)


def test_an_edit_of_the_code_reruns_what_it_shapes_and_only_that(tmp_path):
    """Issue 39's third probe: Garland's value halved in the package's source reran only the audit and
    its forest; every table came from the old code, whose sidecars said only `vhct 0.1.0`. Now each
    record carries the run code's source hash, and an edit reruns the runs (and what reads them); an
    edit of the drawing code reruns the figures alone. Issue 49: each job's hash covers every module
    it imports, so the edit of an objective also redraws a figure that draws the objective itself
    (it reads no run), and an edit of the audit's claim kinds reruns the audit and no figure."""
    source, work = package_copy(tmp_path), tmp_path / "work"
    work.mkdir()
    config = small_config(tmp_path, seeds=1, function=True)
    ok(snakemake_with(source, work, configfile=config))
    old = batch(config, "VHCT", 0)  # the installed package's hash is the copy's before the edit
    before = read_batch(work / old)
    aggregate, function = (work / FINAL).stat().st_mtime_ns, (work / FUNCTION_FIGURE).stat().st_mtime_ns
    synthetic = source / "vhct" / "objectives" / "synthetic.py"
    text = synthetic.read_text()
    assert GARLAND_LINE in text
    synthetic.write_text(text.replace(GARLAND_LINE, GARLAND_LINE.replace("return ", "return 0.5 * "), 1))
    ok(snakemake_with(source, work, configfile=config))
    # the new code's batch: another file of the store (its key hashes the run code), beside the old one
    (new,) = {p for p in work.glob(f"results/runs/{EXPERIMENT}/VHCT-*/seeds0-0.npz")} - {work / old}
    after = read_batch(new)
    made, then = after.record.runs[0], before.record.runs[0]
    assert made.source != then.source and made.versions == then.versions  # vhct 0.1.0 both times
    assert after.columns["value"].max() < 0.5 * before.columns["value"].max() + 1e-9  # the new code's
    assert (work / FINAL).stat().st_mtime_ns != aggregate
    assert (work / FUNCTION_FIGURE).stat().st_mtime_ns != function  # the objective drawn again
    runs, aggregate = files(work), (work / FINAL).stat().st_mtime_ns
    figure = (work / FIGURE).stat().st_mtime_ns
    plots = source / "vhct" / "reporting" / "plots" / "regret.py"
    plots.write_text(plots.read_text() + "\n# an edit of the drawing code\n")
    ok(snakemake_with(source, work, configfile=config))
    assert (work / FIGURE).stat().st_mtime_ns != figure  # drawn again
    assert (work / FINAL).stat().st_mtime_ns == aggregate
    assert {k: v for k, v in files(work).items() if "/runs/" in k} == {
        k: v for k, v in runs.items() if "/runs/" in k
    }  # no run again
    figure, audit = (work / FIGURE).stat().st_mtime_ns, (work / AUDIT).stat().st_mtime_ns
    kinds = source / "vhct" / "reporting" / "audit" / "kinds.py"
    kinds.write_text(kinds.read_text() + "\n# an edit of the claim kinds\n")
    ok(snakemake_with(source, work, configfile=config))
    assert (work / AUDIT).stat().st_mtime_ns != audit  # audited again
    assert (work / FIGURE).stat().st_mtime_ns == figure and (work / FINAL).stat().st_mtime_ns == aggregate


def test_a_batch_file_that_is_not_what_its_name_says_is_refused_naming_it_and_the_fix(tmp_path):
    """Before the run store, a run nothing would rerun (a record edited after the run) was refused when
    the rules were read. Now what a run is names its file, so the check is the reader's: HCT's batch
    copied over VHCT's (newer than the aggregate, which reruns) fails the aggregate, whose log names
    the file, what differs and the fix; the fix followed (the file deleted by hand), the next run makes
    that batch and its dependents again, and nothing else."""
    work = tmp_path / "work"
    work.mkdir()
    config = small_config(tmp_path)
    ok(snakemake(work, FINAL, configfile=config))
    vhct, hct = batch(config, "VHCT", 1), batch(config, "HCT", 1)
    shutil.copyfile(work / hct, work / vhct)
    failed = snakemake(work, FINAL, configfile=config)
    assert failed.returncode != 0
    log = (work / "logs" / "aggregate" / f"{EXPERIMENT}.log").read_text(encoding="utf-8")
    assert f"  - {vhct}: seed 1: algorithm: the run has 'HCT', the config asks for 'VHCT'\n" in log
    assert f"`rm {vhct}`" in log
    before = files(work)
    (work / vhct).unlink()  # the fix it names, followed
    ok(snakemake(work, FINAL, configfile=config))
    after = files(work)
    assert {p for p in after if after[p] != before.get(p)} == {
        vhct,
        *(f"results/aggregates/{EXPERIMENT}/{t}.csv" for t in ("regret", "final", "timing")),
    }
    assert record(work, vhct, 1).run.algorithm == "VHCT"
