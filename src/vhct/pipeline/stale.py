"""What the aggregate, figure, caption and audit jobs are asked now: one typed job spec per rule
family, written as a spec file the job takes as input, so a result is current or it is rerun.

When the rules are read (main process only), each of these jobs gets a small JSON spec file under
``results/.specs/`` (the config's results folder, ``vhct.pipeline.layout``) of what it is asked: a
:class:`JobSpec` of its family, with the source hash of its own code (``vhct.pipeline.versions``:
every module the job imports) and the package versions. A spec file is rewritten only when its
content changes (``vhct.pipeline.files.write_if_changed``) and is an input of its job, so
Snakemake's modification-time check, which no ``--rerun-triggers`` turns off and which needs
nothing of ``.snakemake/``, reruns exactly the jobs whose spec changed and everything downstream.
The job reads it back as the same class (:func:`read_spec`), its one channel for its parameters.

Runs need no spec file: a run's batch file is named by what it is (``vhct.pipeline.store``), so
what is asked of it now is in its path.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict

from vhct.pipeline.files import write_if_changed
from vhct.pipeline.specs import FigureSpec, SettingInfo
from vhct.pipeline.versions import package_versions, source_hash


class JobSpec(BaseModel):
    """What a job is asked: the source hash of its code, by layer, and the package versions (a
    changed install reruns it). The audit's figures (forest, summary) are asked nothing else."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    source: dict[str, str]
    versions: dict[str, str | None] | None = None


class AggregateJob(JobSpec):
    """An aggregate job's spec: the settings it aggregates and, per setting, their batch files."""

    info: dict[str, SettingInfo]
    run_paths: dict[str, list[str]]


class FigureJob(JobSpec):
    """A figure job's spec: its declaration (the settings it draws only), the curve aggregates it
    draws (experiment -> setting -> file) and every algorithm's style (a plugin's moves when another
    is installed)."""

    figure: FigureSpec
    curves: dict[str, dict[str, str]]
    styles: dict[str, Any]


class CaptionJob(JobSpec):
    """A figure caption's spec: the caption's text."""

    caption: str


class AuditJob(JobSpec):
    """The audit's spec: the whole config, its files' sha256 (in the order read), the analysis plan's
    sha256 (a confirmatory config's), and the batch files and final aggregates it reads."""

    config: dict[str, Any]
    configfiles: dict[str, str]
    plan: str | None
    run_paths: dict[str, dict[str, list[str]]]
    final_paths: dict[str, str]


Spec = TypeVar("Spec", bound=JobSpec)


def aggregate_spec(info: Mapping[str, SettingInfo], run_paths: Mapping[str, Sequence[str]]) -> AggregateJob:
    """An aggregate job's spec: the settings it aggregates (``info``) and their batch files, with the
    aggregation code's hash. One builder for both aggregate jobs: an experiment's (every setting) and
    one setting's (``info`` and ``run_paths`` of that setting alone)."""
    return AggregateJob(
        info=dict(info),
        run_paths={setting: list(paths) for setting, paths in run_paths.items()},
        source={"aggregate": source_hash("aggregate")},
        versions=package_versions(),
    )


def write_spec(path: Path | str, spec: JobSpec) -> bool:
    """Write a job's spec file (compact JSON), only when its content changed; whether it wrote."""
    return write_if_changed(path, spec.model_dump_json() + "\n")


def read_spec(path: Path | str, kind: type[Spec]) -> Spec:
    """A job's spec, as :func:`write_spec` wrote it, validated as ``kind``."""
    return kind.model_validate_json(Path(path).read_text(encoding="utf-8"))
