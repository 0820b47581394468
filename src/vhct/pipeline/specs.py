"""The views of a config that cross into other jobs: an experiment, its settings, a declared figure.

One writer each, the planning of the typed config (``Config.setting_info``,
``Config.experiment_info``, ``Config.figure_spec``), and one reader each: the aggregate job reads
:class:`SettingInfo`, the figure job (``vhct.reporting.plots``) a :class:`FigureSpec`, and the
audit keeps every audited experiment's :class:`ExperimentInfo` in its context
(``vhct.reporting.audit.records.AuditContext``), so the renderers read the seeds and caps the
config computed instead of deriving them again. The records cross a Snakemake job as JSON data
(``model_dump(mode="json")`` in the rule, which Snakemake compares to rerun a job whose params
changed); the reader validates them with ``model_validate``: an unknown or missing field is an
error naming it. Pydantic (v2), frozen, like the config's model and the run record.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from vhct.pipeline.records import RunSpec


class _Spec(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)


class SettingInfo(_Spec):
    """One setting in one experiment as the config computes it: its algorithm and legend label,
    its parameters, the rounds it runs (the experiment's horizon capped by ``max_horizon``) and its
    seeds (the experiment's, the first ``max_seeds`` when capped); the caps, None when uncapped."""

    algorithm: str
    label: str
    params: dict[str, Any]
    horizon: int = Field(ge=1)
    seeds: list[int]
    max_horizon: int | None = None
    max_seeds: int | None = None


class ExperimentInfo(_Spec):
    """One experiment: what a figure's caption and the audit's context say of it."""

    name: str
    title: str
    objective: str
    objective_params: dict[str, Any]
    noise: float = Field(ge=0)
    horizon: int = Field(ge=1)
    seeds: list[int]
    settings: dict[str, SettingInfo]


class PanelSpec(_Spec):
    """One panel of a declared figure (the config's panel keys, defaults filled); ``run``: for a
    kind with a run (osc), the run specification of the panel's setting and seed."""

    title: str | None = None
    experiment: str | None = None
    settings: list[str] | None = None
    objective: str | None = None
    objective_params: dict[str, Any] = Field(default_factory=dict)
    setting: str | None = None
    seed: int = 0
    round: int | None = None
    run: RunSpec | None = None


class FigureSpec(_Spec):
    """A declared figure as its drawer needs it: kind, title, panels, and the info of every
    experiment its panels use."""

    name: str
    kind: str
    title: str | None = None
    columns: int | None = None
    panels: list[PanelSpec] = Field(min_length=1)
    experiments: dict[str, ExperimentInfo]

    def experiment(self, panel: PanelSpec) -> ExperimentInfo:
        """The experiment a panel draws; a panel of an experiment the spec lacks is a ValueError."""
        if panel.experiment not in self.experiments:
            raise ValueError(
                f"figure {self.name}: a panel names experiment {panel.experiment!r}, "
                f"the spec has {', '.join(self.experiments) or 'none'}"
            )
        return self.experiments[panel.experiment]

    def panel_settings(self, panel: PanelSpec) -> list[str]:
        """The settings a panel draws: its own list, else every setting of its experiment."""
        return list(panel.settings or self.experiment(panel).settings)
