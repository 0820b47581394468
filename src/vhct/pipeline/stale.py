"""What the aggregate, figure and audit jobs are asked now, written as spec files the jobs take as
input, so a result is current or it is rerun.

When the rules are read (main process only), each of these jobs gets a small JSON spec file under
``results/.specs/`` (the config's results folder) of what it is asked: its params, the batch files
of the run store it reads and the source hash of its own code (``vhct.pipeline.versions.source_hash``:
every module the job imports). A spec file is rewritten only when its content changes
(``vhct.pipeline.files.write_if_changed``) and is an input of its job, so Snakemake's
modification-time check, which no ``--rerun-triggers`` turns off and which needs nothing of
``.snakemake/``, reruns exactly the jobs whose spec changed and everything downstream. The job
reads its spec from that file (:func:`read_spec`), its only channel for its parameters.

Runs need no spec file: a run's batch file is named by what it is (``vhct.pipeline.store``), so
what is asked of it now is in its path.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from vhct.pipeline.files import write_if_changed
from vhct.pipeline.specs import SettingInfo
from vhct.pipeline.versions import package_versions, source_hash

#: the folder of the spec files, in the config's results folder (results/.specs/ for the default
#: config, results/<name>/.specs/ for config/<name>.yaml): each config's specs its own
SPEC_DIR = ".specs"


def aggregate_spec(info: Mapping[str, SettingInfo], run_paths: Mapping[str, Sequence[str]]) -> dict[str, Any]:
    """The spec of an aggregate job (plain data): the settings it aggregates (``info``) and their batch
    files, the source hash of the aggregation code and the package versions. One builder for both
    aggregate jobs: an experiment's (every setting) and one setting's (``info`` and ``run_paths`` of
    that setting alone)."""
    return {
        "info": {setting: i.model_dump(mode="json") for setting, i in info.items()},
        "run_paths": {setting: list(paths) for setting, paths in run_paths.items()},
        "source": {"aggregate": source_hash("aggregate")},
        "versions": package_versions(),
    }


def write_spec(path: Path | str, content: Mapping[str, Any]) -> bool:
    """Write the spec file of a job (compact JSON of plain data), only when its content changed;
    whether it wrote."""
    return write_if_changed(path, json.dumps(content) + "\n")


def read_spec(path: Path | str) -> dict[str, Any]:
    """A job's spec, as :func:`write_spec` wrote it."""
    return json.loads(Path(path).read_text(encoding="utf-8"))
