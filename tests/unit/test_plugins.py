"""Algorithms from installed packages: the entry points of ``vhct.algorithms``.

A plugin here is what an installed package leaves on ``sys.path``: a ``<name>-<version>.dist-info``
folder with ``METADATA`` and ``entry_points.txt`` (found by ``importlib.metadata``, no pip needed)
and its module, in a temporary folder. The algorithm table is read once per process, so each check
of the real table runs a new Python process with that folder on ``PYTHONPATH``, as the pipeline's
jobs are; the registry idiom's plugin reading is checked in-process on a registry of its own.
The docs' example package runs here through ``vhct.maximize`` and through the pipeline in
tests/integration/test_plugin_pipeline.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest
from plugin_support import docs_block, write_plugin

from vhct.optimizers.registry import PLUGIN_GROUP, algorithm_names, algorithm_sources
from vhct.registry import PluginError, Registry

#: how far from the maximizer (0.3, 0.3) the docs' local search may end after 200 evaluations
MAXIMUM_TOLERANCE = 0.05
#: a plugin algorithm: the box's centre, then points a step towards the best one
MINE = """
import numpy as np

from vhct.optimizers.base import Optimizer, check_positive


class Mine(Optimizer):
    name = "Mine"

    def __init__(self, domain, seed=None, step: float = 0.1):
        super().__init__(domain, seed)
        self.step = check_positive("step", step)
        self.best = self.domain.mean(axis=1)
        self.best_reward = -np.inf
        self.asked = self.best

    def _ask(self):
        low, high = self.domain[:, 0], self.domain[:, 1]
        self.asked = np.clip(self.best + self.step * self.rng.standard_normal(self.dim), low, high)
        return self.asked

    def _tell(self, reward):
        if reward > self.best_reward:
            self.best, self.best_reward = self.asked.copy(), reward

    def recommend(self):
        return self.best.copy()
"""


def in_new_process(root: Path, code: str) -> dict:
    """Run ``code`` in a new Python process with ``root`` on its path; it prints one JSON object.
    An exception it raises is reported as ``{"error": type, "message": str}``."""
    report = "print(json.dumps({'error': type(exc).__name__, 'message': str(exc)}))"
    body = textwrap.indent(textwrap.dedent(code), "    ")
    script = f"import json\ntry:\n{body}\nexcept Exception as exc:\n    {report}\n"
    path = os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=False)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.splitlines()[-1])


USE_MINE = """
import numpy as np
import vhct
from vhct.optimizers.registry import ALGORITHM_TABLE, algorithm_params, algorithm_sources
from vhct.reporting.styles import style

f = lambda x: -float(np.sum((x - 0.3) ** 2))
result = vhct.maximize(f, [[0, 1], [0, 1]], 50, algorithm="Mine", seed=0)
print(json.dumps({
    "names": vhct.algorithm_names(),
    "params": sorted(algorithm_params("Mine")),
    "origin": ALGORITHM_TABLE.origin("Mine"),
    "evaluations": int(result.nfev),
    "sources": [str(p) for p in algorithm_sources("Mine")],
    "styles": {name: style(name)[0] for name in vhct.algorithm_names()},
}))
"""


def test_an_installed_plugins_algorithm_is_in_the_table_of_every_new_process(tmp_path):
    """Before: no entry point was read; a new process knew only the built-ins ('Mine' unknown)."""
    root = write_plugin(tmp_path, {"Mine": "vhct_mine:Mine"}, modules={"vhct_mine": MINE})
    seen = in_new_process(root, USE_MINE)
    assert "error" not in seen, seen
    assert seen["names"] == [*algorithm_names(), "Mine"]  # after the built-ins
    assert seen["params"] == ["step"] and seen["evaluations"] == 50
    origin = "entry point 'Mine = vhct_mine:Mine' (group vhct.algorithms) of distribution vhct-mine 1.0"
    assert seen["origin"] == origin
    assert str(root / "vhct_mine.py") in seen["sources"]  # the plugin's code, for the run's source hash
    colours = list(seen["styles"].values())
    assert len(set(colours)) == len(colours)  # drawn in a colour of its own


def test_the_docs_example_package_is_an_algorithm_maximize_runs(tmp_path):
    """The docs' pyproject.toml and module, installed as pip would (its entry points in a dist-info),
    and the docs' call: LocalSearch is listed after the built-ins and finds the maximum."""
    project = tomllib.loads(docs_block("toml"))["project"]
    points = project["entry-points"][PLUGIN_GROUP]
    root = write_plugin(
        tmp_path, points, project["name"], project["version"], modules={"vhct_local": docs_block("python")}
    )
    seen = in_new_process(
        root,
        """
        import numpy as np, pickle, vhct
        f = lambda x: -float(np.sum((x - 0.3) ** 2))
        result = vhct.maximize(f, [[0, 1], [0, 1]], 200, algorithm="LocalSearch", seed=0, step=0.05)
        opt = vhct.make_optimizer("LocalSearch", [[0, 1]], seed=0)
        opt.tell(opt.ask(), 0.5)
        copy = pickle.loads(pickle.dumps(opt))
        print(json.dumps({"names": vhct.algorithm_names(), "x": result.x.tolist(), "nfev": int(result.nfev),
                          "same": copy.ask().tolist() == opt.ask().tolist()}))
        """,
    )
    assert points == {"LocalSearch": "vhct_local:LocalSearch"}
    assert seen["names"] == [*algorithm_names(), "LocalSearch"] and seen["nfev"] == 200 and seen["same"]
    assert max(abs(x - 0.3) for x in seen["x"]) < MAXIMUM_TOLERANCE


def test_an_installed_plugin_asking_outside_the_box_is_named_by_its_entry_point(tmp_path):
    """Probe (issue 48): a plugin asking x = [6, 6] on [0, 1]^2 made ``vhct.minimize`` call f there
    and return ``x=[6., 6.]``, ``success=True``. Now the error names the algorithm and the entry
    point and distribution its code comes from, and f never sees the point."""
    far = MINE.replace("return self.asked", "return np.array([6.0, 6.0])")
    root = write_plugin(tmp_path, {"Far": "vhct_far:Mine"}, modules={"vhct_far": far})
    seen = in_new_process(
        root,
        """
        import vhct
        calls = []
        try:
            vhct.minimize(lambda x: calls.append(x) or 0.0, [[0, 1], [0, 1]], 10, algorithm="Far")
        except vhct.api.AlgorithmError as exc:
            print(json.dumps({"message": str(exc), "calls": len(calls), "nit": exc.result.nit}))
        """,
    )
    origin = "entry point 'Far = vhct_far:Mine' (group vhct.algorithms) of distribution vhct-mine 1.0"
    assert seen["message"].startswith(
        f"vhct.minimize: algorithm 'Far' ({origin}): ask() returned x=[6.0, 6.0], outside the bounds"
    )
    assert seen["calls"] == 0 and seen["nit"] == 0


def test_plugins_come_after_the_built_ins_in_the_entry_points_name_order(tmp_path):
    write_plugin(tmp_path, {"Zed": "vhct_mine:Mine"}, dist="zed-plugin", modules={"vhct_mine": MINE})
    write_plugin(tmp_path, {"Alpha": "vhct_mine:Mine", "Beta": "vhct_mine:Mine"}, dist="ab-plugin")
    seen = in_new_process(tmp_path, "import vhct\nprint(json.dumps({'names': vhct.algorithm_names()}))")
    assert seen["names"] == [*algorithm_names(), "Alpha", "Beta", "Zed"]


@pytest.mark.parametrize(
    ("points", "use", "message"),
    [
        (
            {"VHCT": "vhct_mine:Mine"},
            "vhct.algorithm_names()",
            "entry point 'VHCT = vhct_mine:Mine' (group vhct.algorithms) of distribution vhct-mine 1.0 "
            "names algorithm 'VHCT', which is already registered: rename the entry point",
        ),
        (
            {"Mine": "vhct_mine"},
            "vhct.algorithm_names()",
            "entry point 'Mine = vhct_mine' (group vhct.algorithms) of distribution vhct-mine 1.0: "
            "the target must be 'module:attribute'",
        ),
        (
            {"Mine": "vhct_nowhere:Mine"},
            "vhct.make_optimizer('Mine', [[0, 1]])",
            "cannot import 'vhct_nowhere:Mine', named by entry point 'Mine = vhct_nowhere:Mine' "
            "(group vhct.algorithms) of distribution vhct-mine 1.0: "
            "ModuleNotFoundError: No module named 'vhct_nowhere'",
        ),
        (
            {"Mine": "vhct_mine:Yours"},
            "vhct.make_optimizer('Mine', [[0, 1]])",
            "cannot import 'vhct_mine:Yours', named by entry point 'Mine = vhct_mine:Yours' "
            "(group vhct.algorithms) of distribution vhct-mine 1.0: "
            "AttributeError: module 'vhct_mine' has no attribute 'Yours'",
        ),
    ],
    ids=["built-in-name", "not-module-attribute", "no-module", "no-class"],
)
def test_a_plugin_the_table_cannot_take_is_one_line_naming_entry_point_and_distribution(
    tmp_path, points, use, message
):
    root = write_plugin(tmp_path, points, modules={"vhct_mine": MINE})
    seen = in_new_process(root, f"import vhct\n{use}\nprint(json.dumps({{}}))")
    assert seen == {"error": "PluginError", "message": message}


def test_two_distributions_naming_one_algorithm_are_both_named(tmp_path):
    write_plugin(tmp_path, {"Mine": "vhct_mine:Mine"}, dist="first-plugin", modules={"vhct_mine": MINE})
    write_plugin(tmp_path, {"Mine": "vhct_mine:Mine"}, dist="second-plugin")
    seen = in_new_process(tmp_path, "import vhct\nvhct.algorithm_names()\nprint(json.dumps({}))")
    assert seen["error"] == "PluginError" and "\n" not in seen["message"]
    assert all(f"distribution {dist} 1.0" in seen["message"] for dist in ("first-plugin", "second-plugin"))
    assert seen["message"].endswith("names too: rename one of them")


CHECK_CONFIG = """
from vhct.pipeline.config import ConfigError, load
try:
    load([{path!r}])
    print(json.dumps({{"valid": True}}))
except ConfigError as exc:
    print(json.dumps({{"config_error": str(exc)}}))
"""


@pytest.mark.parametrize(
    ("points", "expected"),
    [
        ({"Mine": "vhct_mine:Mine"}, {"valid": True}),
        ({"Mine": "vhct_nowhere:Mine"}, "cannot import 'vhct_nowhere:Mine', named by entry point 'Mine = "),
        ({"HCT": "vhct_mine:Mine"}, "names algorithm 'HCT', which is already registered"),
    ],
    ids=["valid", "no-module", "built-in-name"],
)
def test_the_pipelines_config_check_takes_a_plugin_or_names_what_is_wrong_in_one_line(
    tmp_path, points, expected
):
    """The config check (the Snakefile's, before any job) sees the plugin; a plugin it cannot take is
    its one-line error, with the config's file and the setting's key."""
    root = write_plugin(tmp_path / "site", points, modules={"vhct_mine": MINE})
    config = tmp_path / "mine.yaml"
    config.write_text(
        textwrap.dedent("""\
        settings:
          Mine-fast: {algorithm: Mine, params: {step: 0.2}}
        experiments:
          e: {objective: garland, noise: 0.05, horizon: 10, seeds: 1, settings: [Mine-fast]}
        figures:
          f: {kind: regret, panels: [{experiment: e}]}
        """)
    )
    seen = in_new_process(root, CHECK_CONFIG.format(path=str(config)))
    if expected == {"valid": True}:
        assert seen == expected
    else:
        error = seen["config_error"]
        assert "\n" not in error and str(config) in error and "Mine-fast" in error and expected in error
        assert "distribution vhct-mine 1.0" in error


# -- the registry idiom's plugin reading (vhct.registry), on a registry of its own -----------------------

#: an entry-point group no installed package uses
TEST_GROUP = "vhct.test-plugins"


def test_a_registry_reads_its_entry_points_on_first_read_after_the_entries_in_code(tmp_path, monkeypatch):
    write_plugin(tmp_path, {"dumps": "json:dumps", "tool": "json.tool:main"}, group=TEST_GROUP)
    monkeypatch.syspath_prepend(str(tmp_path))
    table = Registry("thing", plugins=TEST_GROUP)
    table.register("first", 1)  # registering reads no entry point
    assert table._plugins_read is False
    assert list(table) == ["first", "dumps", "tool"]
    assert table.target("dumps") == "json:dumps" and table["dumps"] is json.dumps
    assert table.origin("first") is None and "distribution vhct-mine 1.0" in table.origin("tool")
    made = Registry("thing", plugins=TEST_GROUP, plugin=lambda name, target, origin: (name, target))
    assert made["tool"] == ("tool", "json.tool:main")


def test_a_bad_entry_point_registers_none_and_fails_every_read(tmp_path, monkeypatch):
    write_plugin(tmp_path, {"a": "json:dumps", "first": "json:loads"}, group=TEST_GROUP)
    monkeypatch.syspath_prepend(str(tmp_path))
    table = Registry("thing", plugins=TEST_GROUP)
    table.register("first", 1)
    for _ in range(2):
        with pytest.raises(PluginError, match="names thing 'first', which is already registered"):
            list(table)
    assert table._registered == {"first": 1}  # 'a' was not registered either


def test_the_sources_of_a_built_in_are_its_module_and_its_bases():
    package = Path(sys.modules["vhct"].__file__).parent
    optimizers = package / "optimizers"
    # TruncatedHOO, its base TreeSearch (tree.py) and theirs, Optimizer (base.py)
    expected = [optimizers / "base.py", optimizers / "hoo.py", optimizers / "tree.py"]
    assert algorithm_sources("T-HOO") == expected
    assert algorithm_sources("VHCT") == [optimizers / "tree.py"]  # a factory: its own module
