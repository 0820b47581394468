"""The run record: what a run job records of each run it makes, stored with the run's numbers in
its batch file (``vhct.pipeline.store``).

A run record carries what made the run: its spec (:class:`RunSpec`), the hash of the package
source that shapes its numbers (``vhct.pipeline.versions.source_hash("run")``), the package
versions, the checksums of the data files it read (as the config declares them, which their
verification stamps checked), and what its regret is measured from.

One writer, :func:`vhct.pipeline.jobs.run_job`, and one reader, ``vhct.pipeline.store.read_batch``
(through ``vhct.pipeline.tables.read_runs``, which every consumer of a run goes through and which
reads by attribute). Reading validates the record: its seed fields agree, its rounds are its horizon,
and its ``f_star`` (the exact optimum, or None) and ``regret_reference`` fit its objective: a
synthetic run without ``f_star`` is an error. Against what is asked now (a
``vhct.pipeline.store.RunJob``: the config's spec, the installed code, versions and data),
:func:`request_difference` names the first thing that differs (the readers refuse such a run).

A pydantic (v2) model, not a hand-checked dataclass: the validation of nested fields, the error
locations (``run.horizon``) and the JSON round trip come with it, and the configuration's
typed model uses the same library.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError, model_validator

from vhct.pipeline.files import json_default

#: fields of the run spec that shape the numbers: a run is current when they equal the config's
SPEC_FIELDS = ("algorithm", "params", "objective", "objective_params", "noise", "horizon", "seed")
#: what the audit measures regret against: the exact optimum, or the best value any run observed
RegretReference = Literal["f_star", "best_observed"]
#: a hex sha256 (a table's, a source's)
Sha256 = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]
#: data file path (under ``data/``) -> its declared checksums (``sha256``, ``content_sha256``, ``md5``)
DataChecksums = dict[str, dict[str, str]]


class RunSpec(BaseModel):
    """What one run job is asked to do (``Config.run_spec``), the one form a run's spec travels in.

    The config makes it, the run job runs it (``vhct.pipeline.run.experiment_columns``) and embeds
    it in its record (:attr:`RunRecord.run`), and every consumer compares that record with the
    config's (:func:`spec_difference`). It crosses into a Snakemake job inside the run family's job
    spec (``vhct.pipeline.store.RunJob``, the rule's params) and is validated back by the job.
    ``experiment``, ``setting`` and ``progress_every`` are labels: what a run is
    (``SPEC_FIELDS``) leaves them out, so a run made for one config serves another.
    """

    model_config = ConfigDict(frozen=True, extra="allow", allow_inf_nan=False)

    experiment: str
    setting: str
    algorithm: str
    params: dict[str, Any]
    objective: str
    objective_params: dict[str, Any]
    noise: float = Field(ge=0)
    horizon: int = Field(ge=1)
    seed: int = Field(ge=0)
    progress_every: int = Field(ge=0)


def known_optimum(objective: str) -> bool:
    """Whether the registered ``objective`` knows its maximum exactly, as its class declares
    (``Objective.exact_optimum``: the synthetic functions do, the real-data tasks do not); read from
    the class, none built, and none imported: an objective registered lazily (scikit-learn, torch)
    has no exact optimum (the objectives registry refuses one that declares it)."""
    from vhct.objectives import OBJECTIVES

    if objective not in OBJECTIVES or OBJECTIVES.target(objective) is not None:
        return False
    return OBJECTIVES[objective].exact_optimum


def regret_reference_of(f_star: float | None) -> RegretReference:
    """The audit's regret reference of a run: its exact optimum when known, else the best observed."""
    return "best_observed" if f_star is None else "f_star"


class RunRecord(BaseModel):
    """A run's record: its spec, its size and cost, what made it (the run code's ``source`` hash, the
    package ``versions``, the ``data`` files' checksums), and what its regret is measured from
    (``regret_from``: its regret is ``regret_from - f(x)``, with ``regret_from`` the objective's
    ``f*`` or its declared reference) and against in the audit (``f_star`` and ``regret_reference``);
    ``metadata`` is what ``vhct.pipeline.run.experiment_columns`` returned (the recommendation, the
    tree's size, ...)."""

    model_config = ConfigDict(frozen=True, extra="allow", allow_inf_nan=False)

    run: RunSpec
    seed: int = Field(ge=0)
    rounds: int = Field(ge=1)
    wall_seconds: float = Field(ge=0)
    python: str
    host: str
    versions: dict[str, str | None]
    source: Sha256
    data: DataChecksums
    f_star: float | None
    regret_from: float
    regret_reference: RegretReference
    metadata: dict[str, Any]

    @model_validator(mode="after")
    def _consistent(self) -> RunRecord:
        seeds = {"seed": self.seed, "run.seed": self.run.seed}
        if "seed" in self.metadata:
            seeds["metadata.seed"] = self.metadata["seed"]
        if len(set(seeds.values())) > 1:
            values = ", ".join(f"{k} = {v!r}" for k, v in seeds.items())
            raise ValueError(f"the seed fields disagree: {values}")
        if self.rounds != self.run.horizon:
            raise ValueError(f"rounds = {self.rounds} but run.horizon = {self.run.horizon}")
        objective = self.run.objective
        if self.f_star is None and known_optimum(objective):
            raise ValueError(f"f_star is missing, but the synthetic objective {objective!r} has an exact one")
        if self.regret_reference != regret_reference_of(self.f_star):
            raise ValueError(f"regret_reference = {self.regret_reference!r} with f_star = {self.f_star!r}")
        recorded = self.metadata.get("f_star", self.f_star)
        if recorded != self.f_star:
            raise ValueError(f"f_star = {self.f_star!r} but metadata.f_star = {recorded!r}")
        return self


def describe(error: ValidationError) -> str:
    """A pydantic error in one line per field: ``run.horizon: Field required``."""
    parts = []
    for item in error.errors():
        where = ".".join(map(str, item["loc"]))
        message = item["msg"].removeprefix("Value error, ")
        parts.append(f"{where}: {message}" if where else message)
    return "; ".join(parts)


def _plain(value: Any) -> Any:
    """``value`` as JSON would read it back (tuples as lists, numpy as Python numbers)."""
    return json.loads(json.dumps(value, default=json_default))


def _first_difference(key: str, recorded: Any, wanted: Any) -> str | None:
    """``key`` (dotted into nested mappings) where ``recorded`` first differs from ``wanted``."""
    if isinstance(recorded, dict) and isinstance(wanted, dict):
        for name in dict.fromkeys([*recorded, *wanted]):
            if name not in recorded:
                return f"{key}.{name}: the run has none, the config asks for {wanted[name]!r}"
            if name not in wanted:
                return f"{key}.{name}: the run has {recorded[name]!r}, the config sets none"
            found = _first_difference(f"{key}.{name}", recorded[name], wanted[name])
            if found:
                return found
        return None
    if recorded != wanted or isinstance(recorded, bool) != isinstance(wanted, bool):
        return f"{key}: the run has {recorded!r}, the config asks for {wanted!r}"
    return None


def spec_difference(record: RunRecord, expected: RunSpec) -> str | None:
    """The first field of ``SPEC_FIELDS`` (nested keys dotted) where the recorded run differs from
    ``expected`` (the config's ``run_spec``), or None when the run is what the config asks for."""
    for field in SPEC_FIELDS:
        found = _first_difference(field, _plain(getattr(record.run, field)), _plain(getattr(expected, field)))
        if found:
            return found
    return None


def version_difference(record: RunRecord, installed: Mapping[str, str | None]) -> str | None:
    """The first package the run recorded at another version than ``installed``, or None."""
    for name, version in record.versions.items():
        if name in installed and installed[name] != version:
            return f"{name} {version or 'absent'} (installed: {installed[name] or 'absent'})"
    return None


def made_difference(record: RunRecord, source: str, installed: Mapping[str, str | None]) -> str | None:
    """What of the software that made the run differs from ``source`` (the run code's hash now) and
    ``installed`` (the package versions now): "source: ..." or "versions: ...", or None."""
    if record.source != source:
        return (
            f"source: the run was made by run code {record.source[:12]}, the installed code is "
            f"{source[:12]} (a module the run job imports changed: vhct.pipeline.versions.layer_files('run'))"
        )
    found = version_difference(record, installed)
    return f"versions: {found}" if found else None


def request_difference(
    record: RunRecord,
    spec: RunSpec,
    source: str,
    versions: Mapping[str, str | None],
    data: DataChecksums,
) -> str | None:
    """The first thing where the run of ``record`` differs from what is asked now (its ``spec``, the
    run code's ``source`` hash, the package ``versions``, the ``data`` files' checksums: a
    ``vhct.pipeline.store.RunJob``'s): a field of its spec (:func:`spec_difference`), the run code, a
    package version, or a data file's checksum; None when the run is the one asked for."""
    found = spec_difference(record, spec) or made_difference(record, source, versions)
    if found is None and record.data != data:
        found = _first_difference("data", record.data, data)
    return found
