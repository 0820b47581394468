"""Two configs side by side in one working directory: the default config and one of one's own.

The default config is the tiny one on fixture data files (as tests/integration/test_pipeline.py
runs it), saved as ``config.yaml``, the default config's name: it writes to results/, figures/
and logs/ themselves. ``mine.yaml`` extends it with one change (Garland's noise 0.1 instead of
0.05) and writes to results/mine/, figures/mine/, logs/mine/. Running mine after the default
overwrites none of the default's files, switching back reruns nothing, and data/ is shared, as is
the run store (results/runs/, vhct.pipeline.store): mine runs Garland's runs alone, and finds the
others the default made.

Before (one results/ for every config): mine's dry run planned Garland's runs at
results/runs/garland/..., the default's own files, and the default's next run planned them again.
Then (a folder per config, runs in it): mine ran every run of the default's again.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path

import pytest
import yaml
from support import ok, snakemake

from vhct.pipeline import config as vc
from vhct.pipeline.layout import OWNER_FILE, Layout

#: the one change of mine.yaml: Garland's noise (the default config's is 0.05)
MINE = "base: config.yaml\nexperiments:\n  garland: {noise: 0.1}\n"
#: the folders of the pipeline's outputs; a config of one's own has its folder in each
ROOTS = ("results", "figures", "logs")


def contents(root: Path) -> dict[str, tuple[int, str]]:
    """Every file under results/, figures/ and logs/: its modification time and sha256."""
    return {
        str(p.relative_to(root)): (p.stat().st_mtime_ns, hashlib.sha256(p.read_bytes()).hexdigest())
        for sub in ROOTS
        for p in (root / sub).rglob("*")
        if p.is_file()
    }


def planned_outputs(result) -> list[str]:
    """Every output and log file of a dry run's jobs."""
    text = result.stdout + result.stderr
    fields = re.findall(r"^\s+(?:output|log): (.*)$", text, flags=re.MULTILINE)
    return [path for field in fields for path in field.split(", ")]


@pytest.fixture(scope="module")
def side_by_side(tmp_path_factory, tiny_fixtures, tiny_run) -> dict:
    """The default config run, then mine's dry run and run, in one working directory. The default's
    run is the session's complete run of the tiny config (conftest's ``tiny_run``), copied and run
    again as config.yaml: only what records its config file (the audit) reruns."""
    folder = tmp_path_factory.mktemp("side-by-side")
    config = yaml.safe_load(tiny_fixtures.read_text(encoding="utf-8"))
    config.pop("output")  # the fixture's explicit top-level folder: here the default config's name gives it
    default = folder / "config.yaml"
    default.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    mine = folder / "mine.yaml"
    mine.write_text(MINE, encoding="utf-8")
    work = folder / "work"
    shutil.copytree(tiny_run, work, symlinks=True, ignore=shutil.ignore_patterns(".snakemake"))
    (work / "results" / OWNER_FILE).unlink()  # config.yaml owns the copy
    ok(snakemake(work, configfile=default))
    first = contents(work)
    plan = ok(snakemake(work, "--dry-run", configfile=mine))
    ok(snakemake(work, configfile=mine))
    return {"work": work, "default": default, "mine": mine, "first": first, "plan": plan}


def test_the_default_config_writes_at_the_top(side_by_side):
    first = side_by_side["first"]
    assert "results/audit.json" in first and "figures/regret.png" in first
    assert "results/aggregates/garland/final.csv" in first and "logs/audit/audit.log" in first
    assert not [p for p in first if p.startswith(("results/mine/", "figures/mine/", "logs/mine/"))]


def test_a_second_config_plans_only_its_own_folder_its_changed_runs_and_no_data_job(side_by_side):
    """mine's dry run (after the default's run): every job but a run writes under results/mine/,
    figures/mine/ or logs/mine/; the runs planned are Garland's alone (its noise changed), in the run
    store, the other experiments' found there; none writes a file of the default's; data/ is shared,
    verified already."""
    planned = planned_outputs(side_by_side["plan"])
    store = Layout.of("").store
    runs = {p for p in planned if p.startswith(f"{store}/")}
    own = [p for p in planned if p not in runs and not p.startswith("logs/runs/")]
    assert own and all(p.startswith(tuple(f"{r}/mine/" for r in ROOTS)) for p in own), own
    assert not set(planned) & set(side_by_side["first"])
    text = side_by_side["plan"].stdout + side_by_side["plan"].stderr
    assert "rule data_file:" not in text and "rule verify_data:" not in text
    mine = vc.load([side_by_side["mine"]])[0]
    assert runs == set(mine.batch_jobs("garland"))  # Garland's, and no run of an unchanged experiment
    others = {p for e in mine.experiments if e != "garland" for p in mine.batch_jobs(e)}
    assert others and not runs & others and all(p in side_by_side["first"] for p in others)


def test_the_second_config_overwrites_nothing_and_switching_back_reruns_nothing(side_by_side):
    work, first = side_by_side["work"], side_by_side["first"]
    now = contents(work)
    assert {p: now[p] for p in first} == first  # not one file of the default's touched
    for configfile in (side_by_side["default"], side_by_side["mine"]):
        result = ok(snakemake(work, "--dry-run", configfile=configfile))
        assert "Nothing to be done" in result.stdout + result.stderr, configfile


def test_the_second_configs_results_figures_audit_and_logs_are_its_own(side_by_side):
    work = side_by_side["work"]
    mine = work / "results" / "mine"
    audit = json.loads((mine / "audit.json").read_text(encoding="utf-8"))
    assert audit["context"]["configfiles"][-1].endswith("mine.yaml")
    assert (work / "figures" / "mine" / "regret.png").stat().st_size > 0
    assert (work / "figures" / "mine" / "audit_forest.png").stat().st_size > 0
    assert (work / "logs" / "mine" / "audit" / "audit.log").exists()
    mine_runs = vc.load([side_by_side["mine"]])[0].batch_jobs("garland")
    assert all((work / Layout.of("mine").run_log(p)).is_file() for p in mine_runs)  # beside no config's
    # the changed experiment's numbers differ; an unchanged one's aggregate is byte for byte the default's
    default = work / "results" / "aggregates"
    garland = "garland/final.csv"
    assert (mine / "aggregates" / garland).read_bytes() != (default / garland).read_bytes()
    same = "counterexample/final.csv"
    assert (mine / "aggregates" / same).read_bytes() == (default / same).read_bytes()


def test_one_figure_of_a_config_is_named_in_its_folder(side_by_side):
    """`snakemake figures/mine/<figure>.pdf --configfile mine.yaml`; the default's path is not mine's."""
    work, mine = side_by_side["work"], side_by_side["mine"]
    (work / "figures" / "mine" / "osc.pdf").unlink()
    before = contents(work)
    result = ok(snakemake(work, "figures/mine/osc.pdf", configfile=mine))
    rules = re.findall(r"^(?:local)?rule (\S+):", result.stdout + result.stderr, flags=re.MULTILINE)
    assert rules == ["figure"]
    after = contents(work)
    assert {p for p in after if after[p] != before.get(p)} == {
        "figures/mine/osc.pdf",
        "figures/mine/osc.png",
        "logs/mine/figure/osc.log",
    }
    refused = snakemake(work, "--dry-run", "figures/osc.pdf", configfile=mine)
    assert refused.returncode != 0  # no job of mine writes the default's figure


def test_each_folder_names_its_owner_and_a_config_writing_it_differently_is_refused(side_by_side):
    """Probe (issue 51): a second config with ``output: tiny`` overwrote tiny's results. Each run
    records its config as its folder's owner; a third config naming mine's folder with one changed
    line is refused by the rules before any job, naming both files, and writes nothing."""
    work = side_by_side["work"]
    owner = json.loads((work / "results" / "mine" / ".config-owner.json").read_text(encoding="utf-8"))
    assert owner["config"].endswith("mine.yaml")
    assert json.loads((work / "results" / ".config-owner.json").read_text())["config"].endswith("config.yaml")
    other = side_by_side["mine"].with_name("other.yaml")
    other.write_text("base: mine.yaml\noutput: mine\nprogress_every: 3\n", encoding="utf-8")
    before = contents(work)
    result = snakemake(work, "--dry-run", configfile=other)
    text = result.stdout + result.stderr
    assert result.returncode != 0 and "other.yaml" in text and "mine.yaml" in text and "differently" in text
    assert contents(work) == before
