"""The Makefile passes a config path to the shell as one argument, whatever it contains, and never
expands a `$` in a value it is given."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support import REPO

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs GNU make")


def planned(*args: str) -> list[list[str]]:
    """The commands ``make -n`` would run, each split as the shell splits it."""
    done = subprocess.run(
        ["make", "-C", str(REPO), "-n", *args], capture_output=True, text=True, check=True, timeout=60
    )
    return [shlex.split(line) for line in done.stdout.splitlines() if line.strip()]


@pytest.mark.parametrize("config", ["a dir/x.yaml", "it's here/x.yaml", "plain/x.yaml"])
@pytest.mark.parametrize("target", ["figures", "dry-run", "data"])
def test_the_config_path_stays_one_argument(config, target):
    commands = planned(target, f"CONFIG={config}")
    snakemake = [c for c in commands if c and c[0].endswith("snakemake")]
    assert snakemake, commands
    for command in snakemake:  # every Snakemake call gets the whole path after --configfile
        assert command[command.index("--configfile") + 1] == config
    precheck = [c for c in commands if c[1:3] == ["-m", "vhct.pipeline.config"]]
    assert precheck and all(c[3] == config for c in precheck)


def run_make(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """A real make run in the checkout with this interpreter as the venv's (its install taken as done)."""
    return subprocess.run(
        ["make", "-C", str(REPO), "-o", ".venv/.vhct-installed", f"BIN={Path(sys.executable).parent}", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=None if env is None else os.environ | env,
    )


def test_a_dollar_in_a_value_given_to_make_runs_nothing(tmp_path):
    """make expanded `$(shell ...)` in CONFIG (and exported the expansion to the recipes): the value is
    text now, on the command line or in the environment, reaching the shell quoted."""
    marker = tmp_path / "pwned"
    config = f"x$(shell touch {marker}).yaml"
    done = run_make("dry-run", f"CONFIG={config}", f"CORES=1$(shell touch {marker})")
    assert done.returncode != 0 and not marker.exists()
    assert f"{config}: cannot read the config file" in done.stderr  # the pre-check got the text itself
    done = run_make("dry-run", env={"CONFIG": config})
    assert done.returncode != 0 and not marker.exists()
    assert f"{config}: cannot read the config file" in done.stderr


def test_a_dollar_in_a_value_passed_to_a_sub_make_runs_nothing(tmp_path):
    """`make paper` runs a sub-make, which gets the command line's values: they stay text there too."""
    marker = tmp_path / "pwned"
    target = f"a$(shell touch {marker})"
    commands = planned("paper", f"TARGETS={target}", f"RUNNER=nice $(shell touch {marker})")
    assert not marker.exists()
    run = [c for c in commands if "--configfile" in c and "--unlock" not in c and "-m" not in c]
    words = " ".join(run[-1]) if run else ""  # each word of TARGETS and RUNNER quoted apart
    assert words.startswith(f"nice $(shell touch {marker}) ") and words.endswith(f" {target}")
