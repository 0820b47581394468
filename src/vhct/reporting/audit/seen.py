"""Seeds an earlier result has used: every version of the shipped audit in the repository's history.

A confirmatory run must be decided on seeds nobody has looked at. The findings shipped before
(``docs/findings/audit.json``, committed by ``make findings``) ran and audited seeds of their own; a
later plan that reused them would decide its verdicts on data already seen. This module reads every
committed version of that file (``git log`` and ``git show``; any audit format: the seeds of each
experiment and setting in its context, of its design, and the per-seed values of its comparisons)
and says, per experiment, which seeds were used and in which commit first. The analysis plan
(``vhct.reporting.audit.plan``) starts its confirmatory seeds after all of them and refuses a plan
whose seeds overlap them; the design history may read the same record.

    versions = shipped_versions(repo)       # every committed version, oldest first
    used = seen_seeds(repo)                  # experiment -> seed -> the first commit that used it
    clash = first_overlap(used, planned)     # a planned seed used before, or None
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vhct.pipeline.config.errors import ConfigError

#: the shipped audit, relative to the repository's root (``make findings`` writes and commits it)
SHIPPED_AUDIT = "docs/findings/audit.json"
#: the per-seed sides of a comparison record (a contrast's second pair reads the second experiment)
_SIDES = {"values_a": 0, "values_b": 0, "values_a2": 1, "values_b2": 1}


class SeenError(ConfigError):
    """A committed version of the shipped audit that cannot be read: one line naming the commit."""


@dataclass(frozen=True)
class ShippedVersion:
    """One committed version of the shipped audit and the seeds it used per experiment."""

    commit: str
    date: str
    subject: str
    seeds: dict[str, list[int]]

    @property
    def largest(self) -> int:
        """Its largest seed (-1 if none)."""
        return max((s for seeds in self.seeds.values() for s in seeds), default=-1)


@dataclass(frozen=True)
class Overlap:
    """A planned seed that a shipped audit used before."""

    experiment: str
    seed: int
    commit: str

    def text(self, path: str = SHIPPED_AUDIT) -> str:
        return (
            f"confirmatory seed {self.seed} of {self.experiment} was used by the shipped audit of commit "
            f"{self.commit[:12]} ({path})"
        )


def audit_seeds(data: Any) -> dict[str, list[int]]:
    """The seeds an audit JSON (any format) used, per experiment: its context's experiments and their
    settings, its design's confirmatory seeds, and every per-seed value of its comparisons (a pair
    ``first / second`` counts for both)."""
    found: dict[str, set[int]] = {}

    def add(experiment: Any, seeds: Iterable[Any]) -> None:
        if isinstance(experiment, str):
            found.setdefault(experiment, set()).update(int(s) for s in seeds)

    def walk(node: Any) -> None:
        if isinstance(node, Mapping):
            experiment = node.get("experiment")
            if isinstance(experiment, str):
                parts = [e.strip() for e in experiment.split(" / ")]
                for side, which in _SIDES.items():
                    values = node.get(side)
                    if isinstance(values, Mapping) and values:
                        add(parts[min(which, len(parts) - 1)], values)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    context = data.get("context") if isinstance(data, Mapping) else None
    if isinstance(context, Mapping):
        for name, info in (context.get("experiments") or {}).items():
            if isinstance(info, Mapping):
                add(name, info.get("seeds") or [])
                for setting in (info.get("settings") or {}).values():
                    if isinstance(setting, Mapping):
                        add(name, setting.get("seeds") or [])
        design = context.get("design")
        if isinstance(design, Mapping):
            for name, by_setting in (design.get("confirmatory_seeds") or {}).items():
                for seeds in by_setting.values():
                    add(name, seeds)
    walk(data)
    return {name: sorted(seeds) for name, seeds in sorted(found.items())}


def _git(repo: Path, *args: str) -> str | None:
    """A git command's output in ``repo``; None where it is not a git repository (or git is absent)."""
    try:
        done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=False)
    except OSError:
        return None
    return done.stdout if done.returncode == 0 else None


def shipped_versions(repo: Path | str = ".", path: str = SHIPPED_AUDIT) -> list[ShippedVersion]:
    """Every committed version of the shipped audit (``path``, from the repository's root), oldest
    first, with its seeds; none outside a git repository. An unreadable version is a SeenError."""
    root = _git(Path(repo), "rev-parse", "--show-toplevel")
    if root is None:
        return []
    top = Path(root.strip())
    log = _git(top, "log", "--format=%H%x09%aI%x09%s", "--", path) or ""
    out = []
    for line in reversed(log.splitlines()):
        commit, date, subject = line.split("\t", 2)
        text = _git(top, "show", f"{commit}:{path}")
        if text is None:  # the commit deleted the file
            continue
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise SeenError(f"{path} at commit {commit[:12]} is not JSON ({exc})") from None
        out.append(ShippedVersion(commit, date, subject, audit_seeds(data)))
    return out


def seen_seeds(repo: Path | str = ".", path: str = SHIPPED_AUDIT) -> dict[str, dict[int, str]]:
    """Experiment -> seed -> the first commit whose shipped audit used it (every version of ``path``)."""
    return seen_in(shipped_versions(repo, path))


def seen_in(versions: Iterable[ShippedVersion]) -> dict[str, dict[int, str]]:
    """Experiment -> seed -> the first of ``versions`` (oldest first) that used it."""
    seen: dict[str, dict[int, str]] = {}
    for version in versions:
        for experiment, seeds in version.seeds.items():
            for seed in seeds:
                seen.setdefault(experiment, {}).setdefault(seed, version.commit)
    return seen


def largest_seen(seen: Mapping[str, Mapping[int, str]]) -> int:
    """The largest seed any shipped audit used (-1 if none)."""
    return max((s for seeds in seen.values() for s in seeds), default=-1)


def first_overlap(
    seen: Mapping[str, Mapping[int, str]], planned: Mapping[str, Iterable[int]]
) -> Overlap | None:
    """The first planned seed (``planned``: experiment -> seeds) a shipped audit used, or None."""
    for experiment in sorted(planned):
        used = seen.get(experiment, {})
        for seed in sorted(planned[experiment]):
            if seed in used:
                return Overlap(experiment, seed, used[seed])
    return None
