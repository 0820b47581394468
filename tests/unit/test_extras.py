"""The core install is light, and a missing extra is reported by name."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

from vhct import extras
from vhct.extras import MissingExtraError, require

#: packages of the extras; the core (`import vhct` and running an optimizer) loads none of them
HEAVY = (
    "pandas",
    "matplotlib",
    "torch",
    "GPyOpt",
    "GPy",
    "sklearn",
    "snakemake",
    "scipy",
    "yaml",
    "jsonschema",
)

CORE_RUN = """
import sys
import numpy as np
import vhct
opt = vhct.VHCT([[0.0, 1.0]], rho=0.75, seed=0)
for _ in range(200):
    x = opt.ask()
    opt.tell(x, float(-np.sum((x - 0.3) ** 2)))
vhct.make_optimizer("POO", [[0, 1]], horizon=100, seed=0)
print(",".join(sorted({m.split(".")[0] for m in sys.modules})))
"""


def test_import_vhct_and_run_an_optimizer_loads_no_extra():
    out = subprocess.run([sys.executable, "-c", CORE_RUN], capture_output=True, text=True, check=True)
    loaded = set(out.stdout.strip().split(","))
    assert "numpy" in loaded and "vhct" in loaded
    assert not loaded & set(HEAVY), sorted(loaded & set(HEAVY))


def test_require_names_the_missing_package_and_the_extra(monkeypatch):
    monkeypatch.setattr(extras, "missing_modules", lambda modules: [m for m in modules if m == "GPyOpt"])
    with pytest.raises(MissingExtraError, match=r"the BO baseline needs GPyOpt, .*pip install 'vhct\[bo\]'"):
        require(("GPyOpt", "GPy"), "bo", "the BO baseline")
    require(("GPy",), "bo", "the BO baseline")  # present: no error
    with pytest.raises(ValueError, match="unknown extra 'gpu'"):
        require(("numpy",), "gpu", "x")


def test_missing_modules_sees_what_is_installed():
    assert extras.missing_modules(["numpy", "surely_not_a_module_xyz"]) == ["surely_not_a_module_xyz"]


def _hide(monkeypatch, *modules: str) -> None:
    """Make ``modules`` look uninstalled to ``require`` (and to a fresh import)."""
    real = extras.missing_modules
    monkeypatch.setattr(
        extras,
        "missing_modules",
        lambda names: [*(m for m in names if m in modules), *real([m for m in names if m not in modules])],
    )
    for name in modules:
        monkeypatch.setitem(sys.modules, name, None)


def test_bo_without_its_extra_says_which_extra(monkeypatch):
    from vhct.optimizers.registry import make_optimizer

    _hide(monkeypatch, "GPyOpt")
    with pytest.raises(MissingExtraError, match=r"pip install 'vhct\[bo\]'"):
        make_optimizer("BO", [[0.0, 1.0]], horizon=10, seed=0)


@pytest.mark.parametrize(
    ("objective", "module", "hidden"),
    [
        ("landmine", "vhct.objectives.landmine", "sklearn"),
        ("mnist", "vhct.objectives.mnist", "torch"),
    ],
)
def test_real_data_objectives_without_their_extra_say_which_extra(monkeypatch, objective, module, hidden):
    from vhct import objectives

    _hide(monkeypatch, hidden)
    monkeypatch.delitem(sys.modules, module, raising=False)
    # as on first use: the registry imports the module only when the name is first looked up
    monkeypatch.setitem(objectives.OBJECTIVES._entries, objective, objectives.OBJECTIVES.target(objective))
    with pytest.raises(MissingExtraError, match=rf"needs {hidden}, .*pip install 'vhct\[real-data\]'"):
        objectives.make_objective(objective)


def test_pipeline_without_its_extra_says_which_extra(monkeypatch):
    _hide(monkeypatch, "jsonschema")
    for name in [m for m in sys.modules if m == "vhct.pipeline" or m.startswith("vhct.pipeline.")]:
        monkeypatch.delitem(sys.modules, name)
    with pytest.raises(MissingExtraError, match=r"the pipeline .* needs jsonschema, .*'vhct\[pipeline\]'"):
        importlib.import_module("vhct.pipeline.config")


def test_the_readme_example_is_the_file_ci_runs():
    """CI runs examples/quickstart.py with the core install alone; it must be the README's example."""
    from support import REPO

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    block = readme.split("```python\n", 1)[1].split("```", 1)[0]
    example = (REPO / "examples" / "quickstart.py").read_text(encoding="utf-8")
    code = example.split('"""', 2)[2].lstrip("\n")
    assert code == block


def test_every_synthetic_objective_builds_and_evaluates_with_the_core_dependencies():
    """numpy and SciPy (core dependencies) are all the synthetic objectives need."""
    code = (
        "import numpy as np, sys\n"
        "from vhct.objectives import make_objective, objective_names\n"
        "for name in objective_names():\n"
        "    if name in ('landmine', 'mnist'):\n"
        "        continue\n"
        "    f = make_objective(name)\n"
        "    f(f.domain.mean(axis=1))\n"
        f"heavy = {{m.split('.')[0] for m in sys.modules}} & {set(HEAVY) - {'scipy'}!r}\n"
        "print(sorted(heavy))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
