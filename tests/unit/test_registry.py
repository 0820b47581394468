"""The registry is the one place an algorithm is declared (names, parameters, config checks); its
figure style is a row of the reporting layer's style table or, without one, an automatic style.
Contract tests run over every registered algorithm (it builds, asks, is told, recommends; it has a
style of its own), and the registry idiom itself (vhct.registry) is tested at the end; its entry
points (plugins) in tests/unit/test_plugins.py."""

from __future__ import annotations

import copy
import pickle
import sys

import numpy as np
import pytest
from support import QUICK_PARAMS, SLOW_ALGORITHMS, algorithms_of, drive, quick_optimizer, quick_rounds

from vhct.optimizers.base import Optimizer
from vhct.optimizers.optuna_baselines import OptunaBaseline
from vhct.optimizers.registry import (
    ALGORITHM_TABLE,
    Algorithm,
    algorithm,
    algorithm_names,
    algorithm_params,
    make_optimizer,
    needs_horizon,
    osc_algorithms,
    register,
    unregister,
)
from vhct.optimizers.tree import OSC
from vhct.registry import Registry, UnknownName
from vhct.reporting.styles import AUTO_COLOURS, AUTO_LINES, STYLES, register_style, style

#: every registered baseline run through Optuna
OPTUNA_BASELINES = algorithms_of(OptunaBaseline)
#: the built-in algorithms' colours and line styles in the paper's figures (and today's baselines')
PAPER_STYLES = {
    "VHCT": ("#d62728", "-"),
    "HCT": ("#1f77b4", "--"),
    "T-HOO": ("#2ca02c", "-."),
    "POO": ("#7f7f7f", ":"),
    "PCT": ("#ff7f0e", (0, (5, 1, 1, 1))),
    "BO": ("#9467bd", (0, (3, 1, 1, 1, 1, 1))),
    "Random": ("#8c564b", (0, (1, 1))),
    "TPE": ("#e377c2", (0, (4, 2))),
    "CMA-ES": ("#17becf", (0, (6, 2, 1, 2))),
    "GP-Optuna": ("#bcbd22", (0, (2, 2, 6, 2))),
}


class Dummy(Optimizer):
    """Always the box's lower corner (a test algorithm, registered and removed by the fixture)."""

    name = "Dummy"

    def __init__(self, domain, seed=None, offset: float = 0.0):
        super().__init__(domain, seed)
        self.offset = offset

    def _ask(self):
        return self.domain[:, 0] + self.offset

    def _tell(self, reward):
        pass

    def recommend(self):
        return self.domain[:, 0].copy()


@pytest.fixture
def dummy():
    """The Dummy algorithm, registered without a style row (drawn in an automatic style)."""
    register(Algorithm("Dummy", f"{__name__}:Dummy"))
    yield "Dummy"
    unregister("Dummy")


@pytest.fixture
def temporary():
    """Registers algorithms (and style rows) for one test and removes them after it."""
    names: list[str] = []
    rows: list[str] = []

    def add(name: str, colour: str | None = None) -> str:
        register(Algorithm(name, f"{__name__}:Dummy"))
        names.append(name)
        if colour is not None:
            register_style(name, colour)
            rows.append(name)
        return name

    yield add
    for name in names:
        unregister(name)
    for name in rows:
        STYLES.unregister(name)


def test_one_row_makes_an_algorithm_usable_everywhere(dummy):
    pytest.importorskip("matplotlib")
    from vhct.pipeline.config import validate_config
    from vhct.reporting import styles

    assert dummy in algorithm_names()
    assert algorithm_params(dummy) == {"offset"}
    opt = make_optimizer(dummy, [[1.0, 2.0]], seed=0, offset=0.5)
    assert opt.ask().tolist() == [1.5]
    assert styles.style(dummy) == (AUTO_COLOURS[0], AUTO_LINES[0])  # the first free automatic style
    config = {
        "settings": {"d": {"algorithm": dummy, "params": {"offset": 0.1}}},
        "experiments": {
            "e": {"objective": "garland", "noise": 0.0, "horizon": 5, "seeds": 1, "settings": ["d"]}
        },
        "figures": {"f": {"kind": "regret", "panels": [{"experiment": "e"}]}},
    }
    validate_config(copy.deepcopy(config))
    config["settings"]["d"]["params"] = {"nope": 1}
    with pytest.raises(Exception, match="nope"):
        validate_config(copy.deepcopy(config))
    # the osc figure accepts only algorithms whose row says osc
    config["settings"]["d"]["params"] = {}
    config["figures"]["o"] = {"kind": "osc", "panels": [{"experiment": "e", "setting": "d", "round": 2}]}
    with pytest.raises(Exception, match="OSC figure needs one of HCT, VHCT"):
        validate_config(copy.deepcopy(config))


def test_after_unregistering_the_name_is_unknown(dummy):
    unregister(dummy)
    with pytest.raises(ValueError, match="unknown algorithm 'Dummy'"):
        make_optimizer(dummy, [[0.0, 1.0]])
    register(Algorithm("Dummy", f"{__name__}:Dummy"))  # for the fixture's teardown


def test_every_style_row_is_a_built_in_algorithms_in_the_papers_colours():
    """The built-ins (the rows registered in code, no plugin's) have a style row each, the rows are
    theirs, in the registry's order, and their colours are those of the paper's figures."""
    built_in = [name for name in algorithm_names() if ALGORITHM_TABLE.origin(name) is None]
    assert list(STYLES) == built_in == list(PAPER_STYLES)
    assert {name: style(name) for name in built_in} == PAPER_STYLES


@pytest.mark.parametrize("name", algorithm_names())
def test_every_registered_algorithm_is_drawn_in_a_style_of_its_own(name):
    """The styles' contract, entry by entry: a colour and a line style matplotlib draws, the
    colour no other algorithm's."""
    matplotlib = pytest.importorskip("matplotlib")
    from matplotlib.lines import Line2D

    colour, line = style(name)
    Line2D([0, 1], [0, 1], color=colour, linestyle=line)  # both valid, or matplotlib raises
    assert matplotlib.colors.is_color_like(colour)
    others = [style(other)[0].lower() for other in algorithm_names() if other != name]
    assert colour.lower() not in others


@pytest.mark.parametrize("name", algorithm_names())
def test_every_registered_algorithm_builds_asks_is_told_and_recommends(name):
    """The algorithm registry's contract, entry by entry: its row is found by name and built with
    the horizon when it takes one (refused without it), refuses a parameter it does not take, and
    runs the ask/tell protocol: points inside the box, every round counted, a recommendation in
    the box."""
    domain = np.array([[0.0, 1.0], [-1.0, 1.0]])
    rounds = quick_rounds(name, 30)
    assert algorithm(name).name == name
    opt = quick_optimizer(name, domain, rounds, seed=1)
    assert isinstance(opt, Optimizer) and opt.dim == 2 and opt.t == 0
    if needs_horizon(name):
        with pytest.raises(ValueError, match=f"{name} needs the horizon"):
            make_optimizer(name, domain, seed=1, **QUICK_PARAMS.get(name, {}))
    with pytest.raises(ValueError, match=f"{name} does not accept parameter"):
        make_optimizer(name, domain, rounds, seed=1, no_such_parameter=1)
    points = drive(opt, _objective, rounds)
    assert opt.t == rounds and np.all(points >= domain[:, 0]) and np.all(points <= domain[:, 1])
    recommendation = opt.recommend()
    assert recommendation.shape == (2,)
    assert np.all(recommendation >= domain[:, 0]) and np.all(recommendation <= domain[:, 1])


def test_an_algorithm_without_a_style_row_gets_a_free_colour_whatever_rows_are_added(temporary):
    """Before: the dummy's row took #000000, so a new algorithm's row in that colour failed this
    file. Now an algorithm without a row takes a colour no row takes, in the registry's order: a
    row added in its colour moves it to the next free one, the built-ins' stay."""
    first, second = temporary("Unstyled1"), temporary("Unstyled2")
    assert [style(first), style(second)] == [(AUTO_COLOURS[0], "-"), (AUTO_COLOURS[1], "-")]
    temporary("Takes-first", colour=AUTO_COLOURS[0].upper())  # a row in the colour `first` had
    assert [style(first), style(second)] == [(AUTO_COLOURS[1], "-"), (AUTO_COLOURS[2], "-")]
    colours = [style(name)[0].lower() for name in algorithm_names()]
    assert len(set(colours)) == len(colours)
    assert {name: style(name) for name in PAPER_STYLES} == PAPER_STYLES
    unregister(first)
    with pytest.raises(ValueError, match="unknown algorithm 'Unstyled1'"):
        style(first)
    register(Algorithm(first, f"{__name__}:Dummy"))  # for the fixture's teardown


def test_automatic_styles_are_distinct_colours_then_distinct_pairs(temporary):
    """More algorithms without a row than free colours: the colours repeat with another line style,
    so every (colour, line) pair is still an algorithm's own."""
    free = [c for c in AUTO_COLOURS if c.lower() not in {row.colour.lower() for row in STYLES.values()}]
    many = [temporary(f"Auto{k}") for k in range(len(free) + 3)]
    drawn = [style(name) for name in algorithm_names()]
    assert len(set(drawn)) == len(drawn)
    assert [style(name) for name in many[: len(free)]] == [(colour, AUTO_LINES[0]) for colour in free]
    assert [style(name) for name in many[len(free) :]] == [(colour, AUTO_LINES[1]) for colour in free[:3]]


def test_colours_never_collide():
    colours = [s.colour.lower() for s in STYLES.values()]
    assert len(set(colours)) == len(colours)
    with pytest.raises(ValueError, match="colour '#D62728' of 'Red' is already 'VHCT'"):
        register_style("Red", "#D62728")
    with pytest.raises(ValueError, match="algorithm style 'VHCT' is already registered"):
        register_style("VHCT", "#010101")
    with pytest.raises(ValueError, match="'VHCT' is already registered"):
        register(Algorithm("VHCT", f"{__name__}:Dummy"))


def test_osc_column():
    assert osc_algorithms() == {"VHCT", "HCT"} == set(algorithms_of(OSC))


def test_horizon_required_only_where_used():
    with pytest.raises(ValueError, match="T-HOO needs the horizon"):
        make_optimizer("T-HOO", [[0.0, 1.0]])
    assert make_optimizer("VHCT", [[0.0, 1.0]], seed=0).ask().shape == (1,)


def _objective(x: np.ndarray) -> float:
    return float(-np.sum((x - 0.3) ** 2) + 0.1 * np.sin(20 * x[0]))


@pytest.mark.parametrize("name", algorithm_names())
def test_pickled_mid_run_continues_with_the_same_points(name):
    """A long run survives a restart: the pickled optimizer proposes exactly what the original does."""
    rounds = quick_rounds(name, 30)
    opt = quick_optimizer(name, [[0.0, 1.0], [-1.0, 1.0]], 2 * rounds, seed=5)
    drive(opt, _objective, rounds)
    opt.ask()  # a pending point is part of the state too
    restored = pickle.loads(pickle.dumps(opt))
    np.testing.assert_array_equal(drive(restored, _objective, rounds), drive(opt, _objective, rounds))


@pytest.mark.parametrize("name", OPTUNA_BASELINES)
def test_baselines_are_seeded_by_the_run(name):
    rounds = quick_rounds(name, 25)

    def points(seed: int) -> np.ndarray:
        opt = quick_optimizer(name, [[0.0, 1.0], [-1.0, 1.0]], seed=np.random.default_rng(seed))
        return drive(opt, _objective, rounds)

    first = points(3)
    np.testing.assert_array_equal(points(3), first)
    assert not np.array_equal(points(4), first)
    assert np.all((first >= [0.0, -1.0]) & (first <= [1.0, 1.0]))


@pytest.mark.parametrize("name", [name for name in OPTUNA_BASELINES if name not in SLOW_ALGORITHMS])
def test_baselines_maximize_and_recommend_the_best_point(name):
    opt = quick_optimizer(name, [[0.0, 1.0], [-1.0, 1.0]], seed=0)
    points = drive(opt, _objective, 60)
    values = np.array([_objective(p) for p in points])
    assert opt.recommend().tolist() == points[np.argmax(values)].tolist()
    # maximization: the second half does better than uniform points on average (TPE, CMA-ES), and
    # random search's recommendation is the best of its draws
    if name != "Random":
        uniform = np.random.default_rng(0).uniform([0, -1], [1, 1], size=(2000, 2))
        assert values[30:].mean() > np.mean([_objective(p) for p in uniform])


def test_the_gp_sampler_runs_on_one_torch_thread_and_restores_the_callers(monkeypatch):
    pytest.importorskip("torch")
    import optuna
    import torch
    from threadpoolctl import threadpool_info

    seen = []
    fit = optuna.samplers.GPSampler.sample_relative

    def recording(self, *args, **kwargs):
        seen.append(torch.get_num_threads())
        seen.extend(pool["num_threads"] for pool in threadpool_info())  # BLAS and OpenMP
        return fit(self, *args, **kwargs)

    monkeypatch.setattr(optuna.samplers.GPSampler, "sample_relative", recording)
    saved = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        drive(
            quick_optimizer("GP-Optuna", [[0.0, 1.0], [-1.0, 1.0]], seed=0, n_startup_trials=2), _objective, 4
        )
        assert seen and set(seen) == {1}  # the GP's fit and acquisition ran single-threaded
        assert torch.get_num_threads() == 2  # the caller's setting is back
    finally:
        torch.set_num_threads(saved)


def test_bad_baseline_parameters_are_named():
    pytest.importorskip("optuna")
    with pytest.raises(ValueError, match="n_startup_trials"):
        make_optimizer("TPE", [[0.0, 1.0]], n_startup_trials=-1)
    with pytest.raises(ValueError, match="TPE does not accept parameter"):
        make_optimizer("TPE", [[0.0, 1.0]], sigma0=1.0)


def test_flags_must_be_bools():
    pytest.importorskip("optuna")
    with pytest.raises(ValueError, match="multivariate must be a bool, got 'yes'"):
        make_optimizer("TPE", [[0.0, 1.0]], multivariate="yes")


# -- the registry idiom (vhct.registry), shared by every registry of the package ----------------------


def test_a_registry_keeps_order_refuses_a_name_twice_and_lists_the_known_names():
    seen = []
    table = Registry("thing", check=lambda name, entry: seen.append((name, entry)))
    assert table.register("b", 2) == 2 and table.register("a", 1) == 1
    assert list(table) == ["b", "a"] and table["a"] == 1 and len(table) == 2
    assert seen == [("b", 2), ("a", 1)]  # each entry checked once, when registered
    with pytest.raises(ValueError, match="thing 'a' is already registered"):
        table.register("a", 3)
    with pytest.raises(UnknownName, match="unknown thing 'c'; known: b, a") as info:
        table.lookup("c")
    assert isinstance(info.value, KeyError) and isinstance(info.value, ValueError)
    table.unregister("b")
    assert list(table) == ["a"] and "b" not in table
    with pytest.raises(UnknownName, match="unknown thing 'b'; known: a"):
        table.unregister("b")


def test_register_is_a_decorator_under_a_name_or_the_classes_own():
    table = Registry("thing")

    @table.register
    class Named:
        name = "named"

    @table.register("f")
    def f():
        return 1

    assert dict(table) == {"named": Named, "f": f} and f() == 1


def test_a_lazy_entry_is_imported_and_checked_on_first_lookup_only():
    checked = []
    table = Registry("thing", check=lambda name, entry: checked.append(name))
    table.register("dumps", "json:dumps")
    module = sys.modules.pop("json.tool", None)  # a module surely not imported by anything else here
    try:
        table.register("tool", "json.tool:main")
        assert "tool" in table and "json.tool" not in sys.modules  # membership imports nothing
        assert table.target("tool") == "json.tool:main" and "json.tool" not in sys.modules
        assert checked == []
        assert table["tool"] is sys.modules["json.tool"].main and checked == ["tool"]
        assert table["tool"] is table.lookup("tool") and checked == ["tool"]  # imported once
        assert table.target("tool") == "json.tool:main"  # still says how it was registered
        table.register("plain", 0)
        assert table.target("plain") is None
        with pytest.raises(UnknownName, match="unknown thing 'nope'"):
            table.target("nope")
    finally:
        if module is not None:
            sys.modules["json.tool"] = module
