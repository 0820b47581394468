"""Planning from a validated config: run jobs, batches, run specifications, resources, and the views
of experiments and figures the rules pass to their jobs.

A mixin of :class:`~vhct.pipeline.config.model.Config` (it reads the model's attributes and its
``seeds``/``setting_seeds``/``run_horizon``; it imports nothing of the model, so no import cycle).
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any, NamedTuple

from vhct.pipeline.config.errors import key_error
from vhct.pipeline.figure_kinds import figure_kind
from vhct.pipeline.records import DataChecksums, RunSpec
from vhct.pipeline.specs import ExperimentInfo, FigureSpec, PanelSpec, SettingInfo
from vhct.pipeline.store import RunJob

if TYPE_CHECKING:  # the attributes the model provides (sections: vhct.pipeline.config.sections)
    from collections.abc import Iterable

#: the checksum keys of a data file's declaration that fix its content
CHECKSUM_KEYS = ("sha256", "content_sha256", "md5")
#: default resources per rule family (overridden by config `resources`, per experiment, per setting)
DEFAULT_RESOURCES: dict[str, dict[str, int]] = {
    "data": {"threads": 1, "mem_mb": 500, "runtime": 30},
    "run": {"threads": 1, "mem_mb": 1000, "runtime": 60},
    "aggregate": {"threads": 1, "mem_mb": 2000, "runtime": 10},
    "figure": {"threads": 1, "mem_mb": 2000, "runtime": 15},
}


class RunBatch(NamedTuple):
    """Seeds of one setting of one experiment that one run job runs one after the other (its
    ``index``-th chunk of the setting's seeds) and writes as one batch file of the run store."""

    experiment: str
    setting: str
    index: int
    seeds: tuple[int, ...]


class Planning:
    """Jobs, batches, run specifications, resources and views of a :class:`Config`."""

    if TYPE_CHECKING:  # the model's attributes (not annotations here: pydantic would take them as fields)
        settings: dict[str, Any]
        experiments: dict[str, Any]
        figures: dict[str, Any]
        resources: Any
        data: Any
        progress_every: int
        source: dict[str, Any]

    def run_jobs(self, experiments: Iterable[str] | None = None) -> list[tuple[str, str, int]]:
        """Every run job ``(experiment, setting, seed)``, in config order."""
        names = list(self.experiments) if experiments is None else list(experiments)
        return [
            (exp, setting, seed)
            for exp in names
            for setting in self.experiments[exp].settings
            for seed in self.setting_seeds(exp, setting)  # type: ignore[attr-defined]
        ]

    def runs_per_job(self, experiment: str, setting: str) -> int:
        """Runs per job of an (experiment, setting): the setting's value, else the experiment's, else 1."""
        for section in (self.settings[setting], self.experiments[experiment]):
            if section.runs_per_job is not None:
                return section.runs_per_job
        return 1

    def run_batches(self) -> list[RunBatch]:
        """Every run job: each setting's seeds of an experiment, in order, cut into chunks of its
        ``runs_per_job`` (computed once). A batch holds one setting's runs, so adding, removing or
        reordering a setting leaves every other setting's batches (and runs) as they are, and
        adding seeds adds chunks after the filled ones."""
        if "_batches" not in self.__dict__:
            batches = []
            for experiment, exp in self.experiments.items():
                for setting in exp.settings:
                    size = self.runs_per_job(experiment, setting)
                    seeds = self.setting_seeds(experiment, setting)  # type: ignore[attr-defined]
                    chunks = [tuple(seeds[start : start + size]) for start in range(0, len(seeds), size)]
                    batches += [RunBatch(experiment, setting, i, chunk) for i, chunk in enumerate(chunks)]
            self.__dict__["_batches"] = batches
        return list(self.__dict__["_batches"])

    def run_job(self, batch: RunBatch) -> RunJob:
        """What the run job of ``batch`` is asked (the run family's job spec): its runs' specs, the
        installed run code's source hash and package versions, and its data files' checksums
        (computed once per batch)."""
        from vhct.pipeline.versions import package_versions, run_source

        jobs = self.__dict__.setdefault("_jobs", {})
        if batch not in jobs:
            jobs[batch] = RunJob.model_construct(
                runs=[self.run_spec(batch.experiment, batch.setting, seed) for seed in batch.seeds],
                source=run_source(self.settings[batch.setting].algorithm),
                versions=package_versions(),
                data=self.data_checksums(batch.experiment),
            )
        return jobs[batch]

    def batch_jobs(self, experiment: str | None = None) -> dict[str, RunJob]:
        """Batch file of the run store (``RunJob.path``) -> what its job is asked, of one experiment
        or of all; one entry per file where two settings' runs are the same runs."""
        return {
            job.path(): job
            for job in (self.run_job(b) for b in self.run_batches())
            if experiment is None or job.runs[0].experiment == experiment
        }

    def run_paths(self, experiment: str) -> dict[str, list[str]]:
        """Setting -> the batch files of the run store (``RunJob.path``) that hold its runs."""
        paths: dict[str, list[str]] = {}
        for batch in self.run_batches():
            if batch.experiment == experiment:
                paths.setdefault(batch.setting, []).append(self.run_job(batch).path())
        return paths

    def data_checksums(self, experiment: str) -> DataChecksums:
        """Path -> declared checksums of each data file the experiment's objective reads: what its
        verification stamp checked the file against, so a run's record names the data it read."""
        out = {}
        for path in self.data_files(experiment):
            declared = self.data_spec(path)
            out[path] = {key: declared[key] for key in CHECKSUM_KEYS if declared.get(key)}
        return out

    def run_spec(self, experiment: str, setting: str, seed: int) -> RunSpec:
        """One run as the config asks it: what its job runs (in its ``RunJob``), its record holds, and
        every consumer compares the run's record with."""
        exp, algo = self.experiments[experiment], self.settings[setting]
        return RunSpec(
            experiment=experiment,
            setting=setting,
            algorithm=algo.algorithm,
            params=copy.deepcopy(algo.params),
            objective=exp.objective,
            objective_params=copy.deepcopy(exp.objective_params),
            noise=float(exp.noise),
            horizon=self.run_horizon(experiment, setting),  # type: ignore[attr-defined]
            seed=int(seed),
            progress_every=self.progress_every,
        )

    def resource(
        self, family: str, key: str, experiment: str | None = None, setting: str | None = None
    ) -> int:
        """Threads/mem_mb/runtime of a rule family: the default, then the config's ``resources``,
        then the experiment's, then the setting's (the setting wins)."""
        value = DEFAULT_RESOURCES[family][key]
        sections = [getattr(self.resources, family)]
        sections += [self.experiments[experiment].resources] if experiment is not None else []
        sections += [self.settings[setting].resources] if setting is not None else []
        for section in sections:
            if section is not None and getattr(section, key) is not None:
                value = getattr(section, key)
        return value

    # ------------------------------------------------------------ views passed to jobs

    def setting_info(self, experiment: str) -> dict[str, SettingInfo]:
        """Per setting of an experiment: algorithm, label, params, run horizon, seeds and caps
        (aggregate tables, legends, the audit's context)."""
        out = {}
        for setting in self.experiments[experiment].settings:
            algo = self.settings[setting]
            out[setting] = SettingInfo(
                algorithm=algo.algorithm,
                label=setting if algo.label is None else algo.label,
                params=copy.deepcopy(algo.params),
                horizon=self.run_horizon(experiment, setting),  # type: ignore[attr-defined]
                seeds=self.setting_seeds(experiment, setting),  # type: ignore[attr-defined]
                max_horizon=self.setting_cap(experiment, setting, "max_horizon"),  # type: ignore[attr-defined]
                max_seeds=self.setting_cap(experiment, setting, "max_seeds"),  # type: ignore[attr-defined]
            )
        return out

    def experiment_info(self, experiment: str) -> ExperimentInfo:
        """What a figure and the audit need to know about an experiment (title, noise, seeds,
        horizon, settings)."""
        exp = self.experiments[experiment]
        return ExperimentInfo(
            name=experiment,
            title=experiment if exp.title is None else exp.title,
            objective=exp.objective,
            objective_params=copy.deepcopy(exp.objective_params),
            noise=float(exp.noise),
            horizon=exp.horizon,
            seeds=exp.seed_list,
            settings=self.setting_info(experiment),
        )

    def figure_settings(self, figure: str) -> dict[str, list[str]]:
        """The settings whose aggregates a figure reads, by experiment: those its panels draw (a
        panel without a list draws its experiment's every setting); none for kinds that read no
        aggregates. A figure waits for these runs only, not for its experiments' other settings."""
        fig = self.figures[figure]
        if not figure_kind(fig.kind).aggregates:
            return {}
        out: dict[str, list[str]] = {}
        for panel in fig.panels:
            drawn = panel.settings or list(self.experiments[panel.experiment].settings)
            out[panel.experiment] = list(dict.fromkeys([*out.get(panel.experiment, []), *drawn]))
        return out

    def figure_spec(self, figure: str) -> FigureSpec:
        """A figure's declaration (as the config gives it, defaults filled) plus the info of every
        experiment its panels use (of a figure drawing aggregates, with the settings it draws only),
        and for kinds with a run (osc) each panel's run specification."""
        fig = self.figures[figure]
        used = dict.fromkeys(p.experiment for p in fig.panels if p.experiment is not None)
        osc = figure_kind(fig.kind).osc
        panels = [
            PanelSpec(
                **panel.model_dump(),
                run=self.run_spec(panel.experiment, panel.setting, panel.seed) if osc else None,
            )
            for panel in fig.panels
        ]
        drawn = self.figure_settings(figure)
        for panel in fig.panels:  # a panel of one run (osc) draws its setting's run alone
            if panel.experiment is not None and panel.setting is not None:
                drawn.setdefault(panel.experiment, []).append(panel.setting)
        infos = {name: self.experiment_info(name) for name in used}
        # only the settings it draws: a change of another setting leaves the figure as it is
        infos = {
            name: info.model_copy(update={"settings": {s: info.settings[s] for s in drawn[name]}})
            if name in drawn
            else info
            for name, info in infos.items()
        }
        return FigureSpec(
            name=figure,
            kind=fig.kind,
            title=fig.title,
            columns=fig.columns,
            panels=panels,
            experiments=infos,
        )

    @property
    def data_mirror(self) -> str | None:
        """The configured mirror directory of data files (None: only the environment variable)."""
        return self.data.mirror

    def data_files(self, experiment: str | None = None) -> list[str]:
        """Paths (relative to ``data/``) of the data files of one experiment, or of all declared ones."""
        names = list(self.data.files) if experiment is None else self.experiments[experiment].data
        return [self.data.files[name].path for name in names]

    def data_spec(self, path: str) -> dict[str, Any]:
        """The declaration of the data file written to ``data/<path>`` (as the config gives it)."""
        for name, spec in self.data.files.items():
            if spec.path == path:
                return copy.deepcopy(self.source["data"]["files"][name])
        raise key_error("data/files", f"no data file declares path {path!r}")
