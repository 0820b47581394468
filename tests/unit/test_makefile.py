"""The Makefile passes a config path to the shell as one argument, whatever it contains."""

from __future__ import annotations

import shlex
import shutil
import subprocess

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
