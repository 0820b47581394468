"""The package installs on the Pythons its core dependencies support, not on 3.11 alone.

pyproject.toml's ``requires-python`` must admit every CPython from 3.11 on that numpy and SciPy
ship for; the pipeline's extras are locked for 3.11 (requirements.lock), and environment.yml,
which builds the pipeline's environment, stays on that Python.
"""

from __future__ import annotations

import re
import tomllib

from packaging.specifiers import SpecifierSet
from support import REPO

#: CPython versions numpy >= 1.26 and SciPy >= 1.11 publish wheels for, from the project's 3.11 on
CORE_PYTHONS = ("3.11", "3.12", "3.13")
#: the Python of the lock and of the pipeline (Makefile's PYTHON, environment.yml)
LOCK_PYTHON = "3.11"


def test_the_core_is_installable_on_every_python_its_dependencies_support():
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    allowed = SpecifierSet(project["requires-python"])
    refused = [version for version in CORE_PYTHONS if not allowed.contains(version)]
    assert not refused, f"requires-python = {project['requires-python']!r} refuses {refused}"
    assert not allowed.contains("3.10")  # untested below 3.11 (ruff targets py311, the lock is 3.11s)


def test_the_locked_pipeline_stays_on_the_locks_python():
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    assert re.search(rf"^PYTHON \?= python{LOCK_PYTHON}$", makefile, re.MULTILINE)
    assert re.search(rf"^\s*- python={LOCK_PYTHON}\b", (REPO / "environment.yml").read_text(), re.MULTILINE)
