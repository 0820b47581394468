"""Shared fixtures and markers of the test suite.

``tests/unit`` checks one module at a time in-process; ``tests/integration`` runs the pipeline
(Snakemake subprocesses on the tiny config, a local SLURM cluster) and the packaging (wheel and
core-only installs). Every test under ``tests/integration`` carries the ``integration`` mark, so
``pytest -m "not integration"`` (or ``pytest tests/unit``) is the quick loop. Helper functions
live in ``tests/support.py``, importable from any test.
"""

from __future__ import annotations

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
def tiny_run(tmp_path_factory, tiny_fixtures) -> Path:
    """A complete run of the tiny config on fixture data files (``tiny_fixtures``): one per session,
    read by tests/integration/test_pipeline.py and copied by test_run_store.py to change one thing.
    A test that changes it leaves it complete (it reruns what it deleted)."""
    root = tmp_path_factory.mktemp("tiny-run")
    ok(snakemake(root, configfile=tiny_fixtures))
    return root
