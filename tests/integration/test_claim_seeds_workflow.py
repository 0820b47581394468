"""The audit's pre-check in the workflow: a config whose cap runs a setting a claim reads below the
claim's minimum seeds fails when the rules are read, before any job (issue 29)."""

from __future__ import annotations

import pytest
from support import REPO, snakemake

pytestmark = pytest.mark.integration


def test_the_workflow_refuses_the_capped_config_before_any_job(tmp_path):
    config = tmp_path / "capped.yaml"
    config.write_text(
        f"base: {REPO / 'config' / 'paper.yaml'}\nexperiments:\n  landmine:\n    caps:\n"
        "      BO: {max_seeds: 10}\n",
        encoding="utf-8",
    )
    work = tmp_path / "work"
    work.mkdir()
    result = snakemake(work, "--dry-run", configfile=config)
    assert result.returncode != 0
    assert "reads setting BO on experiment landmine" in result.stdout + result.stderr
    assert not (work / "results").exists()
