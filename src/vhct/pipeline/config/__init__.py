"""Pipeline configuration: read (``loading``), validated into one typed model (``model``,
``sections``, ``checks``), planned into jobs (``planning``), checked from the command line
(``python -m vhct.pipeline.config FILE``, ``__main__``).

    cfg, files = load(["config/tiny.yaml"])        # a Config; errors name file, line and key
    cfg.run_jobs(); cfg.run_spec("garland", "POO", 0); cfg.run_horizon("garland", "BO")

Every reader reads the model's attributes; a job handed Snakemake's plain ``config`` dict turns it
back into the model once (:func:`model`).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from vhct.pipeline.config.checks import RUN_BASE_MB, TABLE_BYTES_PER_VALUE, lazy_objective
from vhct.pipeline.config.cli import main
from vhct.pipeline.config.errors import ConfigError
from vhct.pipeline.config.loading import (
    BASE_KEY,
    DEFAULT_CONFIG,
    MAX_EXPANDED_NODES,
    OUTPUT_KEY,
    UniqueKeyLoader,
    base_chain,
    key_line,
    load,
    located,
    merge,
    merged_files,
    output_folder,
    read_config_file,
    validated,
)
from vhct.pipeline.config.model import MAX_RUNS, Config
from vhct.pipeline.config.owner import OWNER_ROOT, check_owner, claim_owner
from vhct.pipeline.config.planning import DEFAULT_RESOURCES, RunBatch
from vhct.pipeline.config.schema import SCHEMA_PATH, json_schema
from vhct.pipeline.config.sections import MAX_HORIZON, MAX_SEEDS, NAME_MAX
from vhct.pipeline.layout import OUTPUT_ROOTS

__all__ = [
    "BASE_KEY",
    "DEFAULT_CONFIG",
    "DEFAULT_RESOURCES",
    "MAX_EXPANDED_NODES",
    "MAX_HORIZON",
    "MAX_RUNS",
    "MAX_SEEDS",
    "NAME_MAX",
    "OUTPUT_KEY",
    "OUTPUT_ROOTS",
    "OWNER_ROOT",
    "RUN_BASE_MB",
    "SCHEMA_PATH",
    "TABLE_BYTES_PER_VALUE",
    "Config",
    "ConfigError",
    "RunBatch",
    "UniqueKeyLoader",
    "base_chain",
    "check_owner",
    "claim_owner",
    "json_schema",
    "key_line",
    "lazy_objective",
    "load",
    "main",
    "located",
    "merge",
    "merged_files",
    "model",
    "output_folder",
    "read_config_file",
    "validate_config",
    "validated",
]


def validate_config(config: dict[str, Any], files: Sequence[Path | str] = ()) -> Config:
    """Validate a plain dict in full (defaults filled in place); errors located in ``files``."""
    return validated(config, files)


def model(config: Mapping[str, Any]) -> Config:
    """The model of a job's plain config dict (``snakemake.config``, the loaded model's ``source``
    passed to a job's process), validated without building objectives and optimizers."""
    return validated(copy.deepcopy(dict(config)), deep=False)
