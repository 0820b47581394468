"""A wheel built from the checkout works on its own: it ships its schemas and claims file.

The wheel is installed into a throwaway virtual environment (with the few packages config
validation and the claims loader import, from the package index), and used from a directory
outside the checkout: the config schema and the default claims file must come from the
installed package (``importlib.resources``), not from the repository.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tomllib
import venv
from pathlib import Path

import pytest
from support import REPO, TINY

#: what a build does not need from the checkout's top level (large, or left by earlier builds and
#: runs); only there: a package may be named like one of them (``vhct.pipeline.data``)
NOT_SOURCE = (".git", ".venv", "build", ".snakemake", "results", "logs", "data", "figures")
#: what a build does not need from any folder (left by earlier builds and tools)
NOT_SOURCE_ANYWHERE = ("*.egg-info", ".*cache", "__pycache__")


def not_source(folder: str, names: list[str]) -> set[str]:
    """The names ``shutil.copytree`` leaves out of ``folder``: NOT_SOURCE at the top, the rest anywhere."""
    patterns = NOT_SOURCE_ANYWHERE + (NOT_SOURCE if Path(folder) == REPO else ())
    return set(shutil.ignore_patterns(*patterns)(folder, names))


#: what validating a config and loading the claims import, beyond the core's numpy
LIGHT_PIPELINE = ["pyyaml", "jsonschema", "pandas", "scipy", "pydantic", "jinja2"]

CHECK = """
import json, sys
import vhct
from vhct.pipeline.config import SCHEMA_PATH, load
from vhct.reporting.audit.claims import CLAIMS_PATH, load_claims

config, _ = load([sys.argv[1]])
claims = load_claims()
print(json.dumps({
    "package": vhct.__file__,
    "schema": str(SCHEMA_PATH),
    "claims_file": str(CLAIMS_PATH),
    "experiments": sorted(config.experiments),
    "claims": len(claims.claims),
}))
"""


def run(cmd: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=False)


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """Python of a fresh venv holding the wheel of this checkout (and the light pipeline packages)."""
    root = tmp_path_factory.mktemp("wheel")
    # build from a clean copy: a stale build/ or *.egg-info in the checkout could add old files or
    # hide missing package data
    source = root / "source"
    shutil.copytree(REPO, source, symlinks=True, ignore=not_source)
    built = run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", str(root)]
        + [str(source)],
        root,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    (wheel,) = root.glob("vhct-*.whl")
    (root / "wheel.txt").write_text(str(wheel))
    env = root / "venv"
    try:
        venv.create(env, with_pip=True)
    except Exception as exc:  # noqa: BLE001 (no ensurepip on this machine)
        pytest.skip(f"cannot create a virtual environment: {exc}")
    python = env / "bin" / "python"
    got = run([str(python), "-m", "pip", "install", "--quiet", str(wheel), *LIGHT_PIPELINE], root)
    if got.returncode != 0 and "No matching distribution" in got.stderr:
        pytest.skip(f"package index unreachable: {got.stderr[-300:]}")
    assert got.returncode == 0, got.stdout + got.stderr
    return python


def test_wheel_ships_the_schemas_and_the_claims_file(installed, tmp_path):
    out = run([str(installed), "-c", CHECK, str(TINY)], tmp_path)
    assert out.returncode == 0, out.stderr
    found = json.loads(out.stdout)
    site = str(installed.parents[1])
    for key in ("package", "schema", "claims_file"):
        assert found[key].startswith(site), (key, found[key])
        assert not found[key].startswith(str(REPO)), (key, found[key])
    assert found["schema"].endswith("vhct/resources/config.schema.yaml")
    assert found["claims_file"].endswith("vhct/resources/claims.yaml")
    assert "garland" in found["experiments"] and found["claims"] > 5


def test_wheel_without_the_bo_extra_names_it(installed, tmp_path):
    code = "import vhct; vhct.make_optimizer('BO', [[0, 1]], horizon=10, seed=0)"
    out = run([str(installed), "-c", code], tmp_path)
    assert out.returncode != 0
    assert "MissingExtraError" in out.stderr and "pip install 'vhct[bo]'" in out.stderr


def test_wheel_metadata_core_is_light_and_resources_ship(installed):
    import zipfile

    wheel = Path((installed.parents[2] / "wheel.txt").read_text())
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        (meta,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        lines = archive.read(meta).decode().splitlines()
    core = sorted(
        x.split(":", 1)[1].strip() for x in lines if x.startswith("Requires-Dist:") and "extra ==" not in x
    )
    assert [c.split(">")[0].split("=")[0] for c in core] == ["numpy", "scipy"]
    extras = sorted(x.split(":", 1)[1].strip() for x in lines if x.startswith("Provides-Extra:"))
    declared = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert extras == sorted(declared["optional-dependencies"])  # every extra the project declares
    for name in ("config.schema.yaml", "claims.schema.yaml", "claims.yaml"):
        assert f"vhct/resources/{name}" in names
    for name in ("audit.j2", "findings.j2", "headline.j2"):  # the renderer's prose
        assert f"vhct/reporting/templates/{name}" in names
    for name in ("article.typ.j2", "remarks.typ.j2"):  # the article's prose
        assert f"vhct/article/templates/{name}" in names
