"""The package's layers import one way: optimizers <- objectives <- pipeline <- reporting <- article.

Read from the source with ``ast`` (no imports run), so a function-level (lazy) import that
breaks the layering is caught as well as a module-level one.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "vhct"
#: rank of each subpackage; a module may import only from its own rank or lower ones
LAYERS = {
    "durations": 0,
    "extras": 0,
    "registry": 0,
    "resources": 0,
    "optimizers": 1,
    "api": 1,
    "integrations": 1,
    "objectives": 2,
    "pipeline": 3,
    "reporting": 4,
    "article": 5,  # the replication article: imports reporting, nothing imports it
}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path) -> list[tuple[int, str]]:
    """(line, absolute module name) of every ``vhct`` import in ``path``, relative ones resolved."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            # `from vhct import objectives` names a subpackage
            found += [(node.lineno, f"{target}.{alias.name}") for alias in node.names]
    return [(line, name) for line, name in found if name == "vhct" or name.startswith("vhct.")]


def layer_of(name: str) -> str | None:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in LAYERS else None


def layered_modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if layer_of(module_name(p)) is not None)


def test_every_module_belongs_to_a_layer():
    top_level = {p.stem for p in PACKAGE.glob("*.py")} - {"__init__"}
    assert top_level <= set(LAYERS), "a module outside the layers"
    assert {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()} == {
        "api",
        "article",
        "optimizers",
        "integrations",
        "objectives",
        "pipeline",
        "reporting",
        "resources",
    }


@pytest.mark.parametrize("path", layered_modules(), ids=lambda p: module_name(p))
def test_imports_go_one_way(path):
    own = layer_of(module_name(path))
    upward = [
        f"line {line}: {name}"
        for line, name in imported_modules(path)
        if (layer := layer_of(name)) is not None and LAYERS[layer] > LAYERS[own]
    ]
    assert not upward, f"{module_name(path)} ({own}) imports a higher layer: {upward}"


#: the reporting modules the audit (``vhct.reporting.audit``) may import besides its own: those below
#: it (the git access, ``gitlog``, imports nothing of the package: the seeds shipped audits used are
#: read through it); the renderer and the audit stage (``vhct.reporting.audit_job``) stand above it
BELOW_THE_AUDIT = {"vhct.reporting.stats", "vhct.reporting.costs", "vhct.reporting.gitlog"}


@pytest.mark.parametrize(
    "path", sorted((PACKAGE / "reporting" / "audit").rglob("*.py")), ids=lambda p: module_name(p)
)
def test_the_audit_imports_no_reporting_module_above_it(path):
    above = [
        f"line {line}: {name}"
        for line, name in imported_modules(path)
        if name.startswith("vhct.reporting")
        and not name.startswith("vhct.reporting.audit.")
        and not any(name == m or name.startswith(f"{m}.") for m in BELOW_THE_AUDIT)
    ]
    assert not above, f"{module_name(path)} imports a reporting module above the audit: {above}"


def test_the_checker_sees_an_upward_import(tmp_path, monkeypatch):
    """The check itself: a lazy upward import inside a function is reported."""
    fake = tmp_path / "vhct"
    (fake / "optimizers").mkdir(parents=True)
    module = fake / "optimizers" / "bad.py"
    module.write_text("def f():\n    from ..reporting import plots\n    from vhct.pipeline.run import run\n")
    monkeypatch.setattr(__import__(__name__), "PACKAGE", fake)
    names = [name for _, name in imported_modules(module)]
    assert names == ["vhct.reporting.plots", "vhct.pipeline.run.run"]
    assert [layer_of(n) for n in names] == ["reporting", "pipeline"]
