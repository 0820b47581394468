"""The "beyond the paper" figure (kind regret_cost): regret curves beside each setting's cost per round."""

from __future__ import annotations

import json

import numpy as np
import pytest

pd = pytest.importorskip("pandas")
pytest.importorskip("matplotlib")

from vhct.pipeline.specs import ExperimentInfo, FigureSpec, PanelSpec, SettingInfo  # noqa: E402
from vhct.reporting import plots, styles  # noqa: E402

SETTINGS = {"VHCT-a": "VHCT", "Random": "Random", "GP": "GP-Optuna"}
#: seconds per round of each setting's two seeds
COST = {"VHCT-a": [1e-4, 3e-4], "Random": [6e-4, 8e-4], "GP": [0.2, 0.4]}


def write_tables(tmp_path) -> dict[str, str]:
    """Each setting's curve and timing aggregates, as rule aggregate_setting writes them: setting ->
    its ``regret.csv`` (the timing beside it)."""
    curves = {}
    for setting, algorithm in SETTINGS.items():
        horizon = 4 if setting == "GP" else 10
        rows = [
            {"setting": setting, "algorithm": algorithm, "t": t, "n_seeds": 2, "mean": 0.5 * t, "std": 0.1}
            for t in range(1, horizon + 1)
        ]
        timing = [
            {"setting": setting, "algorithm": algorithm, "seed": seed, "step_seconds_mean": seconds}
            for seed, seconds in enumerate(COST[setting])
        ]
        folder = tmp_path / setting
        folder.mkdir()
        pd.DataFrame(rows).to_csv(folder / "regret.csv", index=False)
        pd.DataFrame(timing).to_csv(folder / "timing.csv", index=False)
        curves[setting] = str(folder / "regret.csv")
    return curves


def experiment(name="e", title="E", horizons=None, seeds=None, settings=SETTINGS):
    """A made-up experiment's info (``vhct.pipeline.specs.ExperimentInfo``): every setting runs 10
    rounds and both seeds unless ``horizons``/``seeds`` say otherwise."""
    horizons, seeds = horizons or {}, seeds or {}
    info = {
        s: SettingInfo(
            algorithm=a, label=s, params={}, horizon=horizons.get(s, 10), seeds=seeds.get(s, [0, 1])
        )
        for s, a in settings.items()
    }
    return ExperimentInfo(
        name=name,
        title=title,
        objective="garland",
        objective_params={},
        noise=0.05,
        horizon=10,
        seeds=[0, 1],
        settings=info,
    )


def figure_spec():
    return FigureSpec(
        name="beyond",
        kind="regret_cost",
        panels=[PanelSpec(experiment="e")],
        experiments={"e": experiment(horizons={"GP": 4})},
    )


def test_cost_panel_draws_each_settings_mean_and_range_in_its_colour(tmp_path):
    curves = write_tables(tmp_path)
    with plots.common.plt.rc_context(plots.common.RC):
        fig = plots.regret.regret_cost_figure(figure_spec(), {"e": curves})
    regret_ax, cost_ax = fig.axes[:2]
    bars = cost_ax.patches
    assert [b.get_width() for b in bars] == pytest.approx([np.mean(COST[s]) for s in SETTINGS])
    colours = [styles.style(a)[0] for a in SETTINGS.values()]
    assert [plots.common.matplotlib.colors.to_hex(b.get_facecolor()) for b in bars] == colours
    ranges = [line.get_xdata().tolist() for line in cost_ax.lines]
    assert ranges == [COST[s] for s in SETTINGS]
    assert [t.get_text() for t in cost_ax.texts] == ["0.2 ms", "0.7 ms", "300 ms"]
    assert cost_ax.get_xscale() == "log"
    assert [line.get_label() for line in regret_ax.lines][:1] == ["VHCT-a (2 seeds)"]
    plots.common.plt.close(fig)


def test_the_figure_job_saves_the_kind(tmp_path):
    curves = write_tables(tmp_path)
    plots.figure_job(figure_spec(), {"e": curves}, tmp_path / "f.pdf", tmp_path / "f.png")
    assert (tmp_path / "f.pdf").stat().st_size > 0 and (tmp_path / "f.png").stat().st_size > 0


def test_cost_labels_are_durations():
    assert plots.regret.duration(0.0123) == "12.3 ms" and plots.regret.duration(2.5) == "2.5 s"


def test_a_setting_has_one_legend_label_across_panels_naming_where_it_stops():
    """GP stops early only in E, runs 1 seed in both: one label, not one per panel; each label gives
    the seeds of its curves, by panel where they differ."""

    def exp(name, title, gp_horizon):
        return experiment(name, title, horizons={"GP": gp_horizon}, seeds={"GP": [0]})

    exps = [exp("e", "E: one", 4), exp("f", "F: two", 10)]
    seeds = [{"VHCT-a": 2, "Random": 2, "GP": 1}, {"VHCT-a": 2, "Random": 5, "GP": 1}]
    labels = plots.regret.legend_labels(exps, [list(SETTINGS), list(SETTINGS)], seeds)
    assert labels == {
        "VHCT-a": "VHCT-a (2 seeds)",
        "Random": "Random (2 seeds on E; 5 seeds on F)",
        "GP": "GP (stops at t=4 on E; 1 seed)",
    }
    one = plots.regret.legend_labels(exps[:1], [list(SETTINGS)], seeds[:1])
    assert one["GP"] == "GP (stops at t=4; 1 seed)"
    spec = FigureSpec(
        name="f",
        kind="regret",
        experiments={"e": exps[0], "f": exps[1]},
        panels=[PanelSpec(experiment="e"), PanelSpec(experiment="f", settings=["VHCT-a", "GP"])],
    )
    tables = {
        name: pd.DataFrame({"setting": list(SETTINGS), "n_seeds": list(n.values())})
        for name, n in zip("ef", seeds, strict=True)
    }
    assert plots.regret.figure_labels(spec, tables)["GP"] == labels["GP"]


def test_every_figure_kind_has_a_registered_drawer_and_every_drawer_a_kind():
    """Contract of the figure kinds registry: each config kind has a drawer registered by its family
    module (the audit's own figures, ``AUDIT_FIGURES``, are drawn by the audit stage), and the
    public drawing functions of the family modules (``<something>_figure``) are exactly the
    registered drawers."""
    from vhct.pipeline.figure_kinds import AUDIT_FIGURES, FIGURE_KINDS

    kinds = [kind for kind in FIGURE_KINDS if kind not in AUDIT_FIGURES]
    assert kinds and [kind for kind in kinds if kind not in plots.DRAWERS] == []
    for kind in kinds:
        assert callable(plots.DRAWERS.lookup(kind)), kind
    public = {
        value
        for family in (plots.cells, plots.functions, plots.osc, plots.regret)
        for name, value in vars(family).items()
        if name.endswith("_figure") and callable(value) and value.__module__ == family.__name__
    }
    assert public == {plots.DRAWERS[kind] for kind in plots.DRAWERS if kind not in AUDIT_FIGURES}
    lookup = plots.DRAWERS.lookup
    assert lookup("average_regret") is lookup("regret") is plots.regret.regret_figure


def test_the_figure_job_calls_the_drawer_registered_for_its_kind(tmp_path):
    """A new kind is drawn by the function registered under its name (no lookup by function name)."""
    from vhct.pipeline.figure_kinds import FigureKind, register, unregister

    drawn = []

    def probe_drawing(figure):
        drawn.append(figure.name)
        fig, ax = plots.common.plt.subplots()
        ax.plot([0, 1], [1, 0])
        return fig

    register(FigureKind("probe", "a test kind", False, frozenset({"objective"}), frozenset({"objective"})))
    try:
        plots.DRAWERS.register("probe")(probe_drawing)
        try:
            spec = FigureSpec(name="p", kind="probe", panels=[PanelSpec(objective="garland")], experiments={})
            plots.figure_job(spec, {}, tmp_path / "p.pdf", tmp_path / "p.png")
        finally:
            plots.DRAWERS.unregister("probe")
    finally:
        unregister("probe")
    assert drawn == ["p"] and (tmp_path / "p.png").read_bytes().startswith(b"\x89PNG")
    with pytest.raises(ValueError, match="unknown figure drawer 'probe'"):
        plots.DRAWERS.lookup("probe")


def test_a_drawer_is_registered_only_for_a_figure_kind():
    with pytest.raises(ValueError, match="a drawer for 'heatmap', which is no figure kind; known: regret"):
        plots.DRAWERS.register("heatmap", plots.regret.regret_figure)
    with pytest.raises(ValueError, match="figure drawer 'regret' is already registered"):
        plots.DRAWERS.register("regret", plots.regret.regret_figure)
    assert "heatmap" not in plots.DRAWERS


def test_the_figure_spec_of_a_real_config_crosses_to_the_plots_as_the_rule_passes_it(tmp_path):
    """Writer to reader: the figure job's spec of each figure of config/tiny.yaml
    (``job_specs.figure_job_spec``), written as the rules write it and read back by the figure job
    into the same record, then drawn."""
    from support import TINY

    from vhct.pipeline.config import load
    from vhct.pipeline.stale import FigureJob, read_spec, write_spec
    from vhct.reporting.job_specs import figure_job_spec

    config = load([TINY])[0]
    for name in config.figures:
        written = figure_job_spec(config, name, {})
        write_spec(tmp_path / f"{name}.json", written)
        read = read_spec(tmp_path / f"{name}.json", FigureJob)
        assert read.model_dump(mode="json") == written.model_dump(mode="json"), name
        assert written.figure == config.figure_spec(name)
    spec = config.figure_spec("regret")
    curves: dict[str, dict[str, str]] = {}
    for exp_name, settings in config.figure_settings("regret").items():  # the curves the rule passes
        for s in settings:
            info = spec.experiments[exp_name].settings[s]
            rows = [
                {
                    "setting": s,
                    "algorithm": info.algorithm,
                    "t": t,
                    "n_seeds": len(info.seeds),
                    "mean": 0.5 * t,
                    "std": 0.1,
                }
                for t in range(1, info.horizon + 1)
            ]
            path = tmp_path / exp_name / s / "regret.csv"
            path.parent.mkdir(parents=True)
            pd.DataFrame(rows).to_csv(path, index=False)
            curves.setdefault(exp_name, {})[s] = str(path)
    pdf, png = tmp_path / "regret.pdf", tmp_path / "regret.png"
    plots.figure_job(spec, curves, pdf, png)
    assert pdf.stat().st_size > 0 and png.read_bytes().startswith(b"\x89PNG")
    tables = plots.regret.read_curves(curves)
    labels = plots.regret.figure_labels(spec, tables)  # the capped setting's legend names its own horizon
    short = spec.experiments["garland"].settings["short"]
    assert labels["short"].startswith(f"{short.label} (stops at t={short.horizon}")


def test_a_figure_spec_missing_a_field_is_refused_naming_it(tmp_path):
    """A figure job's spec file whose figure lacks a field is refused when the job reads it, naming
    the field."""
    from pydantic import ValidationError

    from vhct.pipeline.stale import FigureJob, read_spec

    data = {"figure": figure_spec().model_dump(mode="json"), "curves": {}, "styles": {}, "source": {}}
    del data["figure"]["experiments"]["e"]["settings"]["GP"]["horizon"]
    path = tmp_path / "beyond.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ValidationError, match=r"figure\.experiments\.e\.settings\.GP\.horizon"):
        read_spec(path, FigureJob)
