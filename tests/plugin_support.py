"""For the tests of plugins (entry points): an installed distribution written by hand, and the
docs' example plugin package.

What ``pip install`` leaves on ``sys.path``, reduced to what ``importlib.metadata`` reads: a
``<name>-<version>.dist-info`` folder with ``METADATA`` and ``entry_points.txt``, and the modules
beside it. A folder of them on ``PYTHONPATH`` (or ``sys.path``) is an installed package, no pip needed.
"""

from __future__ import annotations

from pathlib import Path

from support import REPO

from vhct.optimizers.registry import PLUGIN_GROUP

#: the section of docs/library.md whose code blocks are the example plugin package and its config
DOCS_SECTION = "## Adding an algorithm"


def docs_block(language: str) -> str:
    """The one ``language`` code block of the docs' plugin section (toml: the package's
    pyproject.toml, python: its module, yaml: the config that runs it)."""
    text = (REPO / "docs" / "library.md").read_text(encoding="utf-8")
    section = text[text.index(DOCS_SECTION) :].split("\n## ", 1)[0]
    blocks = [b.split("```", 1)[0] for b in section.split(f"```{language}\n")[1:]]
    assert len(blocks) == 1, f"{DOCS_SECTION!r} has {len(blocks)} {language} blocks"
    return blocks[0]


def write_plugin(
    root: Path,
    points: dict[str, str],
    dist: str = "vhct-mine",
    version: str = "1.0",
    group: str = PLUGIN_GROUP,
    modules: dict[str, str] | None = None,
) -> Path:
    """Write an installed distribution into ``root``: its dist-info (entry points ``points`` of
    ``group``) and the ``modules`` (name -> code) beside it; returns ``root``."""
    info = root / f"{dist.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
    lines = [f"[{group}]", *(f"{name} = {target}" for name, target in points.items())]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n")
    for module, code in (modules or {}).items():
        (root / f"{module}.py").write_text(code)
    return root
