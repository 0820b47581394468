"""The audit's typed records, their one JSON writer (:func:`audit_json`) and one reader (:func:`read_audit`):
a missing or unknown field is refused naming file and field (:class:`AuditRecordError`), so a renderer
never guesses a key; non-finite floats are written as ``"nan"``/``"inf"`` and read back. The records'
vocabulary (verdicts, their categories, the answers of a question) is defined here, and the reader
refuses any other word and any estimate that is not finite where a decided comparison needs one."""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, TypeAdapter, ValidationError
from pydantic.dataclasses import dataclass

from vhct.pipeline.specs import ExperimentInfo
from vhct.reporting.audit.claims_model import Choice, Claim, ComputedClaim, Condition, Discrepancy
from vhct.reporting.audit.questions_model import Question

#: version of the audit's JSON shape; the reader refuses any other (6: records embed their claim,
#: question or choice, every comparison carries every field, the paper's conditions are recorded;
#: 7: a claim records the paper's words that state its size, else it is tested at no difference)
AUDIT_FORMAT = 7
#: a comparison whose tests are computed but whose verdict the claim level has not decided yet
PENDING = "pending"
#: the verdicts of a claim, an experiment and a comparison
REPRODUCED = "reproduced"
NOT_REPRODUCED = "not reproduced"
INCONCLUSIVE = "inconclusive"
NOT_EVALUATED = "not evaluated"
VERDICTS = (REPRODUCED, NOT_REPRODUCED, INCONCLUSIVE, NOT_EVALUATED)
#: the sub-categories of the verdicts (``Comparison.category`` and every result's ``category``)
OPPOSITE = "the opposite"
NO_EFFECT = "no effect of the claimed size"
UNDERPOWERED = "underpowered"
TOO_FEW = "too few seeds"
CATEGORIES = {
    REPRODUCED: (REPRODUCED,),
    NOT_REPRODUCED: (OPPOSITE, NO_EFFECT),
    INCONCLUSIVE: (TOO_FEW, UNDERPOWERED),
    NOT_EVALUATED: (NOT_EVALUATED,),
}
#: a sensitivity row's variant verdict for a claim the variant cannot be read on (see its reason)
NOT_APPLICABLE = "not applicable"
#: answers of a two-sided question beyond the paper (``verdicts.decide_question``), beside
#: "``setting`` better" (:data:`BETTER`)
NO_DIFFERENCE = "no significant difference"
TOO_FEW_SEEDS = "inconclusive (too few seeds)"
BETTER = "{} better"
#: a computed statement's verdicts
COMPUTED_VERDICTS = (REPRODUCED, NOT_REPRODUCED)
#: derived fields a comparison's JSON carries for the human reader (not read back)
DERIVED_FIELDS = ("label", "early")


class AuditRecordError(ValueError):
    """An audit record that cannot be read: the message names the file and the field."""


@dataclass(frozen=True, config=ConfigDict(extra="forbid"))
class Comparison:
    """One test of a claim: setting ``a`` against ``b`` (or a bound when ``b`` is ``-``); a pydantic
    dataclass, as checks and the calibration build thousands with ``dataclasses.replace``.

    ``claimed``/``refuted``/``no_effect``: the regions tested, ``p_*`` their one-sided p-values,
    ``p_*_holm`` Holm-adjusted; ``round``: where read (labelled before ``horizon``); ``ci_*``: the
    effect's interval; ``resamples``: None for an analytic test; ``seeds_needed``: per arm, to decide at
    80 % power; ``total_*``: seconds per round with the objective; ``values_*2``: a contrast's second.
    """

    experiment: str
    a: str
    b: str
    claimed: str = ""
    refuted: str = ""
    round: int | None = None
    horizon: int | None = None
    n_a: int = 0
    n_b: int = 0
    mean_a: float = math.nan
    mean_b: float = math.nan
    std_a: float = math.nan
    std_b: float = math.nan
    effect: float = math.nan
    effect_name: str = ""
    p_claimed: float | None = None
    p_refuted: float | None = None
    p_refuted_holm: float | None = None
    p_claimed_holm: float | None = None
    verdict: str = PENDING
    reason: str = ""
    reference: str = ""
    values_a: dict[str, float] = dataclasses.field(default_factory=dict)
    values_b: dict[str, float] = dataclasses.field(default_factory=dict)
    ci_low: float | None = None
    ci_high: float | None = None
    total_a: float | None = None
    total_b: float | None = None
    no_effect: str = ""
    p_no_effect: float | None = None
    p_no_effect_holm: float | None = None
    ci_level: float | None = None
    resamples: int | None = None
    category: str = ""
    seeds_needed: int | None = None
    values_a2: dict[str, float] = dataclasses.field(default_factory=dict)
    values_b2: dict[str, float] = dataclasses.field(default_factory=dict)

    @property
    def early(self) -> bool:
        """Read before the experiment's last round (a setting that stopped early)."""
        return self.round is not None and self.horizon is not None and self.round < self.horizon

    @property
    def label(self) -> str:
        """``a vs b``, with the round when it is not the experiment's last (``at t = 50 of 500``)."""
        text = self.a if self.b == "-" else f"{self.a} vs {self.b}"
        return text + (f" at t = {self.round} of {self.horizon}" if self.early else "")

    @property
    def why(self) -> str:
        """The reason without the regret reference it ends with (a renderer states that once)."""
        suffix = f" ({self.reference})"
        return self.reason[: -len(suffix)] if self.reference and self.reason.endswith(suffix) else self.reason

    def to_json(self) -> dict[str, Any]:
        """The record as JSON-ready data, with its label (derived fields are not read back)."""
        return {"label": self.label, "early": self.early, **dataclasses.asdict(self)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Comparison:
        """The record written by ``to_json``; a missing or unknown field fails, naming it."""
        try:
            return _COMPARISON.validate_python(dict(data))
        except ValidationError as exc:
            raise AuditRecordError(f"comparison record: {_errors(exc)}") from exc


COMPARISON_FIELDS = tuple(f.name for f in dataclasses.fields(Comparison))


def _comparison_json(data: Any) -> Any:
    """A comparison's JSON form checked for every field; derived fields dropped."""
    if isinstance(data, Mapping):
        missing = [k for k in COMPARISON_FIELDS if k not in data]
        if missing:
            raise ValueError(f"comparison lacks field(s) {', '.join(missing)}")
        return {k: v for k, v in data.items() if k not in DERIVED_FIELDS}
    return data


def comparison_problems(c: Comparison) -> list[str]:
    """What a decided comparison (not pending, not "not evaluated") lacks: a finite effect and mean of
    ``a``; means, spreads and intervals that are a number or "not computed" (NaN, for a quantity its
    kind does not compute), never infinite, but a one-sided interval's open end; p-values in [0, 1]."""
    if c.verdict in (PENDING, NOT_EVALUATED, TOO_FEW_SEEDS) or c.category == TOO_FEW:
        return []
    problems = [
        f"{name} {value!r} is not finite"
        for name, value in (("effect", c.effect), ("mean_a", c.mean_a))
        if not math.isfinite(value)
    ]
    problems += [
        f"{name} {value!r} is infinite"
        for name, value in (("mean_b", c.mean_b), ("std_a", c.std_a), ("std_b", c.std_b))
        if math.isinf(value)
    ]
    problems += [
        f"{name} is NaN"
        for name, value in (("ci_low", c.ci_low), ("ci_high", c.ci_high))
        if value is not None and math.isnan(value)
    ]
    p_values = (
        "p_claimed",
        "p_refuted",
        "p_refuted_holm",
        "p_claimed_holm",
        "p_no_effect",
        "p_no_effect_holm",
    )
    problems += [
        f"{name} {getattr(c, name)!r} is not in [0, 1]"
        for name in p_values
        if getattr(c, name) is not None and not 0.0 <= getattr(c, name) <= 1.0
    ]
    return problems


#: a comparison inside a record: read from its JSON form through the required-field check
ComparisonRecord = Annotated[Comparison, BeforeValidator(_comparison_json)]
_COMPARISON: TypeAdapter[Comparison] = TypeAdapter(ComparisonRecord)


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ExperimentVerdict(_Record):
    """A claim's verdict on one experiment (or pair of experiments) and the comparisons behind it."""

    experiment: str
    verdict: str
    #: the verdict's sub-category (verdicts.CATEGORIES): "the opposite", "underpowered", ...
    category: str = ""
    #: seeds per arm that would decide it at 80 % power (an underpowered verdict)
    seeds_needed: int | None = None
    reason: str
    comparisons: list[ComparisonRecord]


class Decision(_Record):
    """A verdict on a claim's experiments, with why: what a claim and each of its other margins get."""

    verdict: str
    category: str = ""
    seeds_needed: int | None = None
    reason: str
    coverage: str
    experiments: list[ExperimentVerdict]


class MarginReading(Decision):
    """A claim's verdict at other margins than its own (its ``margins``): the thresholds in full."""

    thresholds: dict[str, float]


class ClaimVerdict(Decision):
    """One claim of the paper (the claims file's record) with its verdict and why, and its verdicts at
    the other margins it names (``margins``: the margin sensitivity)."""

    claim: Claim
    margins: list[MarginReading] = []


class SensitivityRow(_Record):
    """One claim under one choice: both verdicts, the default read where and at the rounds the variant
    is (``unread``: experiment -> why neither verdict reads it)."""

    claim: str
    common_rounds: dict[str, int]
    default_verdict: str
    variant_verdict: str
    flips: bool
    variant_coverage: str
    variant_reason: str
    variant_experiments: list[ExperimentVerdict]
    unread: dict[str, str]


class SensitivityChoice(_Record):
    """An implementation choice the paper leaves open (the claims file's record) and the claims it affects."""

    choice: Choice
    claims: list[SensitivityRow]
    #: a ``choose_best`` choice's pick: experiment -> default setting -> the candidate standing in
    chosen: dict[str, dict[str, str]] = {}


class ReadingFlip(_Record):
    """Claims that are readings of one statement, their verdicts and whether they disagree."""

    statement: str
    readings: dict[str, str]
    flips: bool


class QuestionRow(_Record):
    """A question's answer on one experiment, its comparison and both sides' cost (``beyond.cost``)."""

    experiment: str
    verdict: str
    reason: str
    comparison: ComparisonRecord | None
    cost: dict[str, float] | None


class QuestionAnswer(_Record):
    """A question beyond the paper (the questions file's record) and its answers."""

    question: Question
    experiments: list[QuestionRow]


class Beyond(_Record):
    """The audit's part on the questions beyond the paper."""

    rules: dict[str, str]
    questions: list[QuestionAnswer]


class PlannedNeed(_Record):
    """A comparison's need as its analysis plan states it: seeds per arm for 80 % power at the claim's
    effect of interest (None: past the cap) and the cap it was planned under."""

    need: int | None
    cap: int


def need_key(claim: str, experiment: str, a: str, b: str) -> str:
    """The key of a comparison's planned need (``Design.needs``): ``claim | experiment | a vs b``."""
    return f"{claim} | {experiment} | {a} vs {b}"


class Design(_Record):
    """The confirmatory design the audit decided on: its analysis plan (``make plan``, from the pilot,
    before the run), the pilot's seeds and the confirmatory ones. Runs on other seeds are not used."""

    plan_file: str
    plan_sha256: str
    commit: str | None
    dirty: bool | None
    config_sha256: str
    claims_sha256: str
    pilot_config: str
    pilot_samples_sha256: str
    pilot_seeds: dict[str, list[int]]
    #: experiment -> setting -> the seeds the verdicts are decided on
    confirmatory_seeds: dict[str, dict[str, list[int]]]
    #: the comparisons the plan's caps leave short of 80 % power
    underpowered: list[str]
    #: every planned comparison's need (``need_key``): an underpowered verdict states it, the one need
    #: of that comparison in every document (not one from the confirmatory spread)
    needs: dict[str, PlannedNeed] = {}
    #: runs read on seeds outside the confirmatory ones, not used for any verdict
    left_out_runs: int = 0

    @property
    def seed_span(self) -> str:
        """``20-219``: the confirmatory seeds' range."""
        seeds = [s for by in self.confirmatory_seeds.values() for run in by.values() for s in run]
        return f"{min(seeds)}-{max(seeds)}" if seeds else "-"

    @property
    def pilot_span(self) -> str:
        seeds = [s for run in self.pilot_seeds.values() for s in run]
        return f"{min(seeds)}-{max(seeds)}" if seeds else "-"


class AuditContext(_Record):
    """What the audit was made from (None outside the pipeline): files and sha256, run, each experiment
    as the config computes it (no reader derives it again), the package versions the job saw."""

    experiments: dict[str, ExperimentInfo]
    configfiles: list[str] = []
    run_id: str | None = None
    config_sha256: dict[str, str] | None = None
    claims_file: str | None = None
    claims_sha256: str | None = None
    beyond_file: str | None = None
    beyond_sha256: str | None = None
    versions: dict[str, str | None] | None = None
    #: the confirmatory design (an analysis plan) the verdicts are decided on; None: exploratory (a pilot)
    design: Design | None = None


class ComputedVerdict(_Record):
    """A statement checked by computation (``vhct.reporting.audit.computed``): its verdict (reproduced or
    not reproduced), why, and the per-depth table it was decided on (column name -> one value per depth)."""

    claim: ComputedClaim
    verdict: str
    reason: str
    table: dict[str, list[float]]


class Audit(_Record):
    """The whole audit (one JSON file): verdicts, sensitivity, readings, discrepancies, context."""

    format: int
    context: AuditContext
    #: statements per verdict (``verdicts.statement_counts``)
    summary: dict[str, int]
    flipped_claims: list[str]
    reading_flips: list[ReadingFlip]
    rules: dict[str, str]
    claims: list[ClaimVerdict]
    sensitivity: list[SensitivityChoice]
    discrepancies: list[Discrepancy]
    #: how the paper ran each experiment the claims read (the claims file's ``conditions``)
    conditions: dict[str, Condition]
    beyond: Beyond | None = None
    #: statements checked by computation, not on runs (the claims file's ``computed``)
    computed: list[ComputedVerdict] = []

    @property
    def paper_seeds(self) -> int:
        """The paper's seeds per curve: the claims' largest ``min_seeds`` (0 without claims)."""
        return max((c.claim.min_seeds for c in self.claims), default=0)

    def below_paper(self) -> dict[str, int]:
        """The experiments that ran fewer seeds than the paper's (:attr:`paper_seeds`), with their seeds."""
        found = {name: len(e.seeds) for name, e in self.context.experiments.items()}
        return {name: n for name, n in found.items() if n < self.paper_seeds}

    def variants(self, claim: str) -> list[tuple[Choice, SensitivityRow]]:
        """The claim's verdicts under each implementation choice that substitutes a setting it reads."""
        return [(s.choice, row) for s in self.sensitivity for row in s.claims if row.claim == claim]


def _errors(exc: ValidationError) -> str:
    return "; ".join(
        f"{'/'.join(str(p) for p in e['loc']) or 'record'}: {e['msg']}" for e in exc.errors(include_url=False)
    )


def _clean(x: Any) -> Any:
    """JSON-ready data: comparisons with their label, non-finite floats as strings."""
    if isinstance(x, Comparison):
        return _clean(x.to_json())
    if isinstance(x, BaseModel):
        return _clean({name: getattr(x, name) for name in type(x).model_fields})
    if isinstance(x, float) and not math.isfinite(x):
        return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")
    if isinstance(x, Mapping):
        return {k: _clean(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_clean(v) for v in x]
    return x


def audit_json(audit: Audit) -> str:
    """The one writer of the audit's JSON (results/audit.json, shipped as docs/findings/audit.json)."""
    return json.dumps(_clean(audit), indent=2) + "\n"


def parse_audit(data: Any, where: str = "audit") -> Audit:
    """The audit record from its JSON data; another format or an invalid record is refused (``where``)."""
    if not isinstance(data, Mapping):
        raise AuditRecordError(f"{where}: not an audit record (a JSON object)")
    if data.get("format") != AUDIT_FORMAT:
        raise AuditRecordError(
            f"{where}: audit format {data.get('format', 1)!r}, but this renderer needs format "
            f"{AUDIT_FORMAT}: re-run the audit (make paper-local) and ship its results (make findings)"
        )
    try:
        audit = Audit.model_validate(data)
    except ValidationError as exc:
        raise AuditRecordError(f"{where}: {_errors(exc)}") from exc
    return check_values(audit, where)


def _outcome_problem(verdict: str, category: str, verdicts: tuple[str, ...] = VERDICTS) -> str | None:
    if verdict not in verdicts:
        return f"verdict {verdict!r} is none of {', '.join(verdicts)}"
    if category and category not in CATEGORIES.get(verdict, ()):
        return f"category {category!r} is not one of verdict {verdict!r}'s ({', '.join(CATEGORIES[verdict])})"
    return None


def _parts(audit: Audit) -> Iterator[tuple[str, str | None]]:
    """Each part of the audit with the first problem of its values (None: none)."""

    def comparisons(where: str, comps: list[Comparison], decided: bool) -> Iterator[tuple[str, str | None]]:
        for c in comps:
            if decided:
                yield (
                    f"{where}, comparison {c.label}",
                    _outcome_problem(c.verdict, c.category, (*VERDICTS, PENDING)),
                )
            yield f"{where}, comparison {c.label}", "; ".join(comparison_problems(c)) or None

    for claim in audit.claims:
        where = f"claim {claim.claim.id}"
        yield where, _outcome_problem(claim.verdict, claim.category)
        for decision in (claim, *claim.margins):
            for e in decision.experiments:
                yield f"{where}, experiment {e.experiment}", _outcome_problem(e.verdict, e.category)
                yield from comparisons(f"{where}, experiment {e.experiment}", e.comparisons, True)
    for choice in audit.sensitivity:
        for row in choice.claims:
            where = f"choice {choice.choice.id}, claim {row.claim}"
            yield where, _outcome_problem(row.default_verdict, "")
            yield where, _outcome_problem(row.variant_verdict, "", (*VERDICTS, NOT_APPLICABLE))
            for e in row.variant_experiments:
                yield f"{where}, experiment {e.experiment}", _outcome_problem(e.verdict, e.category)
                yield from comparisons(f"{where}, experiment {e.experiment}", e.comparisons, True)
    for flip in audit.reading_flips:
        for claim, verdict in flip.readings.items():
            yield f"statement {flip.statement}, reading {claim}", _outcome_problem(verdict, "")
    for computed in audit.computed:
        yield f"computed {computed.claim.id}", _outcome_problem(computed.verdict, "", COMPUTED_VERDICTS)
    for question in audit.beyond.questions if audit.beyond else []:
        for row in question.experiments:
            where = f"question {question.question.id}, experiment {row.experiment}"
            sides = (row.comparison.a, row.comparison.b) if row.comparison is not None else ()
            answers = (NO_DIFFERENCE, TOO_FEW_SEEDS, NOT_EVALUATED, *(BETTER.format(s) for s in sides))
            yield where, _outcome_problem(row.verdict, "", answers)
            if row.comparison is not None:
                yield from comparisons(where, [row.comparison], False)


def check_values(audit: Audit, where: str = "audit") -> Audit:
    """The audit if every word is of its vocabulary and every decided comparison's estimates are
    numbers (:func:`comparison_problems`); else an :class:`AuditRecordError` naming the first part."""
    for part, problem in _parts(audit):
        if problem is not None:
            raise AuditRecordError(f"{where}: {part}: {problem}")
    return audit


def read_audit(path: Path | str) -> Audit:
    """The one reader of the audit's JSON file (validated; errors name the file)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise AuditRecordError(f"{path}: cannot read it as JSON ({exc})") from exc
    return parse_audit(data, str(path))
