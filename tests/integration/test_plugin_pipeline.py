"""An algorithm from a package of its own, planned, run and drawn by the pipeline.

The package is the example of docs/library.md ("Adding an algorithm"): its pyproject.toml and its
module are read from the docs' code blocks, installed with pip (``--target``, no index, no
dependencies) into a folder put on ``PYTHONPATH``, and the docs' config runs through Snakemake,
whose jobs are new Python processes: they find the algorithm through its entry point alone.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib import colors, image
from plugin_support import docs_block, write_plugin
from support import CORES, REPO, SNAKEMAKE, clean_env, ok, planned, set_umask

from vhct.optimizers.registry import algorithm_names
from vhct.pipeline.store import read_batch
from vhct.pipeline.tables import StaleRunError, read_runs
from vhct.reporting.styles import STYLES, automatic_styles, style

#: the plugin's algorithm, the docs' setting that runs it, and the experiment and figure of that config
ALGORITHM, SETTING, EXPERIMENT, FIGURE = "LocalSearch", "Local", "garland-local", "local_regret"
#: the experiment's objective (its runs' folder in the run store)
OBJECTIVE = "garland"
#: the figure's file, in the folder of the config's file (my-config.yaml: figures/my-config/)
TARGET = f"figures/my-config/{FIGURE}.png"
#: the rounds of the docs' experiment
HORIZON = 60
#: a curve is drawn when at least this many of the figure's pixels have its exact colour
CURVE_PIXELS = 100


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """A folder holding the docs' plugin package, installed by pip as a user would."""
    root = tmp_path_factory.mktemp("plugin")
    package = root / "vhct-local"
    package.mkdir()
    (package / "pyproject.toml").write_text(docs_block("toml"), encoding="utf-8")
    (package / "vhct_local.py").write_text(docs_block("python"), encoding="utf-8")
    pip = [sys.executable, "-m", "pip", "install", "--no-deps", "--no-build-isolation", "--no-index"]
    installed = subprocess.run(
        [*pip, "--target", str(root / "site"), str(package)], capture_output=True, text=True, check=False
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr
    return root / "site"


def snakemake_with(
    site: Path, workdir: Path, *args: str, more: Path | None = None
) -> subprocess.CompletedProcess:
    """Snakemake on the docs' config in ``workdir``, with the plugin's folder (and ``more``) on the path."""
    config = workdir / "my-config.yaml"
    config.write_text(docs_block("yaml"), encoding="utf-8")
    env = clean_env()
    folders = [str(site), str(more) if more else None, env.get("PYTHONPATH")]
    env["PYTHONPATH"] = os.pathsep.join(filter(None, folders))
    cmd = [SNAKEMAKE, "--snakefile", str(REPO / "Snakefile"), "--directory", str(workdir)]
    cmd += ["--configfile", str(config), "--cores", CORES, *args]
    return subprocess.run(cmd, capture_output=True, text=True, check=False, env=env, preexec_fn=set_umask)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory, site) -> Path:
    root = tmp_path_factory.mktemp("pipeline")
    plan = ok(snakemake_with(site, root, TARGET, "--dry-run"))
    (root / "plan.txt").write_text(plan.stdout + plan.stderr)
    ok(snakemake_with(site, root, TARGET))
    return root


def test_the_plugins_runs_are_planned_and_written_by_the_jobs(workdir):
    """Before: the config check refused the setting ("unknown algorithm 'LocalSearch'") and nothing ran."""
    plan = planned(subprocess.CompletedProcess([], 0, (workdir / "plan.txt").read_text(), ""))
    runs = sorted(p for rule in ("run", "run_first") for p in plan.get(rule, []))
    # the dry run planned the plugin's runs, as the built-in's: a batch file per seed in the run store
    for algorithm in ("VHCT", ALGORITHM):
        mine = [p for p in runs if Path(p).parent.name.startswith(f"{algorithm}-")]
        assert [Path(p).name for p in mine] == ["seeds0-0.npz", "seeds1-1.npz"], runs
        assert all(Path(p).parts[2] == OBJECTIVE and (workdir / p).is_file() for p in mine)
    for path in (workdir / p for p in runs if f"/{ALGORITHM}-" in p):
        # read apart: read_runs refuses a run whose code this process cannot check (no plugin here)
        with pytest.raises(StaleRunError, match=f"algorithm '{ALGORITHM}' is not registered in this process"):
            read_runs({SETTING: [path]}, horizons={SETTING: HORIZON})
        batch = read_batch(path)  # whole: its arrays are the ones its record hashes
        (record,) = batch.record.runs
        assert record.run.algorithm == ALGORITHM and record.run.params == {"step": 0.05}
        assert record.rounds == HORIZON and batch.columns["value"].shape == (1, HORIZON)
        assert len(set(batch.columns["value"][0])) > 1  # it searched (its values differ)
    # the figure reads each setting's curve (its aggregate), not the experiment-wide tables
    curves = workdir / "results" / "my-config" / "aggregates" / EXPERIMENT / "settings"
    for setting in ("VHCT", SETTING):
        curve = pd.read_csv(curves / setting / "regret.csv")
        assert set(curve["setting"]) == {setting} and curve["t"].max() == HORIZON


def colour_pixels(png: Path, colour: str) -> int:
    """How many pixels of ``png`` have exactly ``colour``."""
    pixels = np.round(image.imread(png)[..., :3] * 255).astype(int)
    return int(np.all(pixels == np.round(np.array(colors.to_rgb(colour)) * 255).astype(int), axis=-1).sum())


def test_the_figure_draws_the_plugins_curve_in_a_colour_of_its_own(workdir):
    png = workdir / TARGET
    # the plugin's automatic style in the jobs' processes: the first free colour after this
    # process's algorithms (which do not have the plugin on their path)
    unstyled = [name for name in algorithm_names() if name not in STYLES] + [ALGORITHM]
    colour = automatic_styles(unstyled, {row.colour for row in STYLES.values()})[ALGORITHM].colour
    assert colour.lower() not in {style(name)[0].lower() for name in algorithm_names()}
    assert colour_pixels(png, colour) > CURVE_PIXELS
    assert colour_pixels(png, style("VHCT")[0]) > CURVE_PIXELS  # the other curve, for comparison


def test_a_plugins_moved_style_redraws_the_figure_and_reruns_no_run(workdir, site, tmp_path):
    """Another plugin installed, named before LocalSearch, takes its automatic colour: the figure
    that draws LocalSearch is redrawn (its styles changed); no run is redone. Nothing changed,
    nothing is redone."""
    assert "Nothing to be done" in ok(snakemake_with(site, workdir, TARGET, "-n")).stdout
    earlier = write_plugin(tmp_path, {"Aardvark": "vhct_local:LocalSearch"}, dist="aardvark")
    plan = ok(snakemake_with(site, workdir, TARGET, "-n", more=earlier)).stdout
    assert (
        "wildcards: figure=local_regret" in plan and "rule run" not in plan and "rule aggregate" not in plan
    )
