"""Pipeline configuration: read (``loading``), validated into one typed model (``model``,
``sections``, ``checks``), planned into jobs (``planning``), checked from the command line
(``python -m vhct.pipeline.config FILE``, ``__main__``).

    cfg, files = load(["config/tiny.yaml"])        # a Config; errors name file, line and key
    cfg.run_jobs(); cfg.run_spec("garland", "POO", 0); cfg.run_horizon("garland", "BO")

The functions below taking a plain config dict (``run_jobs(config)``, ``setting_cap(config, ...)``)
are thin wrappers over the model kept for readers not yet converted (the audit, the findings); new
code reads the model's attributes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from vhct.pipeline.config.checks import RUN_BASE_MB, TABLE_BYTES_PER_VALUE, lazy_objective
from vhct.pipeline.config.cli import main
from vhct.pipeline.config.errors import ConfigError
from vhct.pipeline.config.loading import (
    BASE_KEY,
    UniqueKeyLoader,
    base_chain,
    key_line,
    load,
    located,
    merge,
    merged_files,
    read_config_file,
    validated,
)
from vhct.pipeline.config.model import Config
from vhct.pipeline.config.planning import DEFAULT_RESOURCES, RunBatch, rule_safe
from vhct.pipeline.config.schema import SCHEMA_PATH, json_schema

#: the config read when no config file is given (relative to the checkout)
DEFAULT_CONFIG = Path("config") / "config.yaml"

__all__ = [
    "BASE_KEY", "DEFAULT_CONFIG", "DEFAULT_RESOURCES", "RUN_BASE_MB", "SCHEMA_PATH", "TABLE_BYTES_PER_VALUE",
    "Config", "ConfigError", "RunBatch", "UniqueKeyLoader", "base_chain", "json_schema", "key_line",
    "lazy_objective", "load", "main", "load_config", "located", "merge", "merged_files", "model",
    "pipeline_config", "read_config_file", "rule_safe", "validate_config", "validated",
]  # fmt: skip


def pipeline_config(
    files: Sequence[Path | str], overrides: Mapping[str, Any] | None = None
) -> tuple[dict[str, Any], list[Path]]:
    """:func:`load`, as the plain dict (defaults filled in) and the files read."""
    cfg, paths = load(files, overrides)
    return cfg.source, paths


def load_config(path: Path | str) -> dict[str, Any]:
    """Read a YAML config (and the files it extends), validated, as the plain dict."""
    return pipeline_config([path])[0]


def validate_config(config: dict[str, Any], files: Sequence[Path | str] = ()) -> Config:
    """Validate a plain dict in full (defaults filled in place); errors located in ``files``."""
    return validated(config, files)


# ------------------------------------------------------------ wrappers over the model (plain dicts)

_CACHE: dict[int, tuple[dict[str, Any], Config]] = {}


def model(config: Mapping[str, Any] | Config) -> Config:
    """The model of a config given as the model or as a plain dict (validated without building
    objectives and optimizers; the same dict, unchanged, gives the same model)."""
    if isinstance(config, Config):
        return config
    import copy

    hit = _CACHE.get(id(config))
    if hit is not None and hit[0] == config:
        return hit[1]
    snapshot = copy.deepcopy(dict(config))
    cfg = validated(copy.deepcopy(snapshot), deep=False)
    _CACHE.clear()  # one config at a time: a reader converts one
    _CACHE[id(config)] = (snapshot, cfg)
    return cfg


#: the model's methods kept as functions of a plain dict, ``name(config, *args)``
WRAPPED = (
    "seeds", "setting_seeds", "setting_cap", "cap_key", "run_horizon", "run_jobs", "runs_per_job",
    "run_batches", "run_spec", "resource", "setting_info", "experiment_info", "figure_experiments",
    "figure_spec", "data_files", "data_spec",
)  # fmt: skip


def _wrapper(name: str) -> Any:
    def wrapper(config: Mapping[str, Any] | Config, *args: Any, **kwargs: Any) -> Any:
        return getattr(model(config), name)(*args, **kwargs)

    wrapper.__name__ = wrapper.__qualname__ = name
    wrapper.__doc__ = f"``Config.{name}`` of a plain config dict (a wrapper kept for unconverted readers)."
    return wrapper


for _name in WRAPPED:
    globals()[_name] = _wrapper(_name)
__all__ += list(WRAPPED)


def data_mirror(config: Mapping[str, Any] | Config) -> str | None:
    """``Config.data_mirror`` of a plain config dict."""
    return model(config).data_mirror
