"""The configuration model: one typed record of a pipeline config, checked once, read by attribute.

Pydantic v2 rather than frozen dataclasses: it gives strict types (``seeds: 2.0`` refused, not
truncated), error locations that map to the key path (and so to the file and line), validators
for the cross-references, and the JSON schema generated from the same classes
(``python -m vhct.pipeline.config --schema``), so the schema and the model have one source.

The run horizon, the seeds and the caps of each (experiment, setting) are computed here, once;
jobs, batches and run specifications are planned from them (:class:`~.planning.Planning`).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from pathlib import Path
from types import UnionType
from typing import Annotated, Any, ClassVar, Literal, Union, get_args, get_origin

from pydantic import Field, ValidationError, ValidationInfo, WithJsonSchema, field_validator, model_validator

from vhct.pipeline.config import checks
from vhct.pipeline.config.errors import ConfigError, key_error, validation_error
from vhct.pipeline.config.plan import PlanSpec
from vhct.pipeline.config.planning import Planning
from vhct.pipeline.config.sections import (
    NAME_PATTERN,
    Data,
    DeclaredName,
    Experiment,
    Figure,
    RuleResources,
    Section,
    Setting,
    check_finite,
)
from vhct.pipeline.figure_kinds import figure_kind
from vhct.pipeline.layout import AGGREGATES, REPORT_DIR, Layout
from vhct.pipeline.store import STORE

#: validation context of a full check (objectives and optimizers built, tables sized): the loader's
DEEP = {"deep": True}
#: folders directly under ``results/`` (the run store, and the default config's aggregates and report,
#: as its empty ``output`` writes them): a config's own folder of that name would mix its outputs with
#: theirs
RESERVED_OUTPUTS = frozenset({Path(STORE).name, AGGREGATES, REPORT_DIR})
#: a config's folder name: a declared name, or empty (the folders themselves)
OUTPUT_PATTERN = f"^$|{NAME_PATTERN}"


def output_problem(name: str) -> str | None:
    """Why ``name`` cannot name a config's folder (``output``), or None when it can."""
    if not re.fullmatch(OUTPUT_PATTERN, name):
        return (
            f"{name!r} is no folder name here (letters, digits and _ . + -, starting with a letter or digit)"
        )
    if name in RESERVED_OUTPUTS:
        return (
            f"{name!r} is a folder of the default config's results/ (reserved: "
            f"{', '.join(sorted(RESERVED_OUTPUTS))})"
        )
    return None


#: runs (experiment x setting x seed) of one config at most: a guard against seeds times settings no
#: one meant. Snakemake plans one job per batch of runs (``vhct.pipeline.store``), not per run:
#: paper-local's analysis plan, 25,699 runs in 716 run jobs, plans in 7.5 s on 2 cores (a dry run)
MAX_RUNS = 50_000


class Config(Planning, Section):
    """A pipeline configuration (``config/*.yaml``), validated.

    Build it with :meth:`from_dict` (or the loader, ``vhct.pipeline.config.load``); ``source`` is
    the plain dict it was read from, with the defaults filled in (Snakemake's ``config``).
    """

    base: str | None = Field(
        None,
        description="a config file this one extends, relative to this file: its keys are read first and "
        "this file's update them (mappings merged key by key, other values replaced)",
    )
    output: Annotated[str, WithJsonSchema({"type": "string", "pattern": OUTPUT_PATTERN})] = Field(
        "",
        description="folder of this config's outputs in results/, figures/ and logs/ (results/<output>/...); "
        "by default the config file's name without .yaml, empty (results/ itself) for config.yaml; "
        "not inherited from a base",
    )
    progress_every: int = Field(500, ge=1, description="run jobs log a progress line every this many rounds")
    resources: RuleResources = Field(
        default_factory=RuleResources, description="default threads/mem_mb/runtime per rule family"
    )
    data: Data = Field(default_factory=Data, description="data files of the real-data objectives")
    settings: dict[DeclaredName, Setting] = Field(min_length=1, description="named algorithm settings")
    experiments: dict[DeclaredName, Experiment] = Field(min_length=1)
    figures: dict[DeclaredName, Figure] = Field(min_length=1)
    plan: PlanSpec | None = Field(
        None,
        description="the analysis plan whose seeds this config runs (a confirmatory run: `make plan` "
        "writes it from the pilot; the loader refuses the config unless the plan matches it)",
    )

    _FILLED: ClassVar[dict[str, Any]] = {"output": "", "progress_every": 500, "resources": {}, "data": {}}

    @model_validator(mode="before")
    @classmethod
    def _before(cls, data: Any) -> Any:
        if isinstance(data, dict):
            check_finite(data)
            cls._fill(data)  # in the source dict, before the YAML anchors' free keys are left out
            return {k: v for k, v in data.items() if not (isinstance(k, str) and k.startswith("x-"))}
        return data

    @field_validator("output")
    @classmethod
    def _own_folder(cls, output: str) -> str:
        problem = output_problem(output)
        if problem:
            raise ValueError(problem)
        return output

    @property
    def layout(self) -> Layout:
        """Every path of this config's outputs (``vhct.pipeline.layout``)."""
        return Layout.of(self.output)

    def folder(self, root: str) -> str:
        """This config's folder in one of :data:`OUTPUT_ROOTS` (``results/paper-local``, or
        ``results`` itself for an empty ``output``), relative to the working directory."""
        return f"{root}/{self.output}" if self.output else root

    @model_validator(mode="after")
    def _cross_references(self, info: ValidationInfo) -> Config:
        """What one section cannot check alone: names that refer to other sections, and (deep)
        objectives and optimizers built with their parameters, tables sized against memory."""
        deep = bool((info.context or {}).get("deep"))
        paths: dict[str, str] = {}
        for name, spec in self.data.files.items():
            try:
                checks.data_file_path(spec.path)
            except ValueError as exc:
                raise key_error(f"data/files/{name}/path", str(exc)) from None
            if spec.path in paths:
                raise key_error(
                    f"data/files/{name}/path", f"{spec.path!r} already used by {paths[spec.path]}"
                )
            paths[spec.path] = name
        for name, exp in self.experiments.items():
            for i, setting in enumerate(exp.settings):
                self._need(self.settings, setting, f"experiments/{name}/settings/{i}", "setting")
            for i, item in enumerate(exp.data):
                self._need(self.data.files, item, f"experiments/{name}/data/{i}", "data file")
            try:  # objectives read only the files the run jobs verify
                checks.check_data_params(
                    exp.objective, exp.objective_params, [self.data.files[item].path for item in exp.data]
                )
            except ConfigError as exc:
                raise key_error(["experiments", name, *(exc.key or ())], exc.text) from None
        if self.plan is not None:
            for name in self.plan.experiments:
                self._need(self.experiments, name, f"plan/experiments/{name}", "experiment")
            for name in self.plan.settings:
                self._need(self.settings, name, f"plan/settings/{name}", "setting")
        self._check_run_count()
        domains = {name: self._domain(name, deep) for name in self.experiments}
        for fig_name, fig in self.figures.items():
            for i, panel in enumerate(fig.panels):
                self._check_panel(fig.kind, panel, f"figures/{fig_name}/panels/{i}", deep)
        if deep:
            self._check_optimizers(domains)
        return self

    def _check_run_count(self) -> None:
        """The runs of all experiments together within :data:`MAX_RUNS` (each is bounded alone by
        its seeds, ``MAX_SEEDS``, but settings multiply them)."""
        runs = {
            name: sum(len(self.setting_seeds(name, setting)) for setting in exp.settings)
            for name, exp in self.experiments.items()
        }
        if sum(runs.values()) > MAX_RUNS:
            most = ", ".join(f"{name} {n:,}" for name, n in sorted(runs.items(), key=lambda kv: -kv[1])[:3])
            raise key_error(
                "experiments",
                f"the config plans {sum(runs.values()):,} runs (most: {most}), more than MAX_RUNS "
                f"{MAX_RUNS:,} (vhct/pipeline/config/model.py): "
                "fewer seeds or settings, max_seeds caps, or the experiments split over several config "
                "files run one after the other",
            )

    @staticmethod
    def _need(section: Mapping[str, Any], name: str, key: str, what: str) -> None:
        if name not in section:
            known = ", ".join(sorted(section)) or "none"
            raise key_error(key, f"unknown {what} {name!r} (declared: {known})")

    def _domain(self, name: str, deep: bool) -> tuple | None:
        exp = self.experiments[name]
        if not deep:
            return None
        try:
            return checks.objective_domain(exp.objective, exp.objective_params)
        except ConfigError as exc:
            raise key_error(["experiments", name, *(exc.key or ())], exc.text) from None

    def _check_panel(self, kind_name: str, panel: Any, key: str, deep: bool) -> None:
        kind = figure_kind(kind_name)
        if panel.objective is not None:
            from vhct.objectives import OBJECTIVES

            if panel.objective not in OBJECTIVES:
                raise key_error(f"{key}/objective", f"unknown objective {panel.objective!r}")
            if deep:
                try:
                    checks.objective_domain(panel.objective, panel.objective_params)
                except ConfigError as exc:
                    raise key_error([*key.split("/"), *(exc.key or ())], exc.text) from None
        if panel.experiment is None:
            return
        self._need(self.experiments, panel.experiment, f"{key}/experiment", "experiment")
        declared = self.experiments[panel.experiment].settings
        chosen = [(f"{key}/settings/{j}", s) for j, s in enumerate(panel.settings or [])]
        chosen += [(f"{key}/setting", panel.setting)] if panel.setting is not None else []
        for where, setting in chosen:
            if setting not in declared:
                raise key_error(
                    where,
                    f"setting {setting!r} is not run in experiment {panel.experiment!r} "
                    f"(its settings: {', '.join(declared)})",
                )
        if kind.osc:
            from vhct.optimizers.registry import osc_algorithms

            algorithm = self.settings[panel.setting].algorithm
            if algorithm not in osc_algorithms():
                needs = ", ".join(sorted(osc_algorithms()))
                raise key_error(f"{key}/setting", f"the OSC figure needs one of {needs}, got {algorithm}")
        if panel.round is not None:
            horizon = self.run_horizon(panel.experiment, panel.setting)
            if panel.round > horizon:
                raise key_error(
                    f"{key}/round",
                    f"{panel.round} exceeds the horizon {horizon} of setting {panel.setting!r} "
                    f"in experiment {panel.experiment!r}",
                )
        if kind.osc:
            run = self.seeds(panel.experiment)
            if panel.seed not in run:
                raise key_error(
                    f"{key}/seed",
                    f"seed {panel.seed} is not run in experiment {panel.experiment!r} "
                    f"(its seeds: {', '.join(map(str, run))})",
                )

    def _check_optimizers(self, domains: Mapping[str, tuple | None]) -> None:
        """Every setting's optimizer built once per experiment domain and horizon it runs with, and
        each run's table sized against its job's memory."""
        built: set[tuple[str, tuple, int]] = set()
        for experiment, exp in self.experiments.items():
            domain = domains[experiment]
            for setting in exp.settings:
                horizon = self.run_horizon(experiment, setting)
                if (setting, domain, horizon) not in built:
                    built.add((setting, domain, horizon))
                    algo = self.settings[setting]
                    try:
                        checks.build_optimizer(algo.algorithm, algo.params, domain, horizon, experiment)
                    except ConfigError as exc:
                        raise key_error(["settings", setting, *(exc.key or ())], exc.text) from None
        run = {setting for exp in self.experiments.values() for setting in exp.settings}
        for setting, algo in self.settings.items():
            if setting not in run:  # its parameters' ranges are the optimizer's: asked all the same
                horizon = algo.max_horizon or checks.STAND_IN_HORIZON
                try:
                    checks.build_optimizer(algo.algorithm, algo.params, checks.STAND_IN_DOMAIN, horizon, None)
                except ConfigError as exc:
                    raise key_error(["settings", setting, *(exc.key or ())], exc.text) from None
        for experiment, exp in self.experiments.items():
            for setting in exp.settings:
                mem_mb = self.resource("run", "mem_mb", experiment, setting)
                try:
                    checks.check_table_memory(
                        self.run_horizon(experiment, setting), len(domains[experiment]), mem_mb, setting
                    )
                except ConfigError as exc:
                    where = (
                        self.cap_key(experiment, setting, "max_horizon")
                        or f"experiments/{experiment}/horizon"
                    )
                    raise key_error(where, exc.text) from None

    # ------------------------------------------------------------ seeds, horizons, caps: once

    def seeds(self, experiment: str) -> list[int]:
        """Seeds of an experiment: ``0..n-1`` for a count, else the explicit list."""
        return self.experiments[experiment].seed_list

    def cap_key(self, experiment: str, setting: str, cap: Literal["max_horizon", "max_seeds"]) -> str | None:
        """Config key that sets a setting's ``cap`` in one experiment: the experiment's ``caps``
        entry if it has one, else the setting's own; None when uncapped."""
        caps = self.experiments[experiment].caps.get(setting)
        if caps is not None and cap in caps.model_fields_set:
            return f"experiments/{experiment}/caps/{setting}/{cap}"
        return f"settings/{setting}/{cap}" if getattr(self.settings[setting], cap) is not None else None

    def setting_cap(
        self, experiment: str, setting: str, cap: Literal["max_horizon", "max_seeds"]
    ) -> int | None:
        """A setting's ``max_horizon`` or ``max_seeds`` in one experiment (see :meth:`cap_key`)."""
        key = self.cap_key(experiment, setting, cap)
        if key is None:
            return None
        caps = self.experiments[experiment].caps.get(setting)
        return getattr(caps if key.startswith("experiments/") else self.settings[setting], cap)

    def setting_seeds(self, experiment: str, setting: str) -> list[int]:
        """Seeds of one setting in one experiment: the experiment's, the first ``max_seeds`` of them
        when the setting (or the experiment's ``caps``) caps them (e.g. BO, whose runs cost minutes)."""
        chosen = self.seeds(experiment)
        cap = self.setting_cap(experiment, setting, "max_seeds")
        return chosen if cap is None else chosen[:cap]

    def run_horizon(self, experiment: str, setting: str) -> int:
        """Rounds of one setting in one experiment: the experiment horizon capped by ``max_horizon``."""
        horizon = self.experiments[experiment].horizon
        cap = self.setting_cap(experiment, setting, "max_horizon")
        return horizon if cap is None else min(horizon, cap)

    # ------------------------------------------------------------ building

    @classmethod
    def from_dict(cls, source: dict[str, Any], deep: bool = True) -> Config:
        """Validate ``source`` (its defaults filled in, in place); a ConfigError names the key path.

        ``deep`` also builds every objective and optimizer and sizes every run table (the loader's
        check, a fraction of a second); without it only types and cross-references are checked.
        """
        try:
            model = cls.model_validate(source, context=DEEP if deep else {})
        except ValidationError as exc:
            raise validation_error(exc.errors(), _allowed_at, source) from None
        except ConfigError as exc:  # raised by a validator pydantic did not wrap
            raise exc from None
        object.__setattr__(model, "_source", source)
        return model

    @property
    def source(self) -> dict[str, Any]:
        """The plain dict this config was validated from (defaults filled in): Snakemake's ``config``."""
        return self.__dict__.get("_source") or self.model_dump(exclude_none=True)

    def as_dict(self) -> dict[str, Any]:
        """A deep copy of :attr:`source`."""
        return copy.deepcopy(self.source)


def _allowed_at(path: list[str]) -> list[str]:
    """The keys allowed at a key path of a config (for "did you mean")."""
    model: Any = Config
    skip = False  # the part after a mapping or list field is a name or an index
    for part in path:
        if skip:
            skip = False
            continue
        field = model.model_fields.get(part) if model is not None else None
        if field is None:
            return []
        model, skip = _model_of(field.annotation), get_origin(_strip(field.annotation)) in (dict, list)
    return list(model.model_fields) if model is not None else []


def _strip(annotation: Any) -> Any:
    """``X`` of ``X | None``."""
    args = [a for a in get_args(annotation) if a is not type(None)]
    return args[0] if get_origin(annotation) in (Union, UnionType) and len(args) == 1 else annotation


def _model_of(annotation: Any) -> Any:
    """The section model an annotation holds (directly, as ``X | None``, or as the values of a
    mapping or the items of a list)."""
    if isinstance(annotation, type) and issubclass(annotation, Section):
        return annotation
    for arg in get_args(annotation):
        found = _model_of(arg)
        if found is not None:
            return found
    return None
