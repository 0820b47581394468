"""No two vhct modules import each other, directly or around a loop, and none imports another's private name.

Read from the source with ``ast`` (no imports run), so an import inside a function or under
``if TYPE_CHECKING:`` counts like a module-level one: a cycle hidden in a lazy import is still a
cycle of the design. The layer test beside this one (test_layers.py) checks the direction between
layers; this one checks the modules inside a layer too.
"""

from __future__ import annotations

import ast
from collections import deque
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "vhct"

#: cycles known today, each with the change that removes it; an entry whose cycle is gone fails the
#: test, so the list cannot go stale
KNOWN_CYCLES: dict[frozenset[str], str] = {}
#: private names imported across modules today (importer, module, name), each with its fix
KNOWN_PRIVATE_IMPORTS: dict[tuple[str, str, str], str] = {}


def module_name(path: Path, package: Path = PACKAGE) -> str:
    parts = path.relative_to(package.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules(package: Path = PACKAGE) -> dict[str, Path]:
    return {module_name(p, package): p for p in sorted(package.rglob("*.py"))}


def imports(path: Path, known: dict[str, Path], package: Path = PACKAGE) -> list[tuple[int, str, str | None]]:
    """(line, module, name) of every vhct import in ``path``: ``module`` is the vhct module it
    loads (``from a import b`` with ``a.b`` a module is an import of ``a.b``), ``name`` the name
    taken from it (None for a whole module)."""
    own = module_name(path, package)
    here = own if path.name == "__init__.py" else own.rpartition(".")[0]
    found: list[tuple[int, str, str | None]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name, None) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = here.split(".")[: len(here.split(".")) - node.level + 1]
                base = ".".join(parts + ([node.module] if node.module else []))
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                if submodule in known:
                    found.append((node.lineno, submodule, None))
                else:
                    found.append((node.lineno, base, alias.name))
    return [(line, m, name) for line, m, name in found if m in known]


def import_graph(package: Path = PACKAGE) -> dict[str, dict[str, int]]:
    """module -> {module it imports: first line of that import}."""
    known = modules(package)
    graph: dict[str, dict[str, int]] = {m: {} for m in known}
    for name, path in known.items():
        for line, target, _ in imports(path, known, package):
            if target != name:
                graph[name].setdefault(target, line)
    return graph


def cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """Every group of modules that import each other around a loop (the strongly connected
    components of more than one module, Tarjan's algorithm), each sorted by name."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(groups)


def loop(graph: dict[str, dict[str, int]], group: list[str]) -> str:
    """The shortest loop from the group's first module back to it, with the line of each import:
    ``a -> (line 3) b -> (line 9) a``."""
    members, start = set(group), group[0]
    parent: dict[str, str] = {}
    queue = deque([start])
    while start not in parent:  # breadth first inside the group; it is a cycle, so start comes back
        node = queue.popleft()
        for nxt in graph[node]:
            if nxt in members and nxt not in parent:
                parent[nxt] = node
                queue.append(nxt)
    chain = [start]
    while len(chain) == 1 or chain[-1] != start:
        chain.append(parent[chain[-1]])
    chain.reverse()
    return chain[0] + "".join(f" -> (line {graph[a][b]}) {b}" for a, b in zip(chain, chain[1:], strict=False))


def private_imports(package: Path = PACKAGE) -> list[tuple[str, str, str, int]]:
    """(importer, module, name, line) of every ``_name`` (not a dunder) one module takes from another."""
    known = modules(package)
    found = []
    for importer, path in known.items():
        for line, target, name in imports(path, known, package):
            if name and name.startswith("_") and not name.startswith("__") and target != importer:
                found.append((importer, target, name, line))
    return found


def test_no_import_cycle():
    graph = import_graph()
    found = {frozenset(group): f"{group}, e.g. {loop(graph, group)}" for group in cycles(graph)}
    new = [text for group, text in found.items() if group not in KNOWN_CYCLES]
    assert not new, "modules import each other:\n" + "\n".join(new)
    gone = [f"{sorted(group)} ({why})" for group, why in KNOWN_CYCLES.items() if group not in found]
    assert not gone, "an allowlisted cycle is gone: delete its entry in KNOWN_CYCLES: " + "; ".join(gone)


def test_no_private_name_imported_from_another_module():
    found = {(i, m, n): line for i, m, n, line in private_imports()}
    new = [f"{i} line {line}: from {m} import {n}" for (i, m, n), line in found.items()]
    new = [text for key, text in zip(found, new, strict=True) if key not in KNOWN_PRIVATE_IMPORTS]
    assert not new, "private names used outside their module (make them public or move them):\n" + "\n".join(
        new
    )
    gone = [f"{key} ({why})" for key, why in KNOWN_PRIVATE_IMPORTS.items() if key not in found]
    assert not gone, "an allowlisted private import is gone: delete its entry: " + "; ".join(gone)


def _write(package: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = package / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_the_checker_sees_lazy_type_checking_and_long_cycles_and_private_names(tmp_path):
    """The check itself, on a made-up package: a cycle through a function-level import, one through
    a ``TYPE_CHECKING`` import, a three-module loop, and a private name; a clean module is not reported."""
    package = tmp_path / "vhct"
    _write(
        package,
        {
            "__init__.py": "",
            "a/__init__.py": "",
            "a/one.py": "from .two import f\n",
            "a/two.py": "def f():\n    from vhct.a import one\n",
            "b/__init__.py": "",
            "b/x.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from vhct.b.y import Y\n",
            "b/y.py": "from . import z\n",
            "b/z.py": "import vhct.b.x\nfrom vhct.a.one import _hidden, __version__\n",
            "c.py": "from vhct.a import two\nfrom vhct.b import z\n",
        },
    )
    graph = import_graph(package)
    assert cycles(graph) == [["vhct.a.one", "vhct.a.two"], ["vhct.b.x", "vhct.b.y", "vhct.b.z"]]
    assert loop(graph, ["vhct.b.x", "vhct.b.y", "vhct.b.z"]) == (
        "vhct.b.x -> (line 3) vhct.b.y -> (line 1) vhct.b.z -> (line 1) vhct.b.x"
    )
    assert private_imports(package) == [("vhct.b.z", "vhct.a.one", "_hidden", 2)]
