"""The questions beyond the paper (``beyond.yaml``) as typed records (pydantic), the source of their
schema; each question's defaults resolved here, once."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, StringConstraints, model_validator

from vhct.pipeline.config.sections import number
from vhct.reporting.audit.claims_model import (
    MinSeeds,
    OpenUnit,
    Record,
    Round,
    Text,
    filled,
    key_error,
    not_required,
    unique_ids,
)


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

    model_config = ConfigDict(json_schema_extra=not_required(*QUESTION_DEFAULTS))
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
        return filled(data, "questions")

    @model_validator(mode="after")
    def _unique(self) -> BeyondFile:
        unique_ids(self.questions, "questions")
        return self

    @property
    def experiments(self) -> list[str]:
        """Every experiment some question reads, in first-use order."""
        return list(dict.fromkeys(e for q in self.questions for e in q.experiments))
