"""The claims file as typed records (pydantic), the source of its JSON schema (``audit.schema``).

A claim's defaults are resolved here, once; what its kind needs, the kind's class says
(:data:`CLAIM_KINDS`). A validator's error carries its key path (the loader names the file).
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator

from vhct.pipeline.config.errors import ConfigError
from vhct.pipeline.config.sections import Name, number
from vhct.registry import Registry
from vhct.reporting.audit.statistics import statistic_names

Text = Annotated[str, StringConstraints(min_length=1)]
OpenUnit = number(gt=0, lt=1)
Positive = number(gt=0)
MinSeeds = Annotated[int, Field(ge=2)]
Round = Annotated[
    Literal["final", "common"] | Annotated[int, Field(ge=1)],
    Field(
        description="the round the statistic is read at; final = the experiment's last round (a setting "
        "that stopped earlier is not compared); common = the last round both settings ran (labelled when "
        "earlier)"
    ),
]
Require = Annotated[
    Literal["all", "majority"],
    Field(description='all = every evaluated experiment must hold; majority = a majority ("in general")'),
]
#: a claim's statistic: a name of the statistics table (``vhct.reporting.audit.statistics``)
Statistic = Literal[statistic_names()]  # type: ignore[valid-type]

#: every kind of claim: its name -> its class in ``vhct.reporting.audit.kinds`` (two samples) or
#: ``kinds_one_sample`` (one per-seed quantity against constants), imported on first use; adding a
#: kind is a class there and its row here. The targets are written out whole: the audit's code
#: hash follows them as imports (``vhct.pipeline.versions.module_imports``)
CLAIM_KINDS: Registry[Any] = Registry("claim kind")
for _name, _target in (
    ("lowest", "vhct.reporting.audit.kinds:Lowest"),
    ("among_fastest", "vhct.reporting.audit.kinds:AmongFastest"),
    ("similar", "vhct.reporting.audit.kinds:Similar"),
    ("best_parameter", "vhct.reporting.audit.kinds:BestParameter"),
    ("greater", "vhct.reporting.audit.kinds:Greater"),
    ("contrast", "vhct.reporting.audit.kinds:Contrast"),
    ("easier", "vhct.reporting.audit.kinds:Easier"),
    ("difference_contrast", "vhct.reporting.audit.kinds:DifferenceContrast"),
    ("sublinear", "vhct.reporting.audit.kinds_one_sample:Sublinear"),
    ("share_at_least", "vhct.reporting.audit.kinds_one_sample:ShareAtLeast"),
    ("same_rate", "vhct.reporting.audit.kinds_one_sample:SameRate"),
    ("wall_time", "vhct.reporting.audit.kinds_one_sample:WallTime"),
):
    CLAIM_KINDS.register(_name, _target)
#: a claim's keys filled from ``defaults`` when absent (optional in the file, set in the record)
CLAIM_DEFAULTS = ("alpha", "min_seeds", "round", "require")


def key_error(key: tuple[str, ...], text: str) -> ConfigError:
    """A validator's error ``key a/b: text`` (a ConfigError: the loader re-keys it and names the file)."""
    return ConfigError(f"key {'/'.join(key) or '<root>'}: {text}", key, text)


class Record(BaseModel):
    """A part of the claims or questions file: strict types, unknown keys refused, frozen."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True, allow_inf_nan=False)


def not_required(*keys: str) -> Any:
    """A ``json_schema_extra`` leaving ``keys`` out of ``required`` (the loader fills them in)."""

    def edit(schema: dict[str, Any]) -> None:
        schema["required"] = [k for k in schema.get("required", []) if k not in keys]

    return edit


class Thresholds(Record):
    """The margins of a claim; which ones a kind needs, its class says (:data:`CLAIM_KINDS`)."""

    model_config = ConfigDict(json_schema_extra={"minProperties": 1})
    min_relative_effect: number(ge=0, lt=1) | None = None  # type: ignore[valid-type]
    max_excess_over_best: number(ge=0) | None = None  # type: ignore[valid-type]
    lower_ratio: Positive | None = None  # type: ignore[valid-type]
    upper_ratio: Positive | None = None  # type: ignore[valid-type]
    min_ratio: Positive | None = None  # type: ignore[valid-type]
    refuted_below: Positive | None = None  # type: ignore[valid-type]
    max_slope: Positive | None = None  # type: ignore[valid-type]
    refuted_above: Positive | None = None  # type: ignore[valid-type]
    min_factor: number(ge=1) | None = None  # type: ignore[valid-type]
    min_share: number(gt=0, le=1) | None = None  # type: ignore[valid-type]
    min_difference: number(ge=0) | None = None  # type: ignore[valid-type]
    max_slope_difference: Positive | None = None  # type: ignore[valid-type]
    seconds: Positive | None = None  # type: ignore[valid-type]

    def given(self) -> dict[str, Any]:
        """The thresholds the file gives (as recorded in the audit)."""
        return self.model_dump(exclude_none=True)


def _kind_schema(schema: dict[str, Any]) -> None:
    """The claim's schema: defaults optional, an effect of interest required (the record reads audits
    made before it), the registered kinds, each kind's needs as if/then."""
    not_required(*CLAIM_DEFAULTS)(schema)
    schema["required"] = [*schema.get("required", []), "effect_of_interest"]
    effect = schema["properties"]["effect_of_interest"]
    effect["anyOf"] = [option for option in effect["anyOf"] if option.get("type") != "null"]
    effect.pop("default", None)
    schema["properties"]["kind"] = {"enum": list(CLAIM_KINDS), "title": "Kind", "type": "string"}
    rules = []
    for name in CLAIM_KINDS:
        kind = CLAIM_KINDS[name]
        then: dict[str, Any] = {
            "required": list(kind.keys),
            "properties": {"thresholds": {"required": list(kind.thresholds)}},
        }
        if kind.statistics is not None:
            then["properties"]["statistic"] = {"enum": list(kind.statistics)}
        rules.append({"if": {"properties": {"kind": {"const": name}}}, "then": then})
    schema["allOf"] = rules


class EffectOfInterest(Record):
    """The smallest effect a claim's comparisons are sized to detect (the analysis plan's power), in the
    scale of the comparison's effect (its ``effect_name``: a ratio of means, a ratio of ratios, a mean
    slope, ...), inside the claimed region; stated apart from the margins, with its reason."""

    value: float = Field(description="the effect (the comparison's estimate) at which 80 % power is computed")
    reason: Text = Field(description="one line: why this size matters")


class Claim(Record):
    """One empirical claim of the paper as a check, with its defaults resolved."""

    model_config = ConfigDict(json_schema_extra=_kind_schema)
    id: Name
    quote: Text
    location: Text
    note: Text | None = None
    reading_of: Name | None = Field(
        None,
        description="claims that read one statement differently share this name; a disagreement is a flip",
    )
    experiments: list[Name] = Field(min_length=1)
    kind: Name
    statistic: Statistic
    target: Name | None = None
    others: list[Name] | None = Field(None, min_length=1)
    claimed: list[Name] | None = Field(None, min_length=1)
    pairs: list[Annotated[list[Name], Field(min_length=2, max_length=2)]] | None = Field(
        None, min_length=1, description="pairs of experiments [first, second] compared with each other"
    )
    direction: Literal["less", "greater"] | None = None
    checkpoints: list[number(gt=0, le=1)] | None = Field(  # type: ignore[valid-type]
        None,
        min_length=2,
        description="fractions of the horizon, increasing, at which log R_t is regressed on log t",
    )
    require: Require = Field(description="defaults/require when absent")
    alpha: OpenUnit = Field(description="defaults/alpha when absent")  # type: ignore[valid-type]
    min_seeds: MinSeeds = Field(description="defaults/min_seeds when absent")
    round: Round = Field(description="defaults/round when absent")
    thresholds: Thresholds
    effect_of_interest: EffectOfInterest | None = Field(
        None,
        description="the smallest effect of interest: the seeds per arm are sized at it with the pilot's "
        "spread (inside the claimed region); required in the claims file (None only in an audit made "
        "before it existed)",
    )
    size: Text | None = Field(
        None,
        description='the paper\'s words that state the size its thresholds read ("similar", "much more"); '
        "absent: the paper states none, and the claim is tested at no difference (its kind's null), the "
        "project's margins read beside it under margins",
    )
    margins: list[Thresholds] | None = Field(
        None,
        min_length=1,
        description="other margins the verdict is also read at (the margin sensitivity): each replaces the "
        "thresholds it names, e.g. [{upper_ratio: 1.1}, {upper_ratio: 1.2}]",
    )

    @model_validator(mode="after")
    def _semantics(self) -> Claim:
        """What the claim's kind needs (its class in :data:`CLAIM_KINDS`), and what a type cannot say."""
        if self.kind not in CLAIM_KINDS:
            raise key_error(("kind",), f"unknown kind {self.kind!r} (known: {', '.join(CLAIM_KINDS)})")
        kind = self.spec
        needs = (((), self, kind.keys), (("thresholds",), self.thresholds, kind.thresholds))
        for where, record, keys in needs:
            for key in keys:
                if getattr(record, key) is None:
                    raise key_error(where, f"'{key}' is a required property of a {self.kind} claim")
        if kind.statistics is not None and self.statistic not in kind.statistics:
            raise key_error(("statistic",), f"a {self.kind} claim compares {' or '.join(kind.statistics)}")
        named = [s for s in (self.target, *(self.claimed or []), *(self.others or [])) if s is not None]
        twice = sorted({s for s in named if named.count(s) > 1})
        if twice:
            raise key_error((), f"settings listed twice: {twice}")
        points = self.checkpoints
        if points is not None and any(b <= a for a, b in zip(points, points[1:], strict=False)):
            raise key_error(("checkpoints",), f"must increase, got {points}")
        kind.validate(self)
        if self.size is None and not kind.at_no_difference(self):
            raise key_error(("size",), self._size_needed(kind))
        if self.size is not None and " ".join(self.size.lower().split()) not in " ".join(
            self.quote.lower().split()
        ):
            raise key_error(("size",), f"{self.size!r} is not words of the quote")
        effect = self.effect_of_interest
        if effect is not None and not kind.additive and effect.value <= 0.0:
            raise key_error(("effect_of_interest", "value"), "a ratio: must be positive")
        if effect is not None and not self.inside_claimed(effect.value):
            claimed = " and ".join(
                f"{'<' if r.alternative == 'less' else '>'} {r.factor:.4g}" for r in kind.regions(self)[0]
            )
            raise key_error(
                ("effect_of_interest", "value"),
                f"{self.effect_of_interest.value:g} is not inside the claimed region (effect {claimed})",
            )
        for i, margin in enumerate(self.margins or []):
            unknown = sorted(set(margin.given()) - set(kind.thresholds) - set(self.thresholds.given()))
            if unknown:
                raise key_error(("margins", str(i)), f"not a threshold of this {self.kind} claim: {unknown}")
            try:
                kind.validate(self._at(margin))
            except ConfigError as exc:
                raise key_error(("margins", str(i)), exc.text) from None
        return self

    def _size_needed(self, kind: Any) -> str:
        """Why a claim without ``size`` is refused: a margin the paper's words do not state."""
        if kind.null is None:
            return f"a {self.kind} claim reads a size: quote the paper's words that state it"
        given = ", ".join(f"{k} = {v:g}" for k, v in self.thresholds.given().items())
        return (
            f"the thresholds are a margin ({given}) and no words of the paper state that size: test at no "
            f"difference (the effect's {kind.null:g}) and put the margin under margins, or quote the "
            "paper's words that state it"
        )

    def _at(self, margin: Thresholds) -> Claim:
        thresholds = Thresholds.model_validate({**self.thresholds.given(), **margin.given()})
        return self.model_copy(update={"thresholds": thresholds, "margins": None})

    def at_margins(self) -> list[Claim]:
        """The claim at each of its other ``margins`` (none: an empty list)."""
        return [self._at(margin) for margin in self.margins or []]

    def inside_claimed(self, effect: float) -> bool:
        """Whether an effect (the comparison's estimate) lies strictly inside every claimed region."""
        return all(
            effect < r.factor if r.alternative == "less" else effect > r.factor
            for r in self.spec.regions(self)[0]
        )

    @property
    def spec(self) -> Any:
        """What the claim's kind means: its ``vhct.reporting.audit.kinds.ClaimKind``."""
        return CLAIM_KINDS[self.kind]()

    def short_of_seeds(
        self, seeds: Mapping[str, int], horizons: Mapping[str, int] | None = None, full: int | None = None
    ) -> dict[str, int]:
        """The settings of ``seeds`` (name -> seeds run) below the claim's ``min_seeds``; for a claim
        about the final round, not one that stopped (``horizons``: name -> rounds) before ``full``."""
        stopped = {s for s, h in (horizons or {}).items() if self.round == "final" and full and h < full}
        return {s: n for s, n in seeds.items() if n < self.min_seeds and s not in stopped}

    @property
    def settings(self) -> list[str]:
        """The settings the claim reads (its target, claimed and other settings), in order, once each."""
        named = [self.target, *(self.claimed or []), *(self.others or [])]
        return list(dict.fromkeys(s for s in named if s is not None))

    @property
    def experiments_read(self) -> list[str]:
        """The experiments the claim reads: its ``experiments``, or both sides of its ``pairs``."""
        pairs = [e for pair in self.pairs or [] for e in pair]
        return list(dict.fromkeys([*self.experiments, *pairs]))


class Defaults(Record):
    """The defaults of every claim."""

    alpha: OpenUnit  # type: ignore[valid-type]
    min_seeds: MinSeeds
    round: Round
    require: Require


class Rules(Record):
    """The verdict rules in words (rendered into the audit): the footing, how verdicts combine, and
    one text per kind of claim, under the kind's name."""

    model_config = ConfigDict(
        extra="allow",
        json_schema_extra=lambda schema: schema.update(
            additionalProperties={"type": "string", "minLength": 1},
            propertyNames={"enum": ["footing", "combine", *CLAIM_KINDS]},
        ),
    )
    footing: Text
    combine: Text

    @model_validator(mode="after")
    def _kinds(self) -> Rules:
        for name, text in (self.model_extra or {}).items():
            if name not in CLAIM_KINDS:
                raise key_error((name,), f"not a kind of claim (known: {', '.join(CLAIM_KINDS)})")
            if not isinstance(text, str) or not text:
                raise key_error((name,), "the rule of a kind is a non-empty text")
        return self

    def texts(self) -> dict[str, str]:
        """The rules the file gives, by kind (as recorded in the audit)."""
        return self.model_dump(exclude_none=True)


class Choice(Record):
    """An implementation choice the paper leaves open, as one of three kinds of variant (exactly one
    given): ``substitute`` (variant settings in place of default ones), ``choose_best`` (per experiment,
    the candidate with the lowest mean final cumulative regret, chosen on the audited runs) or
    ``round`` (every claim about the final round read at this round). Each claim it touches is
    evaluated again under the variant."""

    id: Name
    choice: Text
    default: Text
    variant: Text
    substitute: dict[Name, Name] = Field(
        default_factory=dict, description="default setting -> the setting that runs the variant"
    )
    choose_best: dict[Name, list[Name]] = Field(
        default_factory=dict,
        description="default setting -> its candidates (itself among them); per experiment the candidate "
        "with the lowest mean final cumulative regret on the audited runs stands in for it",
    )
    round: int | None = Field(
        default=None, ge=1, description="claims about the final round read at this round instead"
    )

    @model_validator(mode="after")
    def _not_itself(self) -> Choice:
        kinds = [k for k in ("substitute", "choose_best", "round") if getattr(self, k) not in ({}, None)]
        if len(kinds) != 1:
            raise key_error((), f"give exactly one of substitute, choose_best, round (got {kinds or 'none'})")
        same = sorted(k for k, v in self.substitute.items() if k == v)
        if same:
            raise key_error(("substitute",), f"a setting substituted by itself: {same}")
        for default, candidates in self.choose_best.items():
            if default not in candidates or len(candidates) < 2 or len(set(candidates)) < len(candidates):
                raise key_error(
                    ("choose_best", default), f"needs itself and another setting, each once: {candidates}"
                )
        return self

    @property
    def variants(self) -> dict[str, list[str]]:
        """Default setting -> the settings that may stand in for it under the variant."""
        if self.choose_best:
            return {d: [c for c in cands if c != d] for d, cands in self.choose_best.items()}
        return {d: [v] for d, v in self.substitute.items()}


class Discrepancy(Record):
    """A discrepancy in the paper and how this replication resolves it."""

    id: Name
    where: Text
    paper: Text
    issue: Text
    resolution: Text


class ComputedClaim(Record):
    """A statement of the paper about a function on the standard partition, checked by a deterministic
    computation (``vhct.objectives.cells``, evaluated by ``vhct.reporting.audit.computed``), not on runs:
    reproduced or not reproduced, never a p-value. ``gls``: for each resolution of ``resolutions`` (a
    config's ``resolution`` mapping), whether f >= f* - phi(h) on the optimal cell at every depth up to
    ``max_depth`` (``claimed: holds``) or fails at some depth (``violated``). ``near_optimal_growth``: the
    exponential part of the growth per depth of the near-optimal cells N_h (the paper's threshold for the
    objective), at least ``min_growth`` (``claimed: exponential``) or below it (``polynomial``)."""

    id: Name
    quote: Text
    location: Text
    note: Text | None = None
    objective: Name
    check: Literal["gls", "near_optimal_growth"]
    claimed: Literal["holds", "violated", "exponential", "polynomial"]
    resolutions: list[dict[str, Any]] | None = Field(None, min_length=1)
    max_depth: Annotated[int, Field(ge=1)] | None = None
    min_growth: number(gt=1) | None = None  # type: ignore[valid-type]

    @model_validator(mode="after")
    def _needs(self) -> ComputedClaim:
        needs, claims = (
            (("resolutions", "max_depth"), ("holds", "violated"))
            if self.check == "gls"
            else (("min_growth",), ("exponential", "polynomial"))
        )
        for key in needs:
            if getattr(self, key) is None:
                raise key_error((key,), f"a {self.check} check needs '{key}'")
        if self.claimed not in claims:
            raise key_error(("claimed",), f"a {self.check} check claims {' or '.join(claims)}")
        return self


class Condition(Record):
    """How the paper ran an experiment its claims read: the objective (and the parameters that make it
    the paper's, such as Rastrigin's dimension) and the noise half-width. An experiment the config runs
    otherwise gets no verdict on those claims (:meth:`departure`). The paper states no horizon."""

    objective: Name
    objective_params: dict[str, Any] = Field(
        default_factory=dict, description="the objective parameters that must match (others are free)"
    )
    noise: number(ge=0)  # type: ignore[valid-type]
    source: Text = Field(description="where the paper states it")

    def departure(self, objective: str, objective_params: Mapping[str, Any], noise: float) -> str | None:
        """How an experiment run as given departs from this condition, ``noise 0.1 (the paper's: 0.05)``,
        or None when it is run as the paper ran it."""
        if objective != self.objective:
            return f"objective {objective} (the paper's: {self.objective})"
        found = []
        for key, value in self.objective_params.items():
            given = objective_params.get(key, _default(objective, key))
            if given != value:
                found.append(f"{key} = {given!r} (the paper's: {value!r})")
        if noise != self.noise:
            found.append(f"noise {noise:g} (the paper's: {self.noise:g}, {self.source})")
        return ", ".join(found) or None


def _default(objective: str, key: str) -> Any:
    """The default of the registered ``objective``'s parameter ``key`` (None if it has none)."""
    from vhct.objectives import OBJECTIVES

    parameter = inspect.signature(OBJECTIVES[objective]).parameters.get(key)
    return None if parameter is None or parameter.default is inspect.Parameter.empty else parameter.default


def unique_ids(items: list[Any], section: str) -> None:
    seen: set[str] = set()
    for i, item in enumerate(items):
        if item.id in seen:
            raise key_error((section, str(i), "id"), f"duplicate id {item.id!r}")
        seen.add(item.id)


def filled(data: Any, items: str, defaults: tuple[str, ...] | None = None) -> Any:
    """A copy of ``data`` whose ``items`` get the keys of ``data["defaults"]`` (only ``defaults`` when
    given) they omit."""
    given = data.get("defaults") if isinstance(data, dict) else None
    if not (isinstance(given, dict) and isinstance(data.get(items), list)):
        return data
    keys = [k for k in (given if defaults is None else defaults) if k in given]
    with_defaults = [
        {**{k: copy.deepcopy(given[k]) for k in keys}, **item} if isinstance(item, dict) else item
        for item in data[items]
    ]
    return {**data, items: with_defaults}


class ClaimsFile(Record):
    """The paper's empirical claims as checks, and the paper's discrepancies (``config/claims.yaml``)."""

    model_config = ConfigDict(
        title="claims file", json_schema_extra={"description": "The paper's empirical claims as checks"}
    )
    version: Literal[1]
    defaults: Defaults
    rules: Rules
    claims: list[Claim] = Field(min_length=1)
    sensitivity: list[Choice] = Field(
        default_factory=list,
        description="implementation choices the paper leaves open; each substitutes variant settings for "
        "default ones, and every claim naming a substituted setting is evaluated again under the variant",
    )
    discrepancies: list[Discrepancy]
    computed: list[ComputedClaim] = Field(
        default_factory=list,
        description="statements about a function on the standard partition, decided by a deterministic "
        "computation (vhct.objectives.cells), not on runs",
    )
    conditions: dict[Name, Condition] = Field(
        description="how the paper ran each experiment the claims read (objective, noise); an experiment "
        "the config runs otherwise is not evaluated"
    )

    @model_validator(mode="before")
    @classmethod
    def _defaults(cls, data: Any) -> Any:
        return filled(data, "claims", CLAIM_DEFAULTS)

    @model_validator(mode="after")
    def _across(self) -> ClaimsFile:
        """Unique ids per section, a rule text for every kind used, conditions for every experiment read."""
        for section in ("claims", "discrepancies", "sensitivity", "computed"):
            unique_ids(getattr(self, section), section)
        for i, claim in enumerate(self.claims):
            if claim.effect_of_interest is None:
                raise key_error(("claims", str(i)), "'effect_of_interest' is a required property")
        for i, claim in enumerate(self.claims):
            if claim.kind not in self.rules.texts():
                raise key_error(("claims", str(i), "kind"), f"no rule text for kind {claim.kind!r}")
            missing = [e for e in claim.experiments_read if e not in self.conditions]
            if missing:
                raise key_error(("claims", str(i), "experiments"), f"no conditions for {', '.join(missing)}")
        return self

    @property
    def experiments(self) -> list[str]:
        """Every experiment some claim lists, in first-use order."""
        return list(dict.fromkeys(e for claim in self.claims for e in claim.experiments))
