"""The Makefile passes a config path to the shell as one argument, whatever it contains, and never
expands a `$` in a value it is given; `make help` lists every target with one line each."""

from __future__ import annotations

import os
import re
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


# ---------------------------------------------------------------- make help
#: the widest line `make help` may print, so that each target's line fits a terminal
HELP_COLUMNS = 100


def makefile_lines() -> list[str]:
    """The Makefile's lines, a backslash-continued line joined into one."""
    return (REPO / "Makefile").read_text(encoding="utf-8").replace("\\\n", " ").splitlines()


def phony_targets() -> list[str]:
    """Every target the Makefile declares .PHONY, in its order."""
    declared = [line.split(":", 1)[1].split() for line in makefile_lines() if line.startswith(".PHONY:")]
    assert declared, "the Makefile declares no .PHONY targets"
    return [target for line in declared for target in line]


def help_comments() -> list[tuple[str, str, int]]:
    """Each ``## name: description`` line of the Makefile: name, description and line index."""
    found = []
    for index, line in enumerate(makefile_lines()):
        if line.startswith("##"):
            match = re.fullmatch(r"## ([a-z-]+): (\S.*)", line)
            assert match, f"a Makefile `##` line is `## target: one line`, not {line!r}"
            found.append((match[1], match[2], index))
    return found


def test_every_phony_target_has_one_help_line_right_above_its_rule():
    """A new target without its `## target:` line (or with two) fails here; details go on `#` lines."""
    lines = makefile_lines()
    comments = help_comments()
    names = [name for name, _, _ in comments]
    missing = sorted(set(phony_targets()) - set(names))
    assert not missing, f"no `## target:` line for the .PHONY target(s) {missing}"
    assert sorted(names) == sorted(phony_targets())  # one each, and none for a target not .PHONY
    for name, _, index in comments:
        rule = next(line for line in lines[index + 1 :] if not line.startswith("#"))
        assert rule.startswith(f"{name}:"), (name, rule)


def test_make_help_lists_every_target_with_one_line_each():
    done = subprocess.run(["make", "-s", "-C", str(REPO), "help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    printed = done.stdout.splitlines()
    assert [tuple(line.split(None, 1)) for line in printed] == [
        (name, text) for name, text, _ in help_comments()
    ]
    assert all(len(line) <= HELP_COLUMNS for line in printed), [
        line for line in printed if len(line) > HELP_COLUMNS
    ]
    assert "help" in phony_targets()
