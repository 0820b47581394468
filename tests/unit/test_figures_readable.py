"""Figures a referee can read alone (issue 37, item 5): every figure of mean curves says what its band
is and gives each curve's seeds (from the aggregate it draws), no title claims a seed count a curve
lacks, titles and legends do not overlap, and Fig. 2 says which node stops the descent and why."""

from __future__ import annotations

import math
import re

import pytest

pd = pytest.importorskip("pandas")
pytest.importorskip("matplotlib")

from support import REPO, TINY  # noqa: E402

from vhct.pipeline.config import load  # noqa: E402
from vhct.pipeline.figure_kinds import BAND_CAPTION, BAND_NOTE, FIGURE_KINDS, figure_kind  # noqa: E402
from vhct.pipeline.specs import ExperimentInfo, FigureSpec, PanelSpec, SettingInfo  # noqa: E402
from vhct.reporting import captions, plots  # noqa: E402

#: setting -> algorithm of the made-up experiments
SETTINGS = {"VHCT-a": "VHCT", "HCT-a": "HCT", "POO": "POO"}
#: each curve's seeds in its aggregate, per experiment: every count differs from the config's (3)
SEEDS = {"e": {"VHCT-a": 100, "HCT-a": 20, "POO": 7}, "f": {"VHCT-a": 100, "HCT-a": 20, "POO": 1}}
#: a long panel title (Landmine's), the kind that overlapped a legend beside one panel
LONG_TITLE = "Landmine: SVM (C, RBF gamma), test AUC-ROC"
BAND_KINDS = [kind for kind in FIGURE_KINDS if figure_kind(kind).band]


def experiment(name: str) -> ExperimentInfo:
    """A made-up experiment whose config says 3 seeds for every setting."""
    info = {
        s: SettingInfo(algorithm=a, label=s, params={}, horizon=10, seeds=[0, 1, 2])
        for s, a in SETTINGS.items()
    }
    return ExperimentInfo(
        name=name,
        title=f"{name.upper()}: {LONG_TITLE}",
        objective="garland",
        objective_params={},
        noise=0.05,
        horizon=10,
        seeds=[0, 1, 2],
        settings=info,
    )


def write_curves(tmp_path, experiments) -> dict[str, dict[str, str]]:
    """Curve and timing aggregates of each setting, with the seeds of SEEDS in column n_seeds."""
    curves: dict[str, dict[str, str]] = {}
    for name in experiments:
        for setting, algorithm in SETTINGS.items():
            folder = tmp_path / name / setting
            folder.mkdir(parents=True)
            n = SEEDS[name][setting]
            curve = {
                "setting": setting,
                "algorithm": algorithm,
                "t": range(1, 11),
                "n_seeds": n,
                "mean": [0.5 * t for t in range(1, 11)],
                "std": 0.2,
            }
            pd.DataFrame(curve).to_csv(folder / "regret.csv", index=False)
            timing = {
                "setting": setting,
                "algorithm": algorithm,
                "seed": [0, 1],
                "step_seconds_mean": [1e-4, 2e-4],
            }
            pd.DataFrame(timing).to_csv(folder / "timing.csv", index=False)
            curves.setdefault(name, {})[setting] = str(folder / "regret.csv")
    return curves


def draw(kind: str, tmp_path, experiments=("e", "f")):
    spec = FigureSpec(
        name=f"probe-{kind}",
        kind=kind,
        title="A figure title",
        experiments={name: experiment(name) for name in experiments},
        panels=[PanelSpec(experiment=name) for name in experiments],
    )
    with plots.common.plt.rc_context(plots.common.RC):
        fig = plots.DRAWERS.lookup(kind)(spec, write_curves(tmp_path, experiments))
        fig.canvas.draw()
    return fig


def titles(fig) -> list:
    """Every title text of a figure: the panels' and the figure's."""
    texts = [ax.title for ax in fig.axes if ax.get_title()]
    return texts + ([fig._suptitle] if fig._suptitle is not None else [])


def test_the_curve_kinds_are_declared_with_their_band():
    assert {"regret", "average_regret", "regret_cost"} <= set(BAND_KINDS)
    assert not figure_kind("osc").band and not figure_kind("function").band


@pytest.mark.parametrize("kind", BAND_KINDS)
@pytest.mark.parametrize("experiments", [("e", "f"), ("e",)], ids=["two panels", "one panel"])
def test_each_curve_figure_gives_its_band_and_each_curves_seeds(kind, experiments, tmp_path):
    """The legend's title says what the bands are; each curve's label its seeds as its aggregate
    says (not the config's 3), per panel where they differ; no title names a seed count."""
    fig = draw(kind, tmp_path, experiments)
    (legend,) = fig.legends
    assert legend.get_title().get_text().replace("\n", " ") == BAND_NOTE
    labels = {text.get_text().replace("\n", " ") for text in legend.get_texts()}
    for setting in SETTINGS:  # the aggregate's seeds, not the config's 3
        (label,) = [label for label in labels if label.startswith(setting + " ")]
        counts = {SEEDS[name][setting] for name in experiments}
        for n in counts:
            assert f"{n} seed{'s' * (n != 1)}" in label, label
        assert "3 seeds" not in label
    # no title names a seed count: the panels' curves run different ones
    for text in titles(fig):
        assert not re.search(r"\d+ seeds?\b", text.get_text()), text.get_text()
    plots.common.plt.close(fig)


@pytest.mark.parametrize("kind", BAND_KINDS)
@pytest.mark.parametrize("experiments", [("e", "f"), ("e",)], ids=["two panels", "one panel"])
def test_no_title_overlaps_the_legend_or_leaves_the_figure(kind, experiments, tmp_path):
    fig = draw(kind, tmp_path, experiments)
    renderer = fig.canvas.get_renderer()
    (legend,) = fig.legends
    box = legend.get_window_extent(renderer)
    overlapping = [t.get_text() for t in titles(fig) if t.get_window_extent(renderer).overlaps(box)]
    assert overlapping == []
    page = fig.bbox  # and nothing of a title or the legend is cut off at the figure's edges
    for text in [*titles(fig), legend]:
        extent = text.get_window_extent(renderer)
        assert page.x0 <= extent.x0 and extent.x1 <= page.x1 and extent.y1 <= page.y1, text
    plots.common.plt.close(fig)


def test_a_curve_figure_is_drawn_the_same_twice(tmp_path):
    spec = FigureSpec(
        name="twice", kind="regret", experiments={"e": experiment("e")}, panels=[PanelSpec(experiment="e")]
    )
    curves = write_curves(tmp_path, ["e"])
    outputs = []
    for k in range(2):
        pdf, png = tmp_path / f"{k}.pdf", tmp_path / f"{k}.png"
        plots.figure_job(spec, curves, pdf, png)
        outputs.append((pdf.read_bytes(), png.read_bytes()))
    assert outputs[0] == outputs[1]


def test_an_aggregate_without_one_seed_count_per_setting_is_refused():
    exp = experiment("e")
    table = pd.DataFrame({"setting": ["POO", "POO"], "n_seeds": [3, 4]})
    with pytest.raises(ValueError, match="'e': setting 'POO' needs one n_seeds value, got \\[3, 4\\]"):
        plots.regret.curve_seeds(exp, table, ["POO"])
    with pytest.raises(ValueError, match="setting 'POO' needs one n_seeds value, got \\[\\]"):
        plots.regret.curve_seeds(exp, table.drop(columns="n_seeds"), ["POO"])


def test_the_captions_of_curve_figures_state_the_band_and_each_settings_seeds():
    cfg = load([REPO / "config" / "config.yaml"])[0]
    captions_dir = REPO / "workflow" / "report" / "figures"
    drawn = 0
    for name, fig in cfg.figures.items():
        text = captions.figure_caption(cfg, name, captions_dir)
        assert (BAND_CAPTION in text) == figure_kind(fig.kind).band, name
        if not figure_kind(fig.kind).band:
            continue
        drawn += 1
        assert not re.search(r"horizon \d+, \d+ seeds", text)  # no experiment-wide seed count
        for experiment_name, settings in cfg.figure_settings(name).items():
            for setting in settings:
                n = len(cfg.setting_seeds(experiment_name, setting))
                assert re.search(rf"{re.escape(setting)} \([^)]*, {n} seeds?\)", text), (name, setting)
    assert drawn >= 5


# ---------------------------------------------------------------- Fig. 2 (kind osc)


def osc_spec(config, figure: str, round_: int) -> FigureSpec:
    """The osc figure ``figure`` of ``config`` at round ``round_``."""
    spec = load([config])[0].figure_spec(figure)
    return spec.model_copy(update={"panels": [spec.panels[0].model_copy(update={"round": round_})]})


def first_round(run, kind: str, start: int = 2) -> int:
    """The first round from ``start`` at which the descent of ``run`` stops at a node of ``kind``."""
    for round_ in range(start, run.horizon + 1):
        if plots.osc.stop_kind(plots.osc.osc_report(run, round_)[-1]) == kind:
            return round_
    raise AssertionError(f"no round of {run} stops at a node of kind {kind}")


def highlighted(fig, report):
    """The node drawn large in red on the path panel, as (depth, centre), and the path panel's label."""
    ax = fig.axes[0]
    (big,) = [c for c in ax.collections if c.get_sizes()[0] > plots.osc.NODE_SIZE]
    x, y = big.get_offsets()[0]
    return (-y, x), ax.get_xlabel().replace("\n", " ")


@pytest.mark.parametrize("kind", ["oe<=se", "unpulled"])
def test_fig2_highlights_the_node_that_stops_the_descent_and_says_why(kind):
    """On tiny's run, the first round whose descent stops at a node pulled before with OE <= SE (the
    paper's caption) and the first that ends at a never-pulled leaf: the node in red is the path's
    last, and the line under the path states the case, OE <= SE with both values, or "never pulled"."""
    run = load([TINY])[0].figure_spec("osc").panels[0].run
    round_ = first_round(run, kind)
    report = plots.osc.osc_report(run, round_)
    last = report[-1]
    with plots.common.plt.rc_context(plots.common.RC):
        fig = plots.osc.osc_figure(osc_spec(TINY, "osc", round_))
    (depth, centre), label = highlighted(fig, report)
    assert (depth, centre) == pytest.approx((last["depth"], (last["index"] - 0.5) / 2 ** last["depth"]))
    se, oe = last["uncertainty"], last["resolution"]
    if kind == "oe<=se":
        assert last["T"] > 0 and math.isfinite(se) and oe <= se and last["T"] < last["tau"]
        assert f"because OE={oe:.3g} <= SE={se:.3g}" in label and "never pulled" not in label
    else:
        assert last["T"] == 0 and not math.isfinite(se)
        assert f"at t = {round_} the descent ends at" in label and "never pulled" in label
        assert "not the paper's case" in label
    plots.common.plt.close(fig)


def test_the_default_configs_fig2_shows_the_papers_case():
    """config.yaml's Fig. 2 round stops the descent at depth 5 ("the fifth level") at a node with a
    finite SE at least its OE."""
    spec = load([REPO / "config" / "config.yaml"])[0].figure_spec("fig2_osc_illustration")
    last = plots.osc.osc_report(spec.panels[0].run, spec.panels[0].round)[-1]
    assert plots.osc.stop_kind(last) == "oe<=se" and last["depth"] == 5


@pytest.mark.parametrize("kind", BAND_KINDS)
def test_a_legend_of_names_for_a_document_whose_caption_gives_the_seeds(kind, tmp_path):
    """``seeds_in_legend=False`` (the article's figures): each label is its setting's name alone."""
    spec = FigureSpec(
        name=f"probe-{kind}",
        kind=kind,
        experiments={"e": experiment("e")},
        panels=[PanelSpec(experiment="e")],
    )
    with plots.common.plt.rc_context(plots.common.RC):
        fig = plots.DRAWERS.lookup(kind)(spec, write_curves(tmp_path, ["e"]), seeds_in_legend=False)
    (legend,) = fig.legends
    assert {text.get_text() for text in legend.get_texts()} == set(SETTINGS)
    plots.common.plt.close(fig)


def test_a_noise_sweeps_panel_does_not_repeat_its_noise(tmp_path):
    """A panel title that gives the noise's range is not followed by the same range again."""
    exp = experiment("e")
    spec = FigureSpec(
        name="probe",
        kind="regret",
        experiments={"e": exp},
        panels=[PanelSpec(experiment="e", title="E, noise Uniform(-0.05, 0.05)")],
    )
    with plots.common.plt.rc_context(plots.common.RC):
        fig = plots.DRAWERS.lookup("regret")(spec, write_curves(tmp_path, ["e"]))
    (title,) = [ax.get_title() for ax in fig.axes if ax.get_title()]
    assert "(-0.05, 0.05)" in title and "U(-0.05, 0.05)" not in title and "n = 10" in title
    plots.common.plt.close(fig)
