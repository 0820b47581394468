"""Shared fixtures and markers of the test suite.

``tests/unit`` checks one module at a time in-process; ``tests/integration`` runs the pipeline
(Snakemake subprocesses on the tiny config, a local SLURM cluster) and the packaging (wheel and
core-only installs). Every test under ``tests/integration`` carries the ``integration`` mark, and so
does a test under ``tests/unit`` that starts make or Snakemake (marked where it is), so
``pytest -m "not integration"`` is the quick loop. Helper functions
live in ``tests/support.py``, importable from any test; a made-up finished run and its shipped
findings in ``tests/findings_run.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import fixture_config, ok, snakemake

INTEGRATION_DIR = Path(__file__).resolve().parent / "integration"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if INTEGRATION_DIR in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.integration)


@pytest.fixture(scope="session")
def tiny_fixtures(tmp_path_factory) -> Path:
    """The tiny config overlaid with generated Landmine/MNIST files in an offline mirror.

    Read-only for its users: a test that damages data files makes its own with ``fixture_config``.
    """
    return fixture_config(tmp_path_factory.mktemp("fixtures"))


@pytest.fixture(scope="session")
def made_up_root(tmp_path_factory) -> Path:
    """A checkout (citation record, configs; no results/) whose ``docs/findings`` is a made-up run
    shipped (``findings_run.made_up_checkout``), no curves of its figures. Read-only: copy it to change it."""
    from findings_run import made_up_checkout

    return made_up_checkout(tmp_path_factory.mktemp("made-up"))


@pytest.fixture(scope="session")
def curved_root(tmp_path_factory) -> Path:
    """A checkout whose findings are a made-up confirmatory run's with a statement decided by
    computation, a recorded peak memory (``findings_run.PEAK_MB``) and the curves of every figure it made.
    Read-only but for the article built into its ``docs/``: copy it to change it."""
    from findings_run import PEAK_MB, made_up_checkout, with_curves

    root = made_up_checkout(tmp_path_factory.mktemp("curved"), confirmatory=True, computed=True)
    findings = root / "docs" / "findings"
    with_curves(findings, root)
    path = findings / "provenance.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), "max_rss_mb": PEAK_MB}), encoding="utf-8")
    return root


@pytest.fixture(scope="session")
def tiny_run(tmp_path_factory, tiny_fixtures) -> Path:
    """A complete run of the tiny config on fixture data files (``tiny_fixtures``): one per session,
    read by tests/integration/test_pipeline.py and copied by test_run_store.py to change one thing.
    A test that changes it leaves it complete (it reruns what it deleted)."""
    root = tmp_path_factory.mktemp("tiny-run")
    ok(snakemake(root, configfile=tiny_fixtures))
    return root
