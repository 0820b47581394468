"""An installed distribution written by hand, for the tests of plugins (entry points).

What ``pip install`` leaves on ``sys.path``, reduced to what ``importlib.metadata`` reads: a
``<name>-<version>.dist-info`` folder with ``METADATA`` and ``entry_points.txt``, and the modules
beside it. A folder of them on ``PYTHONPATH`` (or ``sys.path``) is an installed package, no pip needed.
"""

from __future__ import annotations

from pathlib import Path

from vhct.optimizers.registry import PLUGIN_GROUP


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
