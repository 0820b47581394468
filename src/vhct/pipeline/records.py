"""The run record: what a run job writes beside its table (the JSON sidecar ``seed<k>.json``), and
the run request: what the rules ask of a run (its spec file, ``results/.specs/runs/...``).

A run record carries what made the run: its spec (:class:`RunSpec`), the hash of the package
source that shapes its numbers (``vhct.pipeline.versions.source_hash("run")``), the package
versions, the checksums of the data files it read (as the config declares them, which their
verification stamps checked), and the sha256 of its table, so a table copied or edited after its
run is refused by every reader.

One writer, :func:`vhct.pipeline.jobs.run_job` (:meth:`RunRecord.to_json`), and one reader,
:func:`vhct.pipeline.tables.read_sidecar` (:meth:`RunRecord.from_json`), which every consumer of
a run (aggregation, the audit, the parse-time check of the rules, ``ship``) goes through and reads
by attribute. Reading validates the record: its seed fields agree, its rounds are its horizon, and
its ``f_star`` (the exact optimum, or None) and ``regret_reference`` fit its objective: a
synthetic run without ``f_star`` is an error. Against what is asked now (a :class:`RunRequest`:
the config's spec, the installed code, versions and data), :func:`request_difference` names the
first thing that differs (the readers refuse such a run: ``vhct.pipeline.tables``).

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

#: version of the sidecar's layout, the only one read (a sidecar of another, such as the second
#: layout's without the source hash and the table's sha256, is refused: its run must be redone)
FORMAT = 3
#: fields of the run spec that shape the numbers: a run is current when they equal the config's
SPEC_FIELDS = ("algorithm", "params", "objective", "objective_params", "noise", "horizon", "seed")
#: what the audit measures regret against: the exact optimum, or the best value any run observed
RegretReference = Literal["f_star", "best_observed"]
#: a hex sha256 (a table's, a source's)
Sha256 = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]
#: data file path (under ``data/``) -> its declared checksums (``sha256``, ``content_sha256``, ``md5``)
DataChecksums = dict[str, dict[str, str]]


class RunRecordError(ValueError):
    """A sidecar that is not a valid run record; the message says which fields are wrong."""


class RunSpec(BaseModel):
    """What one run job is asked to do (``Config.run_spec``), the one form a run's spec travels in.

    The config makes it, the run job runs it (``vhct.pipeline.run.experiment_columns``) and embeds
    it in its record (:attr:`RunRecord.run`), and every consumer compares that record with the
    config's (:func:`spec_difference`). It crosses into a Snakemake job inside the run's request
    (:class:`RunRequest`, the run's spec file, an input of the job, which reruns it when it
    changes) and is validated back by the job; a sidecar holds the same JSON form.
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


class RunRequest(BaseModel):
    """What the rules ask of one run when they are read: the config's spec, the installed run code
    (``source_hash("run")``) and package versions, the checksums of the data files it reads.

    Written at parse time as the run's spec file (``vhct.pipeline.stale.write_run_requests``),
    rewritten only when it changes, and an input of the run's job: Snakemake reruns a run whose
    request is newer than its outputs whatever ``.snakemake/`` holds. The run job reads its spec
    and data checksums from it; every reader of runs compares a run's record with the request of
    now (:func:`request_difference`).
    """

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    run: RunSpec
    source: Sha256
    versions: dict[str, str | None]
    data: DataChecksums

    def to_json(self) -> str:
        """The spec file's text: compact JSON (pydantic's encoder; thousands are written when the
        rules are read), keys in model order, so equal requests give equal bytes."""
        return self.model_dump_json() + "\n"


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
    """A run's JSON sidecar: its spec, its size and cost, what made it (the run code's ``source``
    hash, the package ``versions``, the ``data`` files' checksums), its table's sha256, and what
    its regret is measured against (``f_star`` and ``regret_reference``); ``metadata`` is what
    ``vhct.pipeline.run.experiment_columns`` returned (the recommendation, the tree's size, ...)."""

    model_config = ConfigDict(frozen=True, extra="allow", allow_inf_nan=False)

    format: int
    run: RunSpec
    seed: int = Field(ge=0)
    rounds: int = Field(ge=1)
    wall_seconds: float = Field(ge=0)
    python: str
    host: str
    versions: dict[str, str | None]
    source: Sha256
    data: DataChecksums
    table_sha256: Sha256
    f_star: float | None
    regret_reference: RegretReference
    metadata: dict[str, Any]

    @model_validator(mode="after")
    def _consistent(self) -> RunRecord:
        if self.format != FORMAT:
            raise ValueError(f"format {self.format}, but runs are read in format {FORMAT} only")
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

    @classmethod
    def from_json(cls, text: str | bytes) -> RunRecord:
        """The record of a sidecar's text; :class:`RunRecordError` listing every invalid field."""
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise RunRecordError(f"not JSON ({exc})") from exc
        if not isinstance(data, dict):
            raise RunRecordError(f"not a JSON object but {type(data).__name__}")
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise RunRecordError(describe(exc)) from None

    def to_json(self) -> str:
        """The sidecar's text: indented JSON, numpy values as plain numbers."""
        return json.dumps(self.model_dump(), indent=2, default=json_default) + "\n"


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


def request_difference(record: RunRecord, request: RunRequest) -> str | None:
    """The first thing where the run of ``record`` differs from ``request`` (what is asked now): a
    field of its spec (:func:`spec_difference`), the run code, a package version, or a data file's
    checksum; None when the run is the one asked for."""
    found = spec_difference(record, request.run) or made_difference(record, request.source, request.versions)
    if found is None and record.data != request.data:
        found = _first_difference("data", record.data, request.data)
    return found
