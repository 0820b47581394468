"""The claims file and the questions beyond the paper as typed records (pydantic), read by attribute.

One source for the model and the JSON schemas (``python -m vhct.reporting.audit.schema`` writes
``claims.schema.yaml`` and ``beyond.schema.yaml`` from these classes). The defaults of a claim
(``alpha``, ``min_seeds``, ``round``, ``require``) and of a question are resolved here, once; what a
kind of claim needs (its settings, its thresholds) is one table, :data:`KIND_NEEDS`, read by the
validator and by the schema. A validator's error carries the key path it concerns (the loader,
``vhct.reporting.audit.claims``, names the file).
"""

from __future__ import annotations

import copy
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator

from vhct.pipeline.config.errors import ConfigError
from vhct.pipeline.config.sections import Name, number

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
Kind = Literal[
    "lowest", "among_fastest", "similar", "best_parameter", "sublinear", "greater", "contrast", "easier"
]  # fmt: skip
Statistic = Literal[
    "cumulative_regret", "average_regret", "normalized_regret", "max_depth", "seconds_per_round",
    "optimizer_seconds_per_round",
]  # fmt: skip

#: per kind: the claim keys and the threshold keys it needs (the validator's and the schema's table)
KIND_NEEDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "lowest": (("target", "others"), ("min_relative_effect",)),
    "among_fastest": (("target", "others"), ("max_excess_over_best",)),
    "similar": (("target", "others"), ("lower_ratio", "upper_ratio")),
    "best_parameter": (("claimed", "others"), ("max_excess_over_best",)),
    "sublinear": (("target", "checkpoints"), ("max_slope",)),
    "greater": (("target", "others"), ("min_ratio",)),
    "contrast": (("target", "others", "pairs", "direction"), ("min_factor",)),
    "easier": (("others", "pairs"), ("min_relative_effect",)),
}
#: the statistics an ``easier`` claim may compare (scale-free across objectives)
EASIER_STATISTICS = ("normalized_regret", "average_regret")
#: a claim's keys filled from ``defaults`` when absent (optional in the file, set in the record)
CLAIM_DEFAULTS = ("alpha", "min_seeds", "round", "require")


def key_error(key: tuple[str, ...], text: str) -> ConfigError:
    """A validator's error ``key a/b: text``; the loader puts it below the key path it ran at and
    names the file (the config's error type: it carries the key path and the text apart)."""
    return ConfigError(f"key {'/'.join(key) or '<root>'}: {text}", key, text)


class Record(BaseModel):
    """A part of the claims or questions file: strict types, unknown keys refused, frozen."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True, allow_inf_nan=False)


def _not_required(*keys: str) -> Any:
    """A ``json_schema_extra`` leaving ``keys`` out of ``required`` (the loader fills them in)."""

    def edit(schema: dict[str, Any]) -> None:
        schema["required"] = [k for k in schema.get("required", []) if k not in keys]

    return edit


class Thresholds(Record):
    """The margins of a claim; which ones a kind needs is :data:`KIND_NEEDS`."""

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

    @property
    def refuting_ratio(self) -> float:
        """A ``greater`` claim's refuting margin: ``refuted_below``, else ``min_ratio``."""
        return self.min_ratio if self.refuted_below is None else self.refuted_below

    @property
    def refuting_slope(self) -> float:
        """A ``sublinear`` claim's refuting slope: ``refuted_above``, else 1 (linear regret)."""
        return 1.0 if self.refuted_above is None else self.refuted_above

    def given(self) -> dict[str, Any]:
        """The thresholds the file gives (as recorded in the audit)."""
        return self.model_dump(exclude_none=True)


def _kind_schema(schema: dict[str, Any]) -> None:
    """The claim's schema: the defaults-filled keys optional, each kind's needs as if/then."""
    _not_required(*CLAIM_DEFAULTS)(schema)
    rules = []
    for kind, (keys, thresholds) in KIND_NEEDS.items():
        then: dict[str, Any] = {
            "required": list(keys), "properties": {"thresholds": {"required": list(thresholds)}}
        }  # fmt: skip
        if kind == "easier":
            then["properties"]["statistic"] = {"enum": list(EASIER_STATISTICS)}
        rules.append({"if": {"properties": {"kind": {"const": kind}}}, "then": then})
    schema["allOf"] = rules


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
    kind: Kind
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

    @model_validator(mode="after")
    def _semantics(self) -> Claim:
        """What each kind needs (:data:`KIND_NEEDS`), and what a type cannot say."""
        keys, needed = KIND_NEEDS[self.kind]
        for key in keys:
            if getattr(self, key) is None:
                raise key_error((), f"'{key}' is a required property of a {self.kind} claim")
        for key in needed:
            if getattr(self.thresholds, key) is None:
                raise key_error(("thresholds",), f"'{key}' is a required property of a {self.kind} claim")
        if self.kind == "easier" and self.statistic not in EASIER_STATISTICS:
            raise key_error(("statistic",), f"an easier claim compares {' or '.join(EASIER_STATISTICS)}")
        named = [self.target] if self.target is not None else []
        named += list(self.claimed or []) + list(self.others or [])
        twice = sorted({s for s in named if named.count(s) > 1})
        if twice:
            raise key_error((), f"settings listed twice: {twice}")
        points = self.checkpoints
        if points is not None and any(b <= a for a, b in zip(points, points[1:], strict=False)):
            raise key_error(("checkpoints",), f"must increase, got {points}")
        if self.kind == "sublinear" and self.others:
            raise key_error(("others",), "a sublinear check reads only its target")
        if self.kind == "contrast" and len(self.others or []) != 1:
            raise key_error(("others",), "a contrast names exactly one other setting")
        th = self.thresholds
        if self.kind == "similar" and th.lower_ratio >= th.upper_ratio:
            raise key_error(("thresholds",), "lower_ratio must be below upper_ratio")
        if self.kind == "greater" and th.refuting_ratio > th.min_ratio:
            raise key_error(("thresholds",), "refuted_below exceeds min_ratio")
        return self

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
    """The verdict rule of each kind, in words (rendered into the audit)."""

    footing: Text
    lowest: Text | None = None
    among_fastest: Text | None = None
    similar: Text | None = None
    best_parameter: Text | None = None
    sublinear: Text | None = None
    greater: Text | None = None
    contrast: Text | None = None
    easier: Text | None = None
    combine: Text

    def texts(self) -> dict[str, str]:
        """The rules the file gives, by kind (as recorded in the audit)."""
        return self.model_dump(exclude_none=True)


class Choice(Record):
    """An implementation choice the paper leaves open: variant settings substituted for default ones,
    and every claim naming a substituted setting is evaluated again under the variant."""

    id: Name
    choice: Text
    default: Text
    variant: Text
    substitute: dict[Name, Name] = Field(
        min_length=1, description="default setting -> the setting that runs the variant"
    )

    @model_validator(mode="after")
    def _not_itself(self) -> Choice:
        same = sorted(k for k, v in self.substitute.items() if k == v)
        if same:
            raise key_error(("substitute",), f"a setting substituted by itself: {same}")
        return self


class Discrepancy(Record):
    """A discrepancy in the paper and how this replication resolves it."""

    id: Name
    where: Text
    paper: Text
    issue: Text
    resolution: Text


def _unique_ids(items: list[Any], section: str) -> None:
    seen: set[str] = set()
    for i, item in enumerate(items):
        if item.id in seen:
            raise key_error((section, str(i), "id"), f"duplicate id {item.id!r}")
        seen.add(item.id)


def _filled(data: Any, items: str, defaults: tuple[str, ...] | None = None) -> Any:
    """A copy of ``data`` whose ``items`` get the keys of ``data["defaults"]`` they omit."""
    if not (isinstance(data, dict) and isinstance(data.get("defaults"), dict)):
        return data
    if not isinstance(data.get(items), list):
        return data
    data = dict(data)
    keys = defaults if defaults is not None else tuple(data["defaults"])
    data[items] = [
        {**{k: copy.deepcopy(data["defaults"][k]) for k in keys if k in data["defaults"]}, **item}
        if isinstance(item, dict)
        else item
        for item in data[items]
    ]
    return data


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

    @model_validator(mode="before")
    @classmethod
    def _defaults(cls, data: Any) -> Any:
        return _filled(data, "claims", CLAIM_DEFAULTS)

    @model_validator(mode="after")
    def _across(self) -> ClaimsFile:
        """Unique ids per section, a rule text for every kind used."""
        for section in ("claims", "discrepancies", "sensitivity"):
            _unique_ids(getattr(self, section), section)
        for i, claim in enumerate(self.claims):
            if getattr(self.rules, claim.kind) is None:
                raise key_error(("claims", str(i), "kind"), f"no rule text for kind {claim.kind!r}")
        return self

    @property
    def experiments(self) -> list[str]:
        """Every experiment some claim lists, in first-use order."""
        return list(dict.fromkeys(e for claim in self.claims for e in claim.experiments))


# ---------------------------------------------------------------- the questions beyond the paper


class QuestionThresholds(Record):
    min_relative_effect: number(ge=0, lt=1)  # type: ignore[valid-type]

    def given(self) -> dict[str, Any]:
        return self.model_dump()


QuestionStatistic = Literal["cumulative_regret", "average_regret"]
Names = Annotated[list[Text], Field(min_length=1)]
#: a question's keys filled from ``defaults`` when absent
QUESTION_DEFAULTS = ("alpha", "min_seeds", "round", "statistic", "thresholds", "experiments")


class BeyondDefaults(Record):
    alpha: OpenUnit  # type: ignore[valid-type]
    min_seeds: MinSeeds
    round: Round
    statistic: QuestionStatistic
    thresholds: QuestionThresholds
    experiments: Names


class BeyondRules(Record):
    question: Text


class Question(Record):
    """A question the paper did not ask, two-sided: does setting ``a`` beat ``b``?"""

    model_config = ConfigDict(json_schema_extra=_not_required(*QUESTION_DEFAULTS))
    id: Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9-]*$")]
    question: Text
    a: Text
    b: Text
    experiments: Names = Field(description="defaults/experiments when absent")
    alpha: OpenUnit = Field(description="defaults/alpha when absent")  # type: ignore[valid-type]
    min_seeds: MinSeeds = Field(description="defaults/min_seeds when absent")
    round: Round = Field(description="defaults/round when absent")
    statistic: QuestionStatistic = Field(description="defaults/statistic when absent")
    thresholds: QuestionThresholds = Field(description="defaults/thresholds when absent")

    @model_validator(mode="after")
    def _two_sides(self) -> Question:
        if self.a == self.b:
            raise key_error(("b",), f"the same setting as a ({self.a!r})")
        return self


class BeyondFile(Record):
    """Questions beyond the paper (``config/beyond.yaml``), answered with the audit's machinery."""

    model_config = ConfigDict(title="questions beyond the paper (src/vhct/resources/beyond.yaml)")
    version: Literal[1]
    defaults: BeyondDefaults
    rules: BeyondRules
    questions: list[Question] = Field(min_length=1)

    @model_validator(mode="before")
    @classmethod
    def _defaults(cls, data: Any) -> Any:
        return _filled(data, "questions")

    @model_validator(mode="after")
    def _unique(self) -> BeyondFile:
        _unique_ids(self.questions, "questions")
        return self

    @property
    def experiments(self) -> list[str]:
        """Every experiment some question reads, in first-use order."""
        return list(dict.fromkeys(e for q in self.questions for e in q.experiments))
