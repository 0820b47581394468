"""The analysis plan of a confirmatory run: its typed record, its one reader, and what the config
loader does with it (the seeds it takes from it, the checks before it starts).

A config that declares ``plan:`` (config/paper-local.yaml) runs the seeds an analysis plan fixes
before the run: written by ``make plan`` (``vhct.reporting.audit.plan``, the one writer) from a
pilot's results (the quick start, config/config.yaml), it holds per claim and comparison the pilot's
estimate, its spread, its per-seed samples and the seeds per arm that give 80 % power at the claim's
effect of interest (``effect_of_interest``, frozen in the plan) with the pilot's spread, and per
(experiment, setting) the confirmatory seeds: the largest need of the comparisons reading it,
floored at the claims' ``min_seeds``, capped by the config's ``plan`` caps (a need past its cap runs
at the cap, "underpowered at the cap"; no need past a cap is recorded), on seeds no earlier result
used (after the pilot's, and after every seed of an earlier shipped audit:
``vhct.reporting.audit.seen``). The loader refuses to start, in one line naming the
file and what differs, when the plan is missing, was written for another config or claims file, its
pilot samples do not hash to its pilot hash, or its seed counts are not what its own comparisons give.
What needs the audit's statistics (the pilot's results hashed again, each comparison's seeds
recomputed from its samples) is checked by ``vhct.reporting.audit.plan`` (``make paper-local`` and
the workflow call it before anything is planned).
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from vhct.pipeline.config.errors import ConfigError
from vhct.pipeline.config.sections import DeclaredName, PositiveInt, Section
from vhct.pipeline.files import display_path, sha256

#: version of the plan file's shape; the reader refuses any other
PLAN_FORMAT = 2
#: the key of a config declaring its plan
PLAN_KEY = "plan"
#: what to run when a plan is missing or stale
REMEDY = "run `make plan` (after the pilot, `make figures`)"
#: statistics that are wall times: not reproducible from the pilot's results, so neither hashed nor
#: sized from the pilot (their comparisons are planned at the claims' minimum of seeds)
WALL_TIME_STATISTICS = ("seconds_per_round", "optimizer_seconds_per_round")
#: the sides of a comparison whose per-seed samples the plan embeds (a contrast has four)
SIDES = ("a", "b", "a2", "b2")


class PlanError(ConfigError):
    """A plan that does not match its config, claims or pilot: one line naming the file and what differs."""


class PlanSpec(Section):
    """A config's ``plan`` key: its analysis plan, the pilot it is computed from, the caps of its seeds."""

    file: str = Field(description="the analysis plan (written by `make plan`), relative to this config file")
    pilot: str = Field(description="the pilot's config file, relative to this config file")
    max_seeds: PositiveInt = Field(description="the most seeds per arm the plan may give a comparison")
    experiments: dict[DeclaredName, PositiveInt] = Field(
        default_factory=dict, description="a lower cap of the seeds per arm in these experiments"
    )
    settings: dict[DeclaredName, PositiveInt] = Field(
        default_factory=dict, description="a lower cap of the seeds per arm of these settings (e.g. BO)"
    )


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PlannedComparison(_Record):
    """One comparison of a claim as the pilot measured it, and the seeds per arm the plan gives it."""

    experiment: str = Field(description="the experiment, or 'first / second' for a pair")
    a: str
    b: str
    #: the (experiment, setting) arms whose runs it reads
    arms: list[Annotated[list[str], Field(min_length=2, max_length=2)]]
    effect_name: str = ""
    estimate: float | None = None
    std_a: float | None = None
    std_b: float | None = None
    pilot_seeds: list[int] = Field(description="the pilot's seeds per side (n_a, n_b)")
    #: side (a, b, a2, b2) -> seed -> the pilot's per-seed statistic (none for a wall time)
    samples: dict[str, dict[str, float]] = Field(default_factory=dict)
    seeds_needed: int | None = Field(
        None,
        description="seeds per arm for 80 % power at the claim's effect of interest and the pilot's spread; "
        "None past the cap (never recorded) or for a wall time",
    )
    seeds: int = Field(
        ge=1, description="the seeds per arm it gets: seeds_needed floored; past its cap, the cap"
    )
    underpowered: bool = Field(description="its need passes the cap: it runs at the cap, short of 80 % power")
    note: str = ""


class PlannedClaim(_Record):
    """A claim as the plan reads it (what the verdict will be decided on) and its comparisons."""

    id: str
    reading_of: str | None = None
    kind: str
    statistic: str
    round: str | int
    alpha: float
    min_seeds: int
    thresholds: dict[str, Any]
    #: the smallest effect of interest the seeds are sized at (the claims file's, frozen here)
    effect_of_interest: float
    comparisons: list[PlannedComparison]


class Pilot(_Record):
    """The pilot the plan was computed from: its config, its seeds and the hash of its samples."""

    config: str
    results: str
    seeds: dict[str, list[int]]
    samples_sha256: str


class Plan(_Record):
    """An analysis plan (config/plans/<config>.yaml), written before the confirmatory run."""

    format: int
    config: str
    config_sha256: str = Field(description="of the merged config without its seeds (see config_sha256)")
    claims_file: str = Field(description="the claims file, relative to the plan's folder")
    claims_sha256: str
    commit: str | None
    dirty: bool | None
    pilot: Pilot
    floor: int = Field(ge=1, description="the claims' min_seeds: no arm runs fewer")
    start: int = Field(
        ge=0,
        description="the first confirmatory seed: after the pilot's largest and every shipped audit's",
    )
    seen: dict[str, int] = Field(
        default_factory=dict,
        description="commit -> the largest seed its shipped audit used (docs/findings/audit.json in the "
        "repository's history): the confirmatory seeds start after all of them",
    )
    substitutes: dict[str, list[str]] = Field(
        default_factory=dict,
        description="default -> its variants (every sensitivity row's): a variant runs its default's seeds",
    )
    seeds: dict[str, dict[str, int]] = Field(description="experiment -> setting -> confirmatory seeds")
    claims: list[PlannedClaim]

    def seed_list(self, experiment: str, setting: str) -> list[int]:
        """The confirmatory seeds of one (experiment, setting)."""
        return list(range(self.start, self.start + self.seeds[experiment][setting]))

    def underpowered(self) -> list[str]:
        """The comparisons its caps leave underpowered, named."""
        return [
            f"{c.id}: {p.experiment}, {p.a} vs {p.b} ({p.note})"
            for c in self.claims
            for p in c.comparisons
            if p.underpowered
        ]


# ---------------------------------------------------------------- hashes (one function each)


def _digest(data: Any) -> str:
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()


def config_sha256(source: Mapping[str, Any]) -> str:
    """The hash of a merged config (``merged_files``) without what its plan determines: every
    experiment's ``seeds``, the caps' ``max_seeds`` and the plan file's own location."""
    data = copy.deepcopy(dict(source))
    for exp in (data.get("experiments") or {}).values():
        if isinstance(exp, dict):
            exp.pop("seeds", None)
            for caps in (exp.get("caps") or {}).values():
                if isinstance(caps, dict):
                    caps.pop("max_seeds", None)
    if isinstance(data.get(PLAN_KEY), dict):  # where the plan and the pilot are is not what they hold
        data[PLAN_KEY] = {k: v for k, v in data[PLAN_KEY].items() if k not in ("file", "pilot")}
    data.pop("output", None)
    return _digest(data)


def samples_sha256(claims: Sequence[PlannedClaim]) -> str:
    """The hash of the pilot's per-seed samples a plan embeds (wall times are not embedded)."""
    return _digest(
        [[c.id, p.experiment, p.a, p.b, p.samples] for c in claims for p in c.comparisons if p.samples]
    )


# ---------------------------------------------------------------- the seed computation's arithmetic


def planned_seeds(needed: int | None, floor: int, cap: int) -> tuple[int, bool]:
    """The seeds per arm a comparison gets, and whether its cap leaves it underpowered: its need
    floored at ``floor``; a need above ``cap`` (or ``None``: no number of seeds powers it) runs at
    the cap, underpowered."""
    if needed is None or needed > cap:
        return cap, True
    return max(needed, floor), False


def shown_need(needed: int | None, cap: int) -> int | None:
    """The need a document may state: ``needed`` within ``cap``, else None (a need past a cap is never
    printed: it reads "underpowered at the cap")."""
    return needed if needed is not None and needed <= cap else None


def need_text(needed: int | None, cap: int) -> str:
    """The one wording of a comparison's need (the plan's notes, the audit's reasons)."""
    if needed is None or needed > cap:
        return f"underpowered at the cap ({cap} seeds)"
    return f"{needed} seeds per arm give 80 % power at the effect of interest"


def seed_table(
    plan_claims: Sequence[PlannedClaim],
    arms: Mapping[str, Sequence[str]],
    floor: int,
    cap: Any,
    substitutes: Mapping[str, Sequence[str]],
) -> dict[str, dict[str, int]]:
    """Per (experiment, setting) of ``arms`` (experiment -> its settings): the largest seeds of the
    comparisons reading it, at least ``floor`` (capped: ``cap(experiment, setting)``); a variant
    setting (``substitutes``: default -> its variants) at least its default's."""
    table = {e: {s: min(floor, cap(e, s)) for s in settings} for e, settings in arms.items()}
    for claim in plan_claims:
        for comp in claim.comparisons:
            for experiment, setting in comp.arms:
                if setting in table.get(experiment, {}):
                    table[experiment][setting] = max(table[experiment][setting], comp.seeds)
    for experiment, by_setting in table.items():
        for default, variants in substitutes.items():
            for variant in variants:
                if default in by_setting and variant in by_setting:
                    by_setting[variant] = min(
                        max(by_setting[variant], by_setting[default]), cap(experiment, variant)
                    )
    return table


# ---------------------------------------------------------------- the one reader


def read_plan(path: Path | str, where: str = "") -> Plan:
    """The plan file at ``path``; a missing, unreadable or malformed one is a PlanError naming it."""
    prefix = f"{where}: " if where else ""
    path = Path(path)
    if not path.is_file():
        raise PlanError(f"{prefix}the analysis plan {display_path(path)} is missing: {REMEDY}")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise PlanError(
            f"{prefix}cannot read the analysis plan {display_path(path)} ({exc}): {REMEDY}"
        ) from None
    if not isinstance(data, dict) or data.get("format") != PLAN_FORMAT:
        found = data.get("format") if isinstance(data, dict) else None
        raise PlanError(
            f"{prefix}the analysis plan {display_path(path)} has format {found!r}, this code reads "
            f"{PLAN_FORMAT}: {REMEDY}"
        )
    try:
        return Plan.model_validate(data)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        at = "/".join(map(str, first["loc"])) or "record"
        raise PlanError(
            f"{prefix}analysis plan {display_path(path)}: {at}: {first['msg']}: {REMEDY}"
        ) from None


def plan_text(plan: Plan) -> str:
    """The plan file's text (the writer's; leaves in flow style to keep the samples compact)."""
    header = (
        "# Analysis plan, written by `make plan` (python -m vhct.reporting.audit.plan) from the pilot's\n"
        "# results before the confirmatory run; `make paper-local` refuses to start unless it matches.\n"
        "# Do not edit: every count is checked against the computation from the samples below.\n"
    )
    return header + yaml.safe_dump(plan.model_dump(), sort_keys=False, default_flow_style=None, width=100)


# ---------------------------------------------------------------- what the loader does


def declaring_file(chain: Sequence[tuple[Path, Mapping[str, Any]]], key: str) -> Path | None:
    """The last config file of a base chain whose ``plan`` gives ``key`` (that path is relative to it)."""
    found = [p for p, c in chain if isinstance(c.get(PLAN_KEY), Mapping) and key in c[PLAN_KEY]]
    return found[-1] if found else None


def resolve(spec: Mapping[str, Any], chain: Sequence[tuple[Path, Mapping[str, Any]]]) -> dict[str, Any]:
    """The ``plan`` key with its ``file`` and ``pilot`` as the working directory names them (each
    relative to the config file that gives it)."""
    out = dict(spec)
    for key in ("file", "pilot"):
        declared_in = declaring_file(chain, key)
        if isinstance(out.get(key), str) and declared_in is not None:
            out[key] = display_path((declared_in.parent / out[key]).resolve())
    return out


def check_plan(plan: Plan, source: Mapping[str, Any], cap: Any, where: str) -> None:
    """What the pipeline layer checks of a plan against its config ``source`` (merged, before the plan
    is applied): config and claims hashes, the samples' hash, every comparison's seeds and the seed table.
    ``cap(experiment, setting)``: the config's cap; ``where``: the config file, for the message."""
    at = f"{where}: analysis plan {plan_path(source)}"
    here = config_sha256(source)
    if plan.config_sha256 != here:
        raise PlanError(
            f"{at} was written for another config (its config hash {plan.config_sha256[:12]}, this "
            f"config's {here[:12]}: the config changed after the plan): {REMEDY}"
        )
    claims = claims_path(plan, plan_path(source))
    now = sha256(claims) if claims.is_file() else "missing"
    if plan.claims_sha256 != now:
        raise PlanError(
            f"{at} was written for another claims file ({plan.claims_file}: its hash "
            f"{plan.claims_sha256[:12]}, now {now[:12]}): {REMEDY}"
        )
    embedded = samples_sha256(plan.claims)
    if embedded != plan.pilot.samples_sha256:
        raise PlanError(
            f"{at}: its embedded pilot samples hash to {embedded[:12]}, not to its pilot hash "
            f"{plan.pilot.samples_sha256[:12]} (the plan was edited): {REMEDY}"
        )
    for claim in plan.claims:
        for comp in claim.comparisons:
            limit = min(cap(e, s) for e, s in comp.arms) if comp.arms else plan.floor
            if claim.statistic in WALL_TIME_STATISTICS:  # not sized from the pilot: the floor
                want, short = min(claim.min_seeds, limit), False
            else:
                want, short = planned_seeds(comp.seeds_needed, claim.min_seeds, limit)
            if comp.seeds_needed != shown_need(comp.seeds_needed, limit) or short != comp.underpowered:
                raise PlanError(
                    f"{at}: {claim.id}, {comp.experiment}, {comp.a} vs {comp.b} records a need "
                    f"{'past' if short else 'within'} its cap {limit} inconsistently: {REMEDY}"
                )
            if comp.seeds != want:
                raise PlanError(
                    f"{at}: {claim.id}, {comp.experiment}, {comp.a} vs {comp.b} gets {comp.seeds} seeds, "
                    f"the plan's computation gives {want} (needed {comp.seeds_needed}, floor "
                    f"{claim.min_seeds}, cap {limit}): {REMEDY}"
                )
    arms = {name: list(exp.get("settings") or []) for name, exp in (source.get("experiments") or {}).items()}
    want_table = seed_table(plan.claims, arms, plan.floor, cap, plan.substitutes)
    if plan.seeds != want_table:
        diff = _first_difference(plan.seeds, want_table)
        raise PlanError(f"{at}: its seed counts are not its computation's ({diff}): {REMEDY}")
    largest = max((s for seeds in plan.pilot.seeds.values() for s in seeds), default=-1)
    if plan.start <= largest:
        raise PlanError(
            f"{at}: its confirmatory seeds start at {plan.start}, not after the pilot's largest seed "
            f"{largest}: {REMEDY}"
        )


def _first_difference(have: Mapping[str, Mapping[str, int]], want: Mapping[str, Mapping[str, int]]) -> str:
    for experiment in sorted(set(have) | set(want)):
        a, b = have.get(experiment, {}), want.get(experiment, {})
        for setting in sorted(set(a) | set(b)):
            if a.get(setting) != b.get(setting):
                return f"{experiment}/{setting}: {a.get(setting)} in the plan, {b.get(setting)} computed"
    return "none"


def claims_path(plan: Plan, path: Path | str) -> Path:
    """The claims file of the plan at ``path`` (recorded relative to the plan's folder)."""
    return Path(path).parent / plan.claims_file


def plan_path(source: Mapping[str, Any]) -> str:
    """The plan file a (resolved) config names."""
    return str(source[PLAN_KEY]["file"])


def caps_of(spec: Mapping[str, Any]) -> Any:
    """``cap(experiment, setting)``: the most seeds per arm a config's ``plan`` key allows there."""
    default = spec.get("max_seeds")
    by_experiment, by_setting = spec.get("experiments") or {}, spec.get("settings") or {}

    def cap(experiment: str, setting: str) -> int:
        limits = [default, by_experiment.get(experiment), by_setting.get(setting)]
        return min(v for v in limits if v is not None)

    return cap


def apply_plan(source: dict[str, Any], plan: Plan) -> dict[str, Any]:
    """``source`` with every experiment's seeds and every setting's seeds there taken from the plan:
    the experiment runs seeds ``start ..`` as many as its most planned setting, each setting the
    first of them it is planned (a ``caps`` entry per setting)."""
    out = copy.deepcopy(source)
    for name, exp in (out.get("experiments") or {}).items():
        planned = plan.seeds.get(name)
        missing = [s for s in exp.get("settings") or [] if planned is None or s not in planned]
        if missing:
            raise PlanError(f"analysis plan {plan_path(source)}: no seeds for {name}/{missing[0]}: {REMEDY}")
        exp["seeds"] = list(range(plan.start, plan.start + max(planned.values())))
        caps = exp.setdefault("caps", {})
        for setting in exp["settings"]:
            entry = caps.setdefault(setting, {})
            entry["max_seeds"] = planned[setting]
    return out


def resolved(source: dict[str, Any], chain: Sequence[tuple[Path, Mapping[str, Any]]]) -> dict[str, Any]:
    """The merged config ``source`` of the files of ``chain`` (``base_chain``) with its ``plan`` paths
    as the working directory names them (the loader's and the writer's one way to read the key)."""
    spec = source.get(PLAN_KEY)
    if not isinstance(spec, dict):
        return source  # (absent, or malformed: the model reports it)
    return {**source, PLAN_KEY: resolve(spec, chain)}


def provisional(source: dict[str, Any], pilot_source: Mapping[str, Any]) -> dict[str, Any]:
    """``source`` validated without its plan (``load(plan=False)``: what only inspects a config): each
    experiment's own seed count, on seeds after the pilot's (``pilot_source``: its merged config),
    from the first seed past them a figure of ``source`` names (the config's first confirmatory seed:
    the plan starts after every seed a shipped audit used too, ``vhct.reporting.audit.seen``)."""
    largest = -1
    for exp in (pilot_source.get("experiments") or {}).values():
        seeds = exp.get("seeds") if isinstance(exp, dict) else None
        largest = max(largest, seeds - 1 if isinstance(seeds, int) else max(seeds or [-1]))
    named = [s for s in _figure_seeds(source.get("figures")) if s > largest]
    start = min(named, default=largest + 1)
    out = copy.deepcopy(source)
    for exp in (out.get("experiments") or {}).values():
        seeds = exp.get("seeds")
        count = seeds if isinstance(seeds, int) else len(seeds or [])
        exp["seeds"] = list(range(start, start + count))
    return out


def _figure_seeds(node: Any) -> list[int]:
    """Every seed a config's ``figures`` name (a ``seed`` key at any depth)."""
    if isinstance(node, Mapping):
        own = [node["seed"]] if isinstance(node.get("seed"), int) else []
        return own + [s for v in node.values() for s in _figure_seeds(v)]
    if isinstance(node, list):
        return [s for v in node for s in _figure_seeds(v)]
    return []


def load_plan(source: dict[str, Any], where: str) -> tuple[dict[str, Any], Plan | None]:
    """The (resolved) config ``source`` with its seeds taken from its checked plan, and the plan."""
    spec = source.get(PLAN_KEY)
    if not isinstance(spec, dict) or not isinstance(spec.get("file"), str):
        return source, None  # (no plan, or a malformed key: the model reports it)
    plan = read_plan(plan_path(source), where)
    try:
        cap = caps_of(PlanSpec.model_validate(copy.deepcopy(spec)).model_dump())
    except ValidationError:
        return source, None  # (the model reports it, naming the key)
    check_plan(plan, source, cap, where)
    return apply_plan(source, plan), plan
