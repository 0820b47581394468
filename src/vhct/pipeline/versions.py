"""What made a result: the versions of the packages and the hash of this package's source that shape
its numbers, as recorded in run sidecars, in the spec files of the rules and in provenance.

TPE's, CMA-ES's and the GP sampler's points, GPy's fits, scikit-learn's SVM and torch's training
all change with package versions, so "same config and seed, same numbers" holds only with the
same versions: every run's sidecar and the provenance record carry them, every reader of runs
refuses a run made with other versions than the installed ones (``vhct.pipeline.tables``), and
``ship`` refuses a run whose files disagree.

A package version does not change when this package's own code does (``vhct 0.1.0`` before and
after an edit of an objective), so each result also records :func:`source_hash` of the modules
that shape it, by layer: every module of this package its job imports, directly or not, found from
the job's entry modules (:data:`LAYER_ENTRIES`) by reading the source, so no list of files is kept
by hand. A run whose record names another hash of the run code than the installed one is rerun or
refused as one of other versions is.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import platform
import re
from importlib import metadata
from pathlib import Path

#: distributions whose versions change the numbers (objectives, optimizers, aggregation, workflow)
SHAPING_PACKAGES = (
    "numpy",
    "scipy",
    "torch",
    "torchvision",
    "scikit-learn",
    "GPy",
    "GPyOpt",
    "optuna",
    "cmaes",
    "pandas",
    "snakemake",
    "vhct",
)


def package_versions(packages: tuple[str, ...] = SHAPING_PACKAGES) -> dict[str, str | None]:
    """``{distribution: installed version}`` for ``packages`` (None when not installed), and Python's."""
    return dict(_installed(tuple(packages)))


@functools.cache
def _installed(packages: tuple[str, ...]) -> tuple[tuple[str, str | None], ...]:
    """Looked up once per process (every run job records them; the lookups take about 15 ms, a short
    run not much more); a fresh dict per call, so a caller may change its copy."""
    versions: list[tuple[str, str | None]] = [("python", platform.python_version())]
    for name in packages:
        try:
            versions.append((name, metadata.version(name)))
        except metadata.PackageNotFoundError:
            versions.append((name, None))
    return tuple(versions)


#: the package's root folder, whose files :func:`source_hash` reads (by path: nothing is imported)
PACKAGE_ROOT = Path(__file__).resolve().parents[1]
#: the package's name: the imports of it are followed, every other import is left out
PACKAGE = "vhct"
#: the modules each layer's jobs enter the package by: the ``vhct`` imports of the rule's Snakemake
#: script (``workflow/scripts``; tests/unit/test_code_hash.py checks they agree). A layer's code
#: is their import closure (:func:`layer_files`), so no list of files is kept by hand: an edit of
#: any module a job imports, directly or not, reruns that job, and of no other module
LAYER_ENTRIES: dict[str, tuple[str, ...]] = {
    "run": ("vhct.pipeline.jobs",),
    "aggregate": ("vhct.pipeline.aggregate",),
    "figure": ("vhct.pipeline.jobs", "vhct.pipeline.stale", "vhct.reporting.plots"),
    "forest": ("vhct.pipeline.jobs", "vhct.reporting.audit.records", "vhct.reporting.plots.forest"),
    "summary": ("vhct.pipeline.jobs", "vhct.reporting.audit.records", "vhct.reporting.plots.summary"),
    "caption": ("vhct.pipeline.stale", "vhct.reporting.captions"),
    "audit": (
        "vhct.pipeline.config",
        "vhct.pipeline.jobs",
        "vhct.pipeline.stale",
        "vhct.reporting.audit_job",
    ),
}
#: what loads a package's data folder: ``PackageLoader("vhct.reporting", "templates")`` (Jinja), read
#: from the module that calls it, whose closure then holds the folder's files. The package's other
#: data files do not count: the config schema only decides which configs load (what a job is asked,
#: defaults filled in, is in its spec file), the claims schema is made from the claims model (code),
#: and the audit reads the claims and questions files from ``config/``, as inputs of its rule
DATA_LOADERS = ("PackageLoader",)
#: a registry's lazy entry, ``"module:attribute"`` (``vhct.registry``): an import of that module
#: wherever the string stands, the module absolute (``vhct.…``) or relative (``.tree``)
_LAZY_TARGET = re.compile(r"(?:vhct(?:\.\w+)*|\.+\w*(?:\.\w+)*):\w+")


def module_file(module: str, root: Path = PACKAGE_ROOT) -> Path | None:
    """The file of the package's ``module`` under ``root`` (a package's ``__init__.py``), or None."""
    parts = module.split(".")
    if parts[0] != PACKAGE:
        return None
    base = root.joinpath(*parts[1:])
    for path in (base / "__init__.py", base.with_suffix(".py")):
        if path.is_file():
            return path
    return None


def _absolute(module: str, level: int, name: str | None) -> str:
    """The absolute name of an import of ``name`` ``level`` packages up from ``module``'s."""
    if level == 0:
        return name or ""
    parts = module.split(".")
    base = parts[: len(parts) - level]
    return ".".join([*base, name] if name else base)


@functools.cache
def module_imports(module: str, root: Path = PACKAGE_ROOT) -> tuple[frozenset[str], frozenset[Path]]:
    """The package's modules that ``module`` imports and the data folders it loads, read from its
    source (``ast``; nothing is imported). Imports: every ``import`` and ``from … import`` anywhere
    in it (in functions too), absolute or relative; a name imported from a package that is one of its
    modules; every lazy registry entry (:data:`_LAZY_TARGET`); and the packages that hold each
    (Python runs their ``__init__.py``). Data folders: those its calls of :data:`DATA_LOADERS` name."""
    path = module_file(module, root)
    if path is None:
        raise FileNotFoundError(f"module {module} not found under {root}")
    # relative imports count up from the package that holds the module (a package holds itself)
    here = f"{module}.__init__" if path.name == "__init__.py" else module
    named: set[str] = set()
    folders: set[Path] = set()
    for node in ast.walk(ast.parse(path.read_bytes(), filename=str(path))):
        if isinstance(node, ast.Import):
            named.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(here, node.level, node.module)
            named.add(base)
            named.update(f"{base}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if _LAZY_TARGET.fullmatch(node.value):
                target = node.value.partition(":")[0]
                level = len(target) - len(target.lstrip("."))
                named.add(_absolute(here, level, target[level:] or None))
        elif isinstance(node, ast.Call) and _called(node) in DATA_LOADERS:
            package, folder = (a.value if isinstance(a, ast.Constant) else None for a in node.args[:2])
            holder = module_file(str(package), root)
            if holder is None or not isinstance(folder, str):
                raise ValueError(f"{path}: {_called(node)} of a folder not named by two literal strings")
            folders.add(holder.parent / folder)
    found = {
        prefix
        for parts in (name.split(".") for name in named)
        for prefix in (".".join(parts[:i]) for i in range(1, len(parts) + 1))
        if module_file(prefix, root) is not None
    }
    return frozenset(found), frozenset(folders)


def _called(call: ast.Call) -> str | None:
    """The name a call calls (``f(…)``, ``m.f(…)``: ``f``), or None."""
    func = call.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None


def import_closure(entries: tuple[str, ...], root: Path = PACKAGE_ROOT) -> set[str]:
    """Every module of the package that importing ``entries`` may run: them, and transitively what
    each imports (:func:`module_imports`)."""
    seen: set[str] = set()
    todo = list(entries)
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo.extend(module_imports(module, root)[0] - seen)
    return seen


def layer_files(layer: str, root: Path = PACKAGE_ROOT) -> list[Path]:
    """The files whose bytes make ``layer``'s source hash, sorted: the modules of its entries' import
    closure (:data:`LAYER_ENTRIES`) and the files of the data folders they load."""
    if layer not in LAYER_ENTRIES:
        raise ValueError(f"no source layer {layer!r}: one of {', '.join(LAYER_ENTRIES)}")
    files: set[Path] = set()
    for module in import_closure(LAYER_ENTRIES[layer], root):
        files.add(module_file(module, root))
        for folder in module_imports(module, root)[1]:
            files.update(p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    return sorted(files)


@functools.cache
def source_hash(layer: str, root: Path = PACKAGE_ROOT) -> str:
    """The sha256 of the package source that shapes the outputs of ``layer`` (a key of
    :data:`LAYER_ENTRIES`): every file of :func:`layer_files`, its path (relative to ``root``) and
    bytes, in sorted order. Computed once per process (a run job, the rules' parsing), which is also
    the code that process runs; a test edits a copy of the package (another ``root``)."""
    digest = hashlib.sha256()
    for path in layer_files(layer, root):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


@functools.cache
def run_source(name: str) -> str:
    """The source hash a run of the algorithm ``name`` records and is checked against: :func:`source_hash` of
    the run code, and for an algorithm whose code lies outside the package (a plugin, or a class
    registered in code from elsewhere) the bytes of those files too
    (``vhct.optimizers.registry.algorithm_sources``), so an edit of a plugin reruns its runs."""
    from vhct.optimizers.registry import algorithm, algorithm_sources

    if algorithm(name).target.startswith((".", "vhct.")):
        return source_hash("run")
    digest = hashlib.sha256(source_hash("run").encode())
    for path in algorithm_sources(name):
        if not path.is_relative_to(PACKAGE_ROOT):
            digest.update(str(path).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()
