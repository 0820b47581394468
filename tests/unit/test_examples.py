"""The README's one-call and Optuna examples are the files under examples/, and they run.

This is how CI runs the Optuna example (the full venv of ``make test``); the one-call example
also runs with the core install alone (``make core-example``).
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from support import REPO

#: each example's run may take this long before it counts as hung
TIMEOUT = 300


def readme_block(first_line: str) -> str:
    """The README's python block whose code starts with ``first_line``."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    blocks = [b.split("```", 1)[0] for b in readme.split("```python\n")[1:]]
    matches = [b for b in blocks if b.startswith(first_line)]
    assert len(matches) == 1, f"README has {len(matches)} python blocks starting with {first_line!r}"
    return matches[0]


def example_code(name: str) -> str:
    return (REPO / "examples" / name).read_text(encoding="utf-8").split('"""', 2)[2].lstrip("\n")


@pytest.mark.parametrize(
    ("name", "first_line"),
    [("one_call.py", "import numpy as np\nimport vhct\n"), ("optuna_sampler.py", "import optuna\n")],
)
def test_the_readme_shows_the_example_verbatim(name, first_line):
    assert readme_block(first_line) == example_code(name)


def run_example(name: str) -> str:
    out = subprocess.run(
        [sys.executable, str(REPO / "examples" / name)], capture_output=True, text=True, timeout=TIMEOUT
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_the_one_call_example_finds_the_minimum():
    x0, x1, fun, evaluations = run_example("one_call.py").replace("[", "").replace("]", "").split()[:4]
    assert abs(float(x0) - 0.3) < 0.05 and abs(float(x1) - 0.3) < 0.05
    assert 0 <= float(fun) < 0.005 and evaluations == "500"


def test_the_optuna_example_finds_the_minimum():
    pytest.importorskip("optuna")
    out = run_example("optuna_sampler.py")
    assert "'layers': 2" in out
    assert float(out.split("}")[1]) < 1e-4
