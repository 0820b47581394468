"""Seeds an earlier result has used: every version of the shipped audit in the repository's history.

A confirmatory run must be decided on seeds nobody has looked at. The findings shipped before
(``docs/findings/audit.json``, committed by ``make findings``) ran and audited seeds of their own; a
later plan that reused them would decide its verdicts on data already seen. This module reads every
committed version of that file (through :mod:`vhct.reporting.gitlog`; any audit format: the seeds of
each experiment and setting in its context, of its design, and the per-seed values of its records)
and says, per experiment, which seeds were used and in which commit first. The analysis plan
(``vhct.reporting.audit.plan``) starts its confirmatory seeds after all of them and refuses a plan
whose seeds overlap them; the design history (``vhct.reporting.history``) reads each shipped
version's seeds with :func:`audit_seeds`.

    versions = shipped_versions(repo)       # every committed version, oldest first
    used = seen_seeds(repo)                  # experiment -> seed -> the first commit that used it
    clash = first_overlap(used, planned)     # a planned seed used before, or None
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from vhct.pipeline.config.errors import ConfigError
from vhct.reporting import gitlog

#: the shipped audit, relative to the repository's root (``make findings`` writes and commits it)
SHIPPED_AUDIT = "docs/findings/audit.json"
#: the per-seed sides of a comparison record: the key of the setting each names (``A``, or ``A on
#: second`` across a pair) and the experiment of the pair it reads otherwise (a contrast's second pair
#: reads the second)
_SIDES = {"values_a": ("a", 0), "values_b": ("b", 0), "values_a2": (None, 1), "values_b2": (None, 1)}


class SeenError(ConfigError):
    """A committed version of the shipped audit that cannot be read: one line naming the commit."""


@dataclass(frozen=True)
class ShippedVersion:
    """One committed version of the shipped audit and the seeds it used per experiment."""

    commit: str
    date: datetime
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
    """The seeds an audit JSON (any format) used, per experiment in the order first met: its context's
    experiments and their settings, its design's confirmatory seeds, the keys of any ``values_by_seed``
    under a record naming its experiment, and every per-seed value of its comparisons. A comparison of
    a pair ``first / second`` gives a side to the experiment its setting names (``A on second``), else
    ``values_a``/``values_b`` to the first and a contrast's ``values_a2``/``values_b2`` to the second."""
    found: dict[str, set[int]] = {}

    def add(experiment: Any, seeds: Any) -> None:
        if isinstance(experiment, str):
            found.setdefault(experiment, set()).update(seed_set(seeds))

    def walk(node: Any, experiment: str | None) -> None:
        if isinstance(node, Mapping):
            name = node.get("experiment")
            experiment = name if isinstance(name, str) else experiment
            if isinstance(name, str):
                parts = [e.strip() for e in name.split(" / ")]
                for side, (label, which) in _SIDES.items():
                    values = node.get(side)
                    if isinstance(values, Mapping) and values:
                        named = str(node.get(label) if label else "").rpartition(" on ")[2]
                        add(named if named in parts else parts[min(which, len(parts) - 1)], values)
            for key, value in node.items():
                if key == "values_by_seed":
                    add(experiment, value)
                else:
                    walk(value, experiment)
        elif isinstance(node, list):
            for value in node:
                walk(value, experiment)

    context = data.get("context") if isinstance(data, Mapping) else None
    if isinstance(context, Mapping):
        experiments = context.get("experiments")
        for name, info in experiments.items() if isinstance(experiments, Mapping) else ():
            if isinstance(info, Mapping):
                add(str(name), info.get("seeds"))
                settings = info.get("settings")
                for setting in settings.values() if isinstance(settings, Mapping) else ():
                    add(str(name), setting.get("seeds") if isinstance(setting, Mapping) else None)
        design = context.get("design")
        confirmatory = design.get("confirmatory_seeds") if isinstance(design, Mapping) else None
        for name, by_setting in confirmatory.items() if isinstance(confirmatory, Mapping) else ():
            for seeds in by_setting.values() if isinstance(by_setting, Mapping) else ():
                add(name, seeds)
    walk(data, None)
    return {name: sorted(seeds) for name, seeds in found.items()}


def seed_set(values: Any) -> set[int]:
    """The integers of a list of seeds (or of a mapping's keys: per-seed values); anything else none."""
    if not isinstance(values, list | tuple | Mapping):
        return set()
    out = set()
    for value in values:
        try:
            out.add(int(value))
        except (TypeError, ValueError):
            continue
    return out


def shipped_versions(repo: Path | str = ".", path: str = SHIPPED_AUDIT) -> list[ShippedVersion]:
    """Every committed version of the shipped audit (``path``, from the repository's root), oldest
    first, with its seeds; none outside a git repository. An unreadable version is a SeenError."""
    try:
        top = gitlog.git(repo, "rev-parse", "--show-toplevel").decode().strip()
        versions = gitlog.changes(top, path)
        texts = gitlog.blobs(top, [f"{v.commit}:{path}" for v in versions])
    except gitlog.GitError:
        return []
    out = []
    for version in reversed(versions):
        text = texts.get(f"{version.commit}:{path}")
        if text is None:  # the commit deleted the file
            continue
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise SeenError(f"{path} at commit {version.commit[:12]} is not JSON ({exc})") from None
        seeds = audit_seeds(data)
        out.append(ShippedVersion(version.commit, version.date, version.subject, seeds))
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
