"""The article's inputs, read once: a folder laid out as ``docs/findings/`` (or a finished run's
results folder, which ``make findings`` copies it from), read and checked file by file against its
provenance record by the one reader (:func:`vhct.reporting.published.read_published`), and the
checkout's files it names: the citation record, the upstream reports, and the config files the run
read, taken as the record fixed them (:func:`recorded_config`), not as the checkout has them today.
Every missing, malformed or changed file is an :class:`ArticleError` in one line naming it.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from vhct.pipeline.config import Config, ConfigError, load
from vhct.pipeline.files import sha256_bytes
from vhct.pipeline.provenance import Provenance
from vhct.reporting.audit.records import Audit
from vhct.reporting.published import FindingsError, Published, read_published
from vhct.reporting.view import PAPER_CONFIG  # noqa: F401 (the paper's scale, whose cost the article estimates)

#: the checkout's files the article reads besides the input folder
CITATION = "CITATION.cff"
UPSTREAM_DIR = Path("docs") / "upstream"
#: the upstream folder's index (not a report)
INDEX = "README.md"
#: each kind of input folder (as :func:`read_published` takes it) and how the article names it
SOURCE_KINDS = {"findings": "shipped findings", "results": "results of a finished run"}


class ArticleError(FindingsError):
    """An input of the article that is missing, unreadable or not the recorded run's; the message
    names the file."""


def command(action: Callable[[], str]) -> int:
    """A command line's exit status: 0 with ``action``'s message printed, or 2 with a bad input's one
    line on stderr (nothing is written then)."""
    try:
        message = action()
    except (FindingsError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(message)
    return 0


@dataclass(frozen=True)
class Sources:
    """Every input: the published folder (audit, provenance, aggregates, curves; checked), the
    checkout's citation record and upstream reports, the config files' bytes as the run read them, and
    the sha256 of each config file as it is in the checkout today."""

    published: Published
    checkout: Path
    citation: dict[str, Any]
    upstream: list[Path]
    config_files: dict[str, bytes]
    config_sha256_now: dict[str, str | None]

    @property
    def folder(self) -> Path:
        return self.published.folder

    @property
    def audit(self) -> Audit:
        return self.published.audit

    @property
    def provenance(self) -> Provenance:
        return self.published.provenance

    @property
    def finals(self) -> dict[str, pd.DataFrame]:
        return self.published.finals

    @property
    def timings(self) -> dict[str, pd.DataFrame]:
        return self.published.timings

    def curve(self, experiment: str, setting: str) -> Path:
        """Where a setting's per-round curve aggregate is (it may be absent)."""
        return self.published.curve(experiment, setting)

    def config(self) -> Config:
        """The config the run named last (its leaf, with the bases it extends), from the files as the
        run read them; a confirmatory config's analysis plan is not read (the audit records the seeds)."""
        with tempfile.TemporaryDirectory(prefix="vhct-run-config-") as tmp:
            for name, data in self.config_files.items():
                path = Path(tmp) / name
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
            leaf = self.provenance.config_files[-1]
            try:
                cfg, _ = load([Path(tmp) / leaf], plan=False)
            except (ConfigError, OSError) as exc:
                raise ArticleError(f"{leaf} (as the run read it): cannot load it ({exc})") from exc
        return cfg


def _now(path: Path) -> bytes | None:
    return path.read_bytes() if path.is_file() else None


def recorded_config(prov: Provenance, checkout: Path) -> dict[str, bytes]:
    """Each config file the run read, with the sha256 the record holds: the checkout's copy when it
    still has that content, else the file at the run's commit (``git show``); neither is refused."""
    found = {}
    for name, want in prov.config_sha256.items():
        data = _now(checkout / name)
        if data is None or sha256_bytes(data) != want:
            data = _at_commit(checkout, prov.commit, name)
        if data is None or sha256_bytes(data) != want:
            raise ArticleError(
                f"{checkout / name}: not the config the run read (sha256 {want[:12]}...), and the run's "
                f"commit {prov.commit or '(none recorded)'} has no such file in this checkout: check it "
                f"out (`git checkout {prov.commit} -- {name}`) or give the run's checkout with --checkout"
            )
        found[name] = data
    return found


def _at_commit(checkout: Path, commit: str | None, name: str) -> bytes | None:
    if commit is None:
        return None
    try:
        done = subprocess.run(
            ["git", "-C", str(checkout), "show", f"{commit}:{name}"], capture_output=True, check=True
        )
    except (OSError, subprocess.CalledProcessError):
        return None
    return done.stdout


def read_sources(folder: Path | str, checkout: Path | str = ".", kind: str = "findings") -> Sources:
    """Read the input folder (``kind``: "findings" or "results") and the checkout's files."""
    folder, checkout = Path(folder), Path(checkout)
    published = read_published(folder, kind)
    cff = checkout / CITATION
    try:
        citation = yaml.safe_load(cff.read_text(encoding="utf-8"))
    except (OSError, ValueError, yaml.YAMLError) as exc:
        raise ArticleError(f"{cff}: cannot read the citation record ({exc})") from exc
    if not isinstance(citation, dict):
        raise ArticleError(f"{cff}: not a citation record (a YAML mapping)")
    upstream_dir = checkout / UPSTREAM_DIR
    reports = upstream_dir.glob("*.md") if upstream_dir.is_dir() else []
    upstream = sorted(p for p in reports if p.name != INDEX)
    prov = published.provenance
    configs = recorded_config(prov, checkout)
    now = {
        name: (None if (d := _now(checkout / name)) is None else sha256_bytes(d))
        for name in prov.config_sha256
    }
    return Sources(published, checkout, citation, upstream, configs, now)
