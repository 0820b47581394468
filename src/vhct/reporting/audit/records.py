"""The audit's typed records, their one JSON writer (:func:`audit_json`) and one reader (:func:`read_audit`):
a missing or unknown field is refused naming file and field (:class:`AuditRecordError`), so a renderer
never guesses a key; non-finite floats are written as ``"nan"``/``"inf"`` and read back."""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, TypeAdapter, ValidationError
from pydantic.dataclasses import dataclass

from vhct.pipeline.specs import ExperimentInfo
from vhct.reporting.audit.claims_model import Choice, Claim, ComputedClaim, Condition, Discrepancy
from vhct.reporting.audit.questions_model import Question

#: version of the audit's JSON shape; the reader refuses any other (6: records embed their claim,
#: question or choice, every comparison carries every field, the paper's conditions are recorded)
AUDIT_FORMAT = 6
#: a comparison whose tests are computed but whose verdict the claim level has not decided yet
PENDING = "pending"
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
        return Audit.model_validate(data)
    except ValidationError as exc:
        raise AuditRecordError(f"{where}: {_errors(exc)}") from exc


def read_audit(path: Path | str) -> Audit:
    """The one reader of the audit's JSON file (validated; errors name the file)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise AuditRecordError(f"{path}: cannot read it as JSON ({exc})") from exc
    return parse_audit(data, str(path))
