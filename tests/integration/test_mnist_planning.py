"""The shipped paper configs plan MNIST in official mode: a Snakemake dry run of one MNIST batch file
schedules the fetch and verification of all four official files (the training images and labels
included) and gives the run job their verification stamps as inputs."""

from __future__ import annotations

import re

import pytest
from support import CONFIG_DIR, batch_of, made_up_plan, ok, snakemake

from vhct.objectives.mnist import MNIST_FILES
from vhct.pipeline import config as vc

pytestmark = pytest.mark.integration

#: the four official files, as the config's data catalog names their paths
FILES = [f"mnist/{name}" for split in ("train", "test") for name in MNIST_FILES[split]]


def job_blocks(dry_run: str) -> list[dict[str, str]]:
    """The jobs of a dry run's listing: per job its rule and its ``input:`` and ``output:`` lines."""
    jobs = []
    for block in re.split(r"\n(?=(?:local)?rule \S+:)", dry_run):
        rule = re.match(r"(?:local)?rule (\S+):", block)
        if rule is None:
            continue
        fields = dict(re.findall(r"^\s+(input|output): (.*)$", block, flags=re.MULTILINE))
        jobs.append({"rule": rule.group(1), **fields})
    return jobs


@pytest.mark.parametrize("name", ["paper", "paper-local"])
def test_the_paper_configs_plan_mnist_with_the_official_training_files(tmp_path, name):
    configfile = CONFIG_DIR / f"{name}.yaml"
    if name == "paper-local":  # a confirmatory config: its plan from made-up pilot data
        configfile = made_up_plan(tmp_path / "plan", configfile)
    config = vc.load([configfile])[0]
    assert config.experiments["mnist"].objective_params["mode"] == "official"
    assert sorted(config.data_files("mnist")) == sorted(FILES)

    first = config.seeds("mnist")[0]  # paper-local's plan starts after the pilot's seeds
    target = batch_of(config, "mnist", "VHCT-rho0.75", first)  # its batch file in the run store
    result = ok(snakemake(tmp_path, "--dry-run", target, configfile=configfile))
    jobs = job_blocks(result.stdout + result.stderr)
    run = [j for j in jobs if target in j.get("output", "")]
    assert len(run) == 1, result.stdout + result.stderr
    stamps = {f"data/.verified/{path}.json" for path in FILES}
    assert set(run[0]["input"].split(", ")) == stamps  # the data stamps alone: what it is, its name says
    # each file is fetched (from its URLs, then the mirror) and verified before the run reads it
    fetched = {j["output"] for j in jobs if j["rule"] == "data_file"}
    verified = {j["output"] for j in jobs if j["rule"] == "verify_data"}
    assert fetched == {f"data/{path}" for path in FILES}
    assert verified == stamps
    # a dry run writes no output: only the spec files written when the rules are read
    assert not [p for p in (tmp_path / "results").rglob("*") if p.is_file() and ".specs" not in p.parts]
