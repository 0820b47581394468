"""The run store (issue 51 item 3, issue 49 items 3-4): a run is found by what it is, whichever config
asks for it, and a change reruns what it changes and only that, whatever `.snakemake/` holds.

Each test copies the session's complete run of the tiny config (conftest's ``tiny_run``) without
`.snakemake/`, changes one thing (a child config, a parameter, a module of the package) and reads
Snakemake's dry run: its job list says what a change reruns, in seconds where a run takes minutes.
Two configs writing one folder differently are refused in tests/integration/test_side_by_side.py;
a batch file that is not what its name says, in test_stale_runs.py.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from support import CORES, REPO, SNAKEMAKE, clean_env, ok, planned, set_umask, snakemake

from vhct.pipeline import config as vc
from vhct.pipeline.figure_kinds import AUDIT_FIGURES
from vhct.pipeline.layout import OWNER_FILE

pytestmark = pytest.mark.integration

#: the changed setting: Garland's, drawn by the figure `average` and not by `regret` (tiny.yaml)
EXPERIMENT, SETTING = "garland", "VHCT-rho0.25"
#: its changed parameter (tiny.yaml: rho 0.25)
CHANGE = {"settings": {SETTING: {"params": {"rho": 0.3}}}}
#: the rules of the run family (vhct.pipeline.store: one body, the long jobs first)
RUN_RULES = ("run_first", "run")
#: the rules that draw a declared figure, and those of the audit (its JSON and its own figures)
FIGURE_RULES = ("figure", "figure_caption")
AUDIT_RULES = ("audit", "audit_forest", "audit_summary")
#: the figure kinds that draw an objective itself, reading no run
OBJECTIVE_FIGURES = ("function", "near_optimal")
#: Garland's value in the package's source (the line an objective edit changes, as test_stale_runs.py's)
GARLAND_LINE = "return t * (1.0 - t) * (GARLAND_ENVELOPE - math.sqrt(abs(math.sin(GARLAND_FREQUENCY * t))))"


def copy_run(tiny_run: Path, tiny_fixtures: Path, folder: Path) -> tuple[Path, Path]:
    """The complete run copied into ``folder/work`` without `.snakemake/`, and its config copied
    beside it; the folder's owner record goes, so the copy (edited or not) owns the copied folder."""
    work, config = folder / "work", folder / "tiny.yaml"
    shutil.copytree(tiny_run, work, symlinks=True, ignore=shutil.ignore_patterns(".snakemake"))
    shutil.copy2(tiny_fixtures, config)
    (work / "results" / OWNER_FILE).unlink()
    return work, config


def runs_of(plan: dict[str, list[str]]) -> set[str]:
    """The batch files a dry run's run jobs write."""
    return {path for rule in RUN_RULES for path in plan.get(rule, [])}


def changed(config: Path, change: dict) -> None:
    """``config`` edited in place: ``change`` merged into it."""
    data = yaml.safe_load(config.read_text(encoding="utf-8"))
    for section, items in change.items():
        for name, fields in items.items():
            for key, value in fields.items():
                data[section][name][key] = value
    config.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")


def test_a_child_config_runs_only_what_its_one_line_changes_in_its_own_folder(
    tiny_run, tiny_fixtures, tmp_path
):
    """Probe (issue 51): a config with `base: plugin.yaml` and one changed line planned 174 jobs, every
    run of its base again, in its own folder. Now the child's runs are found in the store: its dry run
    plans the changed setting's runs alone (no run of an unchanged setting or experiment, no data job),
    and every aggregate, figure and audit in its own folder."""
    work, tiny = copy_run(tiny_run, tiny_fixtures, tmp_path)
    child = tmp_path / "child.yaml"
    child.write_text(f"base: {tiny}\noutput: child\n{yaml.safe_dump(CHANGE)}", encoding="utf-8")
    parent, kid = vc.load([tiny])[0], vc.load([child])[0]
    plan = planned(ok(snakemake(work, "--dry-run", configfile=child)))
    new = set(kid.batch_jobs()) - set(parent.batch_jobs())
    assert new and {j.runs[0].setting for p, j in kid.batch_jobs().items() if p in new} == {SETTING}
    assert runs_of(plan) == new
    assert all((work / p).is_file() for p in set(kid.batch_jobs()) - new)  # the others: found
    assert "data_file" not in plan and "verify_data" not in plan
    # every other job writes the child's folder, and all of its outputs are planned
    others = [p for rule, paths in plan.items() if rule not in RUN_RULES for p in paths]
    assert others and all(p.startswith(("results/child/", "figures/child/")) for p in others), others
    assert len(plan["aggregate"]) == 3 * len(kid.experiments)  # regret, final, timing
    assert {p for p in plan["figure"] if p.endswith(".pdf")} == {
        f"figures/child/{f}.pdf" for f in kid.figures
    }
    assert "results/child/audit.json" in plan["audit"]


def test_a_changed_parameter_reruns_its_runs_and_redraws_only_the_figures_drawing_it(
    tiny_run, tiny_fixtures, tmp_path
):
    """Probes (issue 51): a changed parameter of one setting redrew figures that do not draw it (the
    figure's spec held every setting of its experiments); issue 49: a change had to be seen by
    Snakemake's records. Here `.snakemake/` is gone (never copied) and the config edited in place:
    the dry run plans that setting's runs, its aggregate and the experiment's, the figures drawing it
    (`average`) and not those that do not (`regret`, drawing six other settings of Garland)."""
    work, config = copy_run(tiny_run, tiny_fixtures, tmp_path)
    before = vc.load([config])[0]
    changed(config, CHANGE)
    after = vc.load([config])[0]
    assert not (work / ".snakemake").exists()
    plan = planned(ok(snakemake(work, "--dry-run", configfile=config)))
    ran = {p: j for p, j in after.batch_jobs().items() if j.runs[0].setting == SETTING}
    assert runs_of(plan) == set(ran) and not set(ran) & set(before.batch_jobs())
    assert plan["aggregate"] == [
        f"results/aggregates/{EXPERIMENT}/{t}.csv" for t in ("regret", "final", "timing")
    ]
    assert {p.rsplit("/", 1)[0] for p in plan["aggregate_setting"]} == {
        f"results/aggregates/{EXPERIMENT}/settings/{SETTING}"
    }
    drawing = {f for f in after.figures if SETTING in after.figure_settings(f).get(EXPERIMENT, [])}
    assert "average" in drawing and "regret" not in drawing
    assert {p for p in plan["figure"] if p.endswith(".pdf")} == {f"figures/{f}.pdf" for f in drawing}
    assert "figures/regret.pdf" not in plan["figure"]


def snakemake_with(source: Path, work: Path, *args: str, configfile: Path) -> subprocess.CompletedProcess:
    """Snakemake with the package imported from ``source`` (its jobs too: they inherit the environment)."""
    cmd = [SNAKEMAKE, "--snakefile", str(REPO / "Snakefile"), "--directory", str(work)]
    cmd += ["--configfile", str(configfile), "--cores", CORES, *args]
    env = {**clean_env(), "PYTHONPATH": str(source)}
    return subprocess.run(cmd, capture_output=True, text=True, check=False, env=env, preexec_fn=set_umask)


def edited(path: Path, old: str | None = None, new: str = "") -> None:
    """``path`` edited: ``old`` replaced by ``new`` once, or a comment appended."""
    text = path.read_text(encoding="utf-8")
    if old is None:
        path.write_text(f"{text}\n# an edit\n", encoding="utf-8")
    else:
        assert old in text, path
        path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_an_edit_of_a_module_reruns_the_jobs_that_import_it_and_only_those(tiny_run, tiny_fixtures, tmp_path):
    """Issue 49: a job's code hash is its import closure (vhct.pipeline.versions). On a copy of the
    package, after the complete run (`--touch`ed for the copied config's name, which the audit records):
    an edit of a drawer replans the figures (and their captions) and no run, aggregate or audit; an
    edit of the audit's claim kinds replans the audit and its figures alone; an edit of an objective
    replans the runs (every run job imports the objectives' registry) and the figures that draw an
    objective without reading a run (the function figures, issue 49's stale-figure hole)."""
    work, config = copy_run(tiny_run, tiny_fixtures, tmp_path)
    source = tmp_path / "src"
    shutil.copytree(REPO / "src" / "vhct", source / "vhct", ignore=shutil.ignore_patterns("__pycache__"))
    cfg = vc.load([config])[0]
    ok(snakemake_with(source, work, "--touch", configfile=config))
    nothing = ok(snakemake_with(source, work, "--dry-run", configfile=config))
    assert "Nothing to be done" in nothing.stdout + nothing.stderr  # the copied package's hashes: the same

    edited(source / "vhct" / "reporting" / "plots" / "regret.py")  # a drawer
    plan = planned(ok(snakemake_with(source, work, "--dry-run", configfile=config)))
    figures = {f"figures/{f}.pdf" for f in [*cfg.figures, *AUDIT_FIGURES]}
    drawn = {p for rule in (*FIGURE_RULES, "audit_forest", "audit_summary") for p in plan.get(rule, [])}
    assert figures == {p for p in drawn if p.endswith(".pdf")}
    assert set(plan) <= {*FIGURE_RULES, "audit_forest", "audit_summary", "all"}, sorted(plan)
    ok(snakemake_with(source, work, "--touch", configfile=config))

    edited(source / "vhct" / "reporting" / "audit" / "kinds.py")  # the audit's claim kinds
    plan = planned(ok(snakemake_with(source, work, "--dry-run", configfile=config)))
    assert set(plan) == {*AUDIT_RULES, "all"}, sorted(plan)
    ok(snakemake_with(source, work, "--touch", configfile=config))

    synthetic = source / "vhct" / "objectives" / "synthetic.py"  # an objective
    edited(synthetic, GARLAND_LINE, GARLAND_LINE.replace("return ", "return 0.5 * "))
    plan = planned(ok(snakemake_with(source, work, "--dry-run", configfile=config)))
    assert {Path(p).parts[2] for p in runs_of(plan)} == {e.objective for e in cfg.experiments.values()}
    assert len(runs_of(plan)) == len(cfg.batch_jobs()) and not any((work / p).exists() for p in runs_of(plan))
    functions = {f for f, fig in cfg.figures.items() if fig.kind in OBJECTIVE_FIGURES}
    assert functions == {"function_1d", "function_2d", "fig1_near_optimal_cells"}  # they read no run
    assert not any(cfg.figure_settings(f) for f in functions)
    assert {f"figures/{f}.pdf" for f in functions} <= set(plan["figure"])
