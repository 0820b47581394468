"""The sections of a config as pydantic models: types, ranges and the checks local to one section.

An algorithm's parameters are checked by name here (the optimizer registry's ``check_params``);
their ranges are the optimizers' own checks, made when the model builds each setting's optimizer.

Strict types: ``seeds: 2.0`` or ``horizon: "10"`` is an error, not a silent conversion; numbers that
reach run specifications (noise, parameters) keep the type the file gives (``nu: 1`` stays 1).
Defaults a reader of the plain config dict relies on (``_FILLED``) are written into that dict, in
place, as the JSON schema's defaults were.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping
from typing import Annotated, Any, ClassVar

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    WithJsonSchema,
    model_validator,
)

from vhct.pipeline.config.errors import key_error
from vhct.pipeline.figure_kinds import FIGURE_KINDS, PANEL_KEYS, figure_kind
from vhct.pipeline.files import TEMP_SUFFIX, TEMP_TOKEN_BYTES

#: bytes of one file name (a path component) on the file systems the pipeline runs on (NAME_MAX of
#: ext4, XFS, Btrfs, tmpfs): a longer one fails with "File name too long"
FILE_NAME_MAX = 255
#: the longest extension the pipeline gives a file named after a name (``figures/<figure>.png``,
#: ``results/report/<figure>.rst``, ``logs/aggregate/<experiment>.log``)
NAME_EXTENSION_MAX = len(".png")
#: the longest name (ASCII, so bytes): the longest file the pipeline derives from one is the atomic
#: writer's temporary ``.<name>.png.<token>.tmp`` next to a figure (vhct.pipeline.files)
NAME_MAX = FILE_NAME_MAX - len(f".{NAME_EXTENSION_MAX * 'x'}.{2 * TEMP_TOKEN_BYTES * '0'}{TEMP_SUFFIX}")
NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$"


def _fits_file_names(name: str) -> str:
    """A declared name, refused when a file named after it would be longer than the file system allows."""
    if len(name.encode()) > NAME_MAX:
        raise key_error(
            (),
            f"a name may have at most {NAME_MAX} characters, got {len(name.encode())}: the pipeline "
            f"names files after it (the longest '.<name>.png.<token>.tmp') and a file name may have "
            f"at most {FILE_NAME_MAX} bytes",
        )
    return name


#: a name usable in file names (a reference to a declared setting, experiment, figure, data file)
Name = Annotated[str, StringConstraints(pattern=NAME_PATTERN)]
#: a declared name (a key of settings, experiments, figures, data files), short enough for file names
DeclaredName = Annotated[
    str,
    StringConstraints(pattern=NAME_PATTERN),
    AfterValidator(_fits_file_names),
    WithJsonSchema({"type": "string", "pattern": NAME_PATTERN, "maxLength": NAME_MAX}),
]
PositiveInt = Annotated[int, Field(ge=1)]

#: seeds of one experiment at most: Snakemake plans a job and two files per run, and builds its
#: plan before running anything (1,000,000 seeds kept it planning for minutes); paper-local runs 200
MAX_SEEDS = 1_000
#: rounds of one experiment at most (the paper's longest is 5,000): a run's table and tree grow with
#: them (a job's table is also sized against its mem_mb, vhct.pipeline.config.checks)
MAX_HORIZON = 1_000_000


def number(**bounds: float) -> Any:
    """A number with ``bounds`` that keeps its type (an int stays an int, for run specifications)."""
    return Annotated[int, Field(**bounds)] | Annotated[float, Field(**bounds)]


class Section(BaseModel):
    """A config section: strict types, unknown keys refused, defaults filled into the source dict."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True, allow_inf_nan=False)
    #: defaults written into the plain dict when the key is absent (as the former schema's defaults)
    _FILLED: ClassVar[dict[str, Any]] = {}

    @model_validator(mode="before")
    @classmethod
    def _fill(cls, data: Any) -> Any:
        if isinstance(data, dict):
            for key, value in cls._FILLED.items():
                data.setdefault(key, copy.deepcopy(value))
        return data


class Resources(Section):
    """Threads, memory and run time of a job (per rule family, experiment or setting)."""

    mem_mb: PositiveInt | None = None
    runtime: PositiveInt | None = Field(None, description="minutes")
    threads: PositiveInt | None = None


#: the JSON schema of a setting's ``params``: their names are the algorithm's keyword arguments (the
#: optimizer registry's ``check_params``) and their ranges its own checks, made when the model builds
#: each setting's optimizer (``model.Config._check_optimizers``): none is written here again
PARAMS_SCHEMA = {
    "type": "object",
    "description": "keyword arguments of the algorithm's class; their ranges are the optimizer's own "
    "checks (vhct.optimizers), made when the config is loaded",
}


class Setting(Section):
    """A named algorithm setting."""

    algorithm: str = Field(description="a name of vhct.optimizers.registry.ALGORITHM_TABLE")
    params: Annotated[dict[str, Any], WithJsonSchema(PARAMS_SCHEMA)] = Field(default_factory=dict)
    label: str | None = None
    max_horizon: PositiveInt | None = Field(
        None, description="the setting stops at min(experiment horizon, max_horizon) (e.g. BO)"
    )
    max_seeds: PositiveInt | None = Field(
        None, description="the setting runs only the first max_seeds of the experiment's seeds (e.g. BO)"
    )
    resources: Resources | None = Field(None, description="run-job resources, overriding the experiment's")
    runs_per_job: PositiveInt | None = Field(
        None, description="overrides the experiment's runs_per_job for this setting (e.g. BO, 1)"
    )

    @model_validator(mode="after")
    def _check(self) -> Setting:
        from vhct.optimizers.registry import ALGORITHM_TABLE, check_params

        if self.algorithm not in ALGORITHM_TABLE:
            raise key_error(
                "algorithm", f"unknown algorithm {self.algorithm!r} (known: {', '.join(ALGORITHM_TABLE)})"
            )
        try:
            check_params(self.algorithm, self.params)
        except ValueError as exc:
            unknown = sorted(set(self.params) - _accepted(self.algorithm))
            raise key_error(["params", *unknown[:1]], str(exc)) from None
        return self


def _accepted(algorithm: str) -> set[str]:
    from vhct.optimizers.registry import algorithm_params

    return algorithm_params(algorithm)


class Caps(Section):
    """A setting's caps in one experiment, overriding the setting's own."""

    model_config = ConfigDict(json_schema_extra={"minProperties": 1})
    max_horizon: PositiveInt | None = None
    max_seeds: PositiveInt | None = None


class Experiment(Section):
    """An objective, its noise, horizon and seeds, and the settings run on it."""

    _FILLED: ClassVar[dict[str, Any]] = {"objective_params": {}}
    objective: str = Field(description="a name of vhct.objectives.OBJECTIVES")
    objective_params: dict[str, Any] = Field(default_factory=dict)
    title: str | None = None
    noise: number(ge=0) = Field(  # type: ignore[valid-type]
        description="half-width of the additive Uniform(-noise, noise) reward noise"
    )
    horizon: Annotated[int, Field(ge=1, json_schema_extra={"maximum": MAX_HORIZON})]
    seeds: (
        Annotated[int, Field(ge=1, json_schema_extra={"maximum": MAX_SEEDS})]
        | Annotated[
            list[Annotated[int, Field(ge=0)]], Field(min_length=1, json_schema_extra={"maxItems": MAX_SEEDS})
        ]
    ) = Field(description="a number of seeds (0..n-1) or an explicit list", union_mode="left_to_right")
    settings: Annotated[list[Name], Field(min_length=1)]
    data: list[str] = Field(
        default_factory=list, description="names of data files (keys of data/files) the objective reads"
    )
    resources: Resources | None = None
    runs_per_job: PositiveInt | None = Field(
        None,
        description="runs (settings x seeds, in config order) one job runs one after the other, each "
        "writing its own table and sidecar (BO and real data: 1, the default)",
    )
    caps: dict[Name, Caps] = Field(
        default_factory=dict, description="per setting run here, its max_horizon and max_seeds here"
    )
    skip_claims: list[str] = Field(
        default_factory=list,
        description="ids of claims (config/claims.yaml) the audit leaves out of this experiment: a claim "
        "reading a setting capped here below the claim's min_seeds must be named here, or the audit "
        "refuses the config",
    )

    @model_validator(mode="after")
    def _check(self) -> Experiment:
        from vhct.objectives import OBJECTIVES

        if self.objective not in OBJECTIVES:
            raise key_error(
                "objective", f"unknown objective {self.objective!r} (known: {', '.join(OBJECTIVES)})"
            )
        for key in ("settings", "data"):
            values = getattr(self, key)
            for i, value in enumerate(values):
                if value in values[:i]:
                    raise key_error(f"{key}/{i}", f"{value!r} is given twice")
        count = self.seeds if isinstance(self.seeds, int) else len(self.seeds)
        if count > MAX_SEEDS:
            raise key_error(
                "seeds",
                f"at most {MAX_SEEDS:,} seeds per experiment, got {count:,}: the pipeline plans a job "
                "per run before it runs any (MAX_SEEDS in vhct/pipeline/config/sections.py)",
            )
        if self.horizon > MAX_HORIZON:
            raise key_error(
                "horizon",
                f"at most {MAX_HORIZON:,} rounds, got {self.horizon:,} (MAX_HORIZON in "
                "vhct/pipeline/config/sections.py); for longer runs call the library (vhct.maximize), "
                "whose memory grows with the rounds run",
            )
        if isinstance(self.seeds, list) and len(set(self.seeds)) < len(self.seeds):
            raise key_error("seeds", f"a seed is given twice: {self.seeds}")
        for setting in self.caps:
            if setting not in self.settings:
                raise key_error(
                    f"caps/{setting}",
                    f"setting {setting!r} is not run in this experiment (its settings: "
                    f"{', '.join(self.settings)})",
                )
        return self

    @property
    def seed_list(self) -> list[int]:
        """Seeds of the experiment: ``0..n-1`` for a count, else the explicit list."""
        return list(range(self.seeds)) if isinstance(self.seeds, int) else list(self.seeds)


class Panel(Section):
    """One panel of a figure; which keys a kind needs is the figure kinds registry's."""

    _FILLED: ClassVar[dict[str, Any]] = {"objective_params": {}, "seed": 0}
    title: str | None = None
    experiment: str | None = None
    settings: Annotated[list[str], Field(min_length=1)] | None = Field(
        None, description="subset of the experiment's settings to draw (default all)"
    )
    objective: str | None = None
    objective_params: dict[str, Any] = Field(default_factory=dict)
    setting: str | None = None
    seed: Annotated[int, Field(ge=0)] = 0
    round: PositiveInt | None = None


class Figure(Section):
    """A declared figure: its kind (vhct.pipeline.figure_kinds) and panels."""

    kind: str = Field(description="a name of vhct.pipeline.figure_kinds.FIGURE_KINDS")
    title: str | None = None
    columns: PositiveInt | None = None
    panels: Annotated[list[Panel], Field(min_length=1)]

    @model_validator(mode="before")
    @classmethod
    def _panel_keys(cls, data: Any) -> Any:
        """Each panel gives the keys its kind requires and no other (before the defaults are filled)."""
        if not (
            isinstance(data, dict) and isinstance(data.get("kind"), str) and data["kind"] in FIGURE_KINDS
        ):
            return data
        kind = figure_kind(data["kind"])
        for i, panel in enumerate(data.get("panels") or []):
            if not isinstance(panel, dict):
                continue
            for key in kind.required:
                if key not in panel:
                    raise key_error(f"panels/{i}", f"a {kind.name} panel needs the key {key!r}")
            for key in panel:
                filled = key in Panel._FILLED and panel[key] == Panel._FILLED[key]  # (a dict validated again)
                if key in PANEL_KEYS and key not in kind.allowed | {"title"} and not filled:
                    allowed = ", ".join(sorted(kind.allowed | {"title"}))
                    raise key_error(
                        f"panels/{i}/{key}", f"a {kind.name} panel does not take it (allowed: {allowed})"
                    )
        return data

    @model_validator(mode="after")
    def _kind(self) -> Figure:
        if self.kind not in FIGURE_KINDS:
            raise key_error("kind", f"unknown figure kind {self.kind!r} (known: {', '.join(FIGURE_KINDS)})")
        return self


class DataFile(Section):
    """A data file of a real-data objective, written to data/<path> by the rule data_file."""

    model_config = ConfigDict(
        json_schema_extra={"anyOf": [{"required": [k]} for k in ("sha256", "content_sha256", "md5")]}
    )
    path: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*$")] = Field(
        description="file path relative to data/ (the rule writes data/<path>)"
    )
    urls: Annotated[list[str], Field(min_length=1)]
    sha256: Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")] | None = None
    content_sha256: Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")] | None = None
    md5: Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{32}$")] | None = None
    description: str | None = None

    @model_validator(mode="after")
    def _checksum(self) -> DataFile:
        if not (self.sha256 or self.content_sha256 or self.md5):
            raise key_error((), "needs a checksum: sha256, content_sha256 or md5")
        return self


class Data(Section):
    """The data files of the real-data objectives and an optional mirror directory."""

    _FILLED: ClassVar[dict[str, Any]] = {"mirror": None, "files": {}}
    mirror: str | None = Field(
        None,
        description="directory with already-downloaded files at <mirror>/<path> (else env VHCT_DATA_MIRROR)",
    )
    files: dict[DeclaredName, DataFile] = Field(default_factory=dict)


class RuleResources(Section):
    """Default threads/mem_mb/runtime per rule family."""

    data: Resources | None = None
    run: Resources | None = None
    aggregate: Resources | None = None
    figure: Resources | None = None


def check_finite(value: Any, key: tuple[str, ...] = (), seen: set[int] | None = None) -> None:
    """Reject NaN and infinity anywhere in a config (YAML ``.nan``, ``.inf``), free mappings
    (objective parameters) included: they would fail, or run silently wrong, inside a job.

    A mapping or list the config holds in several places (a YAML alias) is checked once, at its
    first place: nested aliases are never expanded (the loader bounds them too, ``MAX_EXPANDED_NODES``).
    """
    if isinstance(value, float) and not math.isfinite(value):
        raise key_error(key, f"must be a finite number, got {value!r}")
    if not isinstance(value, Mapping | list | tuple):
        return
    seen = set() if seen is None else seen
    if id(value) in seen:
        return
    seen.add(id(value))
    items = value.items() if isinstance(value, Mapping) else enumerate(value)
    for k, v in items:
        check_finite(v, (*key, str(k)), seen)
