"""The venv is the lock's: every package of ``requirements.lock`` installed at exactly its version.

``make venv`` (and so CI) installs ``-r requirements.lock -e .[all,test]``; ``make lock`` regenerates
the lock from pyproject.toml's ranges, which stay for library users. These tests fail when the venv
drifts from the lock (rebuild it: ``make venv``) or the lock from pyproject.toml (``make lock``).
"""

from __future__ import annotations

import re
import tomllib
from importlib import metadata

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version
from support import REPO

LOCK = REPO / "requirements.lock"
PYPROJECT = REPO / "pyproject.toml"
#: the extras `make venv` installs
EXTRAS = ("all", "test")
PIN = re.compile(r"(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)==(?P<version>[^\s;#]+)\s*(#.*)?")


def pins(text: str, source: str = str(LOCK)) -> dict[str, str]:
    """Canonical name -> version of every ``name==version`` line; anything else (an unpinned or
    URL requirement, an option) is an error naming its line, comments and blank lines aside."""
    found: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        match = PIN.fullmatch(stripped)
        if match is None:
            raise ValueError(f"{source}:{number}: not an exact pin (name==version): {stripped!r}")
        name = canonicalize_name(match["name"])
        if name in found:
            raise ValueError(f"{source}:{number}: {name} is pinned twice")
        found[name] = match["version"]
    return found


def project_requirements(extras: tuple[str, ...] = EXTRAS) -> list[Requirement]:
    """The requirements of ``.[extras]``: the core dependencies and each extra's, the project's
    own extras that an extra names (``all = ["vhct[bo,...]"]``) expanded."""
    project = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]
    own = canonicalize_name(project["name"])
    optional = project["optional-dependencies"]
    found = [Requirement(r) for r in project["dependencies"]]
    todo, seen = list(extras), set()
    while todo:
        extra = todo.pop()
        if extra in seen:
            continue
        seen.add(extra)
        for text in optional[extra]:
            requirement = Requirement(text)
            if canonicalize_name(requirement.name) == own:
                todo += sorted(requirement.extras)
            else:
                found.append(requirement)
    return found


@pytest.fixture(scope="module")
def locked() -> dict[str, str]:
    return pins(LOCK.read_text(encoding="utf-8"))


def differences(locked: dict[str, str]) -> list[str]:
    """Every locked package that is not installed at exactly its locked version, with both versions."""
    wrong = []
    for name, version in locked.items():
        try:
            installed = metadata.version(name)
        except metadata.PackageNotFoundError:
            wrong.append(f"{name}: not installed (lock: {version})")
            continue
        if Version(installed) != Version(version):
            wrong.append(f"{name}: {installed} installed, {version} locked")
    return wrong


def test_every_locked_package_is_installed_at_its_locked_version(locked):
    wrong = differences(locked)
    assert not wrong, "this environment differs from requirements.lock (rebuild it: make venv):\n" + (
        "\n".join(wrong)
    )


def test_a_different_or_missing_package_is_reported():
    numpy = metadata.version("numpy")
    assert differences({"numpy": numpy}) == []
    assert differences({"numpy": "0.0.1", "no-such-package-vhct": "1.0"}) == [
        f"numpy: {numpy} installed, 0.0.1 locked",
        "no-such-package-vhct: not installed (lock: 1.0)",
    ]


def test_the_lock_pins_every_requirement_of_the_project_within_its_range(locked):
    missing, outside = [], []
    for requirement in project_requirements():
        if requirement.marker is not None and not requirement.marker.evaluate():
            continue
        name = canonicalize_name(requirement.name)
        if name not in locked:
            missing.append(str(requirement))
        elif not requirement.specifier.contains(locked[name], prereleases=True):
            outside.append(f"{requirement} (lock: {locked[name]})")
    assert not missing, f"requirements of .[all,test] missing from {LOCK.name} (run make lock): {missing}"
    assert not outside, f"locked versions outside pyproject.toml's ranges (run make lock): {outside}"


def test_the_lock_pins_every_dependency_of_what_it_pins(locked):
    """Closed under dependencies: nothing the locked packages need is left to the resolver."""
    unpinned = set()
    for name in locked:
        for text in metadata.requires(name) or []:
            requirement = Requirement(text)
            marker = requirement.marker
            if marker is not None and not marker.evaluate({"extra": ""}):
                continue  # an extra's dependency, or another platform's
            if canonicalize_name(requirement.name) not in locked:
                unpinned.add(f"{requirement.name} (needed by {name})")
    assert not unpinned, f"dependencies missing from {LOCK.name} (run make lock): {sorted(unpinned)}"


def test_a_line_that_is_not_an_exact_pin_is_refused_with_its_line():
    assert pins("# header\nNumPy==2.0.1  # via x\n\n    # via y\ntorch==2.14.1\n") == {
        "numpy": "2.0.1",
        "torch": "2.14.1",
    }
    with pytest.raises(ValueError, match=r"lock:2: not an exact pin .*'scipy>=1.11'"):
        pins("numpy==2.0.1\nscipy>=1.11\n", "lock")
    with pytest.raises(ValueError, match="lock:2: numpy is pinned twice"):
        pins("numpy==2.0.1\nNumPy==2.0.2\n", "lock")


def test_the_extras_are_expanded_through_the_projects_own_name():
    names = {canonicalize_name(r.name) for r in project_requirements()}
    assert {"numpy", "gpyopt", "torch", "snakemake", "optuna", "pytest"} <= names
    assert "vhct" not in names
