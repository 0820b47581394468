"""A job's code hash comes from what it imports (issue 49, ``vhct.pipeline.versions``): the import
closure of its entry modules, read from the source, so an edit of any module a job imports reruns
that job and only the jobs that import it, with no list of files kept by hand."""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import pytest
from support import REPO

from vhct.objectives import OBJECTIVES
from vhct.optimizers.registry import ALGORITHM_TABLE, algorithm_origin
from vhct.pipeline import versions
from vhct.pipeline.figure_kinds import FIGURE_KINDS
from vhct.pipeline.versions import LAYER_ENTRIES, import_closure, layer_files, module_imports, source_hash
from vhct.reporting.audit.claims_model import CLAIM_KINDS
from vhct.reporting.plots.drawers import DRAWERS
from vhct.reporting.styles import STYLES

#: each hashed layer's Snakemake script (``workflow/scripts``)
SCRIPTS = {
    "run": "run.py",
    "aggregate": "aggregate.py",
    "figure": "figure.py",
    "forest": "forest.py",
    "summary": "summary.py",
    "caption": "caption.py",
    "audit": "audit.py",
}
#: scripts of no hashed layer: the data rules, whose outputs are checked against declared checksums
UNHASHED_SCRIPTS = {"data.py", "verify_data.py"}


def package_copy(folder: Path) -> Path:
    """A copy of the installed package's source (its root) to edit."""
    root = folder / "vhct"
    shutil.copytree(versions.PACKAGE_ROOT, root, ignore=shutil.ignore_patterns("__pycache__"))
    return root


def hashes(root: Path) -> dict[str, str]:
    return {layer: source_hash(layer, root) for layer in LAYER_ENTRIES}


def script_imports(path: Path) -> set[str]:
    """The package's modules a workflow script imports (``from vhct.x import name``: ``vhct.x``)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "vhct":
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "vhct")
    return found


def test_each_layers_entries_are_the_package_imports_of_its_rules_script():
    """The entries are the modules the job's process enters the package by; every workflow script is
    a hashed layer's or a data rule's, so a new script is decided on."""
    scripts = REPO / "workflow" / "scripts"
    assert {p.name for p in scripts.glob("*.py")} == set(SCRIPTS.values()) | UNHASHED_SCRIPTS
    assert set(SCRIPTS) == set(LAYER_ENTRIES)
    for layer, script in SCRIPTS.items():
        assert script_imports(scripts / script) == set(LAYER_ENTRIES[layer]), layer


def test_the_closure_follows_every_form_of_import_and_the_templates_a_module_loads(tmp_path, monkeypatch):
    """In a package made for the test: imports in functions, relative ones, a submodule imported by
    name from its package, a package's ``__init__``, lazy registry targets (absolute and relative),
    and a Jinja template folder; a module nothing imports, and other packages, are left out."""
    root = tmp_path / "vhct"
    sources = {
        "__init__.py": "from .a import f\n",
        "a.py": "import os\nimport numpy\n\n\ndef f():\n    from .pkg import sub\n    from . import b\n",
        "b.py": 'TABLE = {"x": ".lazy:X", "y": "vhct.far.deep:Y", "z": "vhct.missing:Z", "t": "text: .b"}\n',
        "lazy.py": "import vhct.c\n",
        "c.py": "X = 1\n",
        "far/__init__.py": "",
        "far/deep.py": "from ..loader import ENV\n",
        "loader.py": 'from jinja2 import PackageLoader\n\nENV = PackageLoader("vhct.pkg", "templates")\n',
        "pkg/__init__.py": "",
        "pkg/sub.py": "",
        "pkg/templates/page.j2": "{{ x }}\n",
        "unused.py": "import vhct.a\n",
    }
    for name, text in sources.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    closure = import_closure(("vhct.a",), root)
    assert closure == {
        "vhct",
        "vhct.a",
        "vhct.b",
        "vhct.c",
        "vhct.lazy",
        "vhct.far",
        "vhct.far.deep",
        "vhct.loader",
        "vhct.pkg",
        "vhct.pkg.sub",
    }
    assert module_imports("vhct.loader", root)[1] == {root / "pkg" / "templates"}
    monkeypatch.setitem(LAYER_ENTRIES, "made", ("vhct.a",))
    files = {p.relative_to(root).as_posix() for p in layer_files("made", root)}
    assert files == {n for n in sources if n != "unused.py"}
    (root / "odd.py").write_text('from jinja2 import PackageLoader\n\nPackageLoader(NAME, "templates")\n')
    with pytest.raises(ValueError, match=r"odd\.py: PackageLoader of a folder not named by two literal"):
        module_imports("vhct.odd", root)


@pytest.mark.parametrize(
    ("registry", "module"),
    [
        (OBJECTIVES, "vhct.objectives"),
        (CLAIM_KINDS, "vhct.reporting.audit.claims_model"),
        (FIGURE_KINDS, "vhct.pipeline.figure_kinds"),
        (DRAWERS, "vhct.reporting.plots.drawers"),
        (STYLES, "vhct.reporting.styles"),
    ],
)
def test_every_lazy_entry_of_a_registry_is_in_the_closure_of_the_module_that_holds_it(registry, module):
    """A lazy entry is imported on first lookup, not by an import statement: the closure reads its
    ``"module:attribute"`` as an import, so the module that registers it pulls it in."""
    closure = import_closure((module,))
    targets = [t for t in map(registry.target, registry) if t is not None]
    assert all(t.partition(":")[0] in closure for t in targets), targets


def test_every_built_in_algorithm_is_in_the_run_code():
    """The algorithms' rows name their classes relative to ``vhct.optimizers`` (``".tree:VHCT"``)."""
    closure = import_closure(LAYER_ENTRIES["run"])
    rows = [name for name, row in ALGORITHM_TABLE.items() if row.origin is None]
    assert {"vhct.optimizers.tree", "vhct.optimizers.bo", "vhct.optimizers.optuna_baselines"} <= closure
    assert all(algorithm_origin(name).partition(":")[0] in closure for name in rows)


def test_the_figures_and_the_audit_hold_the_run_code():
    """Why their spec files no longer add the run layer's hash: the function and cells drawers
    evaluate objectives, the OSC panels replay runs, the audit evaluates objectives and reads runs."""
    run = import_closure(LAYER_ENTRIES["run"])
    for layer in ("figure", "audit"):
        assert run <= import_closure(LAYER_ENTRIES[layer]), layer


@pytest.mark.parametrize(
    ("edited", "rerun"),
    [
        # a drawer: no run, aggregate, audit (the audit's figures import the plots package)
        ("reporting/plots/functions.py", {"figure", "forest", "summary"}),
        # the audit's figures read the audit's records, whose claims model names the kinds (lazy entries)
        ("reporting/audit/kinds.py", {"audit", "forest", "summary"}),
        # the audit's figures name statements through the view, which loads the templates
        ("reporting/templates/audit.j2", {"audit", "forest", "summary"}),
        ("reporting/captions.py", {"caption"}),
        # not the runs, nor the figures
        ("pipeline/aggregate.py", {"aggregate", "audit", "forest", "summary"}),
        # the spec files' reader: every job that reads one (the runs read none)
        ("pipeline/stale.py", {"aggregate", "figure", "caption", "audit", "forest", "summary"}),
        ("article/typeset.py", set()),  # no job imports the article
    ],
)
def test_an_edit_changes_the_hash_of_the_layers_that_import_it_and_no_other(tmp_path, edited, rerun):
    """A copy of the package edited in one file: the hashes of exactly the layers whose jobs import
    it change."""
    root = package_copy(tmp_path)
    path = root / edited
    path.write_text(path.read_text() + "\n# edited\n")
    before, after = hashes(versions.PACKAGE_ROOT), hashes(root)
    assert {layer for layer in LAYER_ENTRIES if before[layer] != after[layer]} == rerun


def test_an_edit_of_an_objective_redraws_the_figures_that_draw_it(tmp_path):
    """Issue 49: the function and near-optimal-cells drawers call ``make_objective``, so an edit of
    ``objectives/synthetic.py`` changes the figures' hash (fig1a, fig1b, figA2 are drawn again), and
    the runs' of course. A copy unedited has the installed code's hashes (paths and bytes alone
    count), so the other tests compare an edited copy with the installed code."""
    root, edited_root = package_copy(tmp_path), package_copy(tmp_path / "edited")
    assert hashes(root) == hashes(versions.PACKAGE_ROOT)
    synthetic = edited_root / "objectives" / "synthetic.py"
    synthetic.write_text(synthetic.read_text() + "\nGARLAND_SCALE = 0.5\n")
    before, after = hashes(root), hashes(edited_root)
    assert before["figure"] != after["figure"] and before["run"] != after["run"]
    with pytest.raises(ValueError, match="no source layer 'plots': one of run, aggregate"):
        source_hash("plots")
