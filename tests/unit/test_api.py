"""vhct.maximize / vhct.minimize: one call, a scipy-like result with every point and value."""

from __future__ import annotations

import math
import pickle
import subprocess
import sys
import tracemalloc
from types import SimpleNamespace

import numpy as np
import pytest
from scipy.optimize import Bounds
from support import QUICK_PARAMS, algorithms_of, drive, hierarchical_algorithms, quick_optimizer, quick_rounds

import vhct
from vhct.api import BOUNDS_FORMS, STATUS_FAILED, STATUS_INTERRUPTED, STATUS_STOPPED
from vhct.extras import MissingExtraError
from vhct.optimizers.registry import algorithm_names, make_optimizer
from vhct.optimizers.tree import TreeSearch

DOMAIN = [[0.0, 1.0], [-1.0, 1.0]]


def bowl(x: np.ndarray) -> float:
    return float((x[0] - 0.3) ** 2 + (x[1] + 0.2) ** 2)


def test_maximize_is_the_ask_tell_loop():
    result = vhct.maximize(lambda x: -bowl(x), DOMAIN, 80, seed=4, rho=0.75)
    opt = make_optimizer("VHCT", DOMAIN, 80, seed=4, rho=0.75)
    assert drive(opt, lambda x: -bowl(x), 80).tolist() == result.points.tolist()
    assert result.recommendation.tolist() == opt.recommend().tolist()
    assert result.values.tolist() == [-bowl(p) for p in result.points]
    best = int(np.argmax(result.values))
    assert result.x.tolist() == result.points[best].tolist() and result.fun == result.values[best]
    assert result.evaluations == 80 and result.points.shape == (80, 2) and result.wall_seconds > 0
    assert result.algorithm == "VHCT"


def test_minimize_reports_the_function_itself():
    result = vhct.minimize(bowl, DOMAIN, 120, algorithm="HCT", seed=1)
    assert result.fun == pytest.approx(min(result.values)) and result.fun >= 0
    assert result.fun == bowl(result.x)
    assert result.fun < 0.01  # it minimizes: the bowl's minimum 0 is at (0.3, -0.2)
    again = vhct.minimize(bowl, DOMAIN, 120, algorithm="HCT", seed=1)
    assert again.points.tolist() == result.points.tolist()


@pytest.mark.parametrize("name", algorithm_names())
def test_every_registered_algorithm_by_name(name):
    """Each algorithm of the registry by its name: the run is its ask/tell loop built with the
    budget as its horizon (used by those that need one), told the function's values."""
    budget = quick_rounds(name, 40)
    try:
        result = vhct.maximize(
            lambda x: -bowl(x), DOMAIN, budget, algorithm=name, seed=0, **QUICK_PARAMS.get(name, {})
        )
    except MissingExtraError as exc:
        pytest.skip(f"{name}: {exc}")
    assert result.algorithm == name and result.nfev == budget and result.points.shape == (budget, 2)
    loop = drive(quick_optimizer(name, DOMAIN, budget, seed=0), lambda x: -bowl(x), budget)
    assert loop.tolist() == result.points.tolist()
    assert result.values.tolist() == [-bowl(p) for p in result.points] and result.fun == max(result.values)


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="budget must be an integer >= 1"):
        vhct.maximize(bowl, DOMAIN, 0)
    with pytest.raises(ValueError, match="f must be callable"):
        vhct.maximize(3, DOMAIN, 5)
    with pytest.raises(ValueError, match="domain dimension 0 is empty"):
        vhct.maximize(bowl, [[1.0, 0.0]], 5)
    with pytest.raises(ValueError, match="unknown algorithm 'Nope'"):
        vhct.maximize(bowl, DOMAIN, 5, algorithm="Nope")
    with pytest.raises(ValueError, match=r"f returned nan at .* \(evaluation 1\)"):
        vhct.maximize(lambda x: float("nan"), DOMAIN, 5)


def branin(x: np.ndarray) -> float:
    """Branin on [-5, 10] x [0, 15]; minimum 0.397887."""
    a, b, c, r, s, t = 1.0, 5.1 / (4 * math.pi**2), 5 / math.pi, 6.0, 10.0, 1 / (8 * math.pi)
    return float(a * (x[1] - b * x[0] ** 2 + c * x[0] - r) ** 2 + s * (1 - t) * math.cos(x[0]) + s)


BRANIN = [[-5.0, 10.0], [0.0, 15.0]]


class Counted:
    """A function that counts its calls and remembers the points it was called at."""

    def __init__(self, f, fail_at: int | None = None, exc: BaseException | None = None, value=None):
        self.f, self.calls, self.seen = f, 0, []
        self.fail_at, self.exc, self.value = fail_at, exc, value

    def __call__(self, x):
        self.calls += 1
        self.seen.append(x.copy())
        if self.calls == self.fail_at:
            if self.exc is not None:
                raise self.exc
            return self.value
        return self.f(x)


# -- 1. the result: scipy's OptimizeResult fields, skopt's aliases, the old names, a short repr -----


def test_the_result_is_a_dict_with_scipys_and_skopts_fields():
    result = vhct.minimize(bowl, DOMAIN, 300, seed=2)
    assert isinstance(result, dict)
    for key in (
        "x",
        "fun",
        "nfev",
        "nit",
        "success",
        "status",
        "message",
        "points",
        "values",
        "x_iters",
        "func_vals",
        "recommendation",
        "wall_seconds",
        "evaluations",
        "distinct_points",
        "algorithm",
        "deterministic",
        "recommendation_fun",
        "recommendation_count",
    ):
        assert getattr(result, key) is result[key], key
    assert result.success is True and result.status == 0 and "budget of 300" in result.message
    assert result.nfev == result.nit == result.evaluations == 300
    assert result.x_iters is result.points and result.func_vals is result.values
    assert result.values.shape == (300,) and result.points.shape == (300, 2)  # r.values: the array
    assert result.fun == result.values.min() == bowl(result.x)
    distinct = {row.tobytes() for row in result.points}
    assert result.distinct_points == len(distinct) < 300  # VHCT pulls the same points again
    assert result.wall_seconds > 0 and result.algorithm == "VHCT"
    assert dict(result)["x"] is result.x and set(result) >= {"x", "fun", "nfev"}
    with pytest.raises(AttributeError):
        result.no_such_field  # noqa: B018
    copy = pickle.loads(pickle.dumps(result))
    assert type(copy) is vhct.Result and copy.x.tolist() == result.x.tolist() and copy.values.shape == (300,)


def test_the_repr_is_short():
    result = vhct.minimize(bowl, DOMAIN, 500, seed=0)
    text = repr(result)
    assert len(text.splitlines()) <= 10 and len(text) < 600, text
    assert f"nit: {result.nit}" in text and "fun:" in text and "success: True" in text
    assert "points" not in text and "array(" not in text  # the history is not printed


@pytest.mark.filterwarnings("ignore::vhct.optimizers.base.RewardRangeWarning")
def test_a_noisy_result_prints_the_recommendation_before_fun():
    """Issue 51: printing a noisy run showed ``fun: -2.175``, a lucky noisy value below Branin's true
    minimum 0.398, and hid ``recommendation``, the answer to read for a noisy f::

        rng = np.random.default_rng(0)
        print(vhct.minimize(lambda x: branin(x) + rng.uniform(-3, 3), BRANIN, 300, seed=0, algorithm="HCT"))

    Now a run with ``deterministic=False`` prints the recommendation first, with the mean of the
    values observed there; a deterministic run prints ``fun`` and ``x`` as before."""
    rng = np.random.default_rng(0)
    noisy = vhct.minimize(lambda x: branin(x) + rng.uniform(-3, 3), BRANIN, 300, seed=0, algorithm="HCT")
    here = np.all(noisy.points == noisy.recommendation, axis=1)
    assert noisy.deterministic is False and noisy.recommendation_count == int(here.sum()) > 0
    assert noisy.recommendation_fun == pytest.approx(noisy.values[here].mean())
    lines = repr(noisy).splitlines()
    keys = [line.split(":")[0].strip() for line in lines[1:-1]]
    assert keys[:4] == ["message", "success", "recommendation", "fun"], lines
    shown = np.array2string(noisy.recommendation, precision=6, threshold=8)
    count = noisy.recommendation_count
    evaluations = f"{count} evaluation{'s' if count != 1 else ''}"
    assert lines[3].endswith(
        f"recommendation: {shown} (mean of f there {noisy.recommendation_fun:.6g}, {evaluations})"
    )
    assert lines[4].endswith(f"fun: {noisy.fun!r} (best single value, at x: if f is noisy, a flattering one)")
    exact = vhct.minimize(branin, BRANIN, 300, seed=0, algorithm="HCT", deterministic=True)
    assert exact.deterministic is True and "recommendation" not in repr(exact)
    assert "flattering" not in repr(exact) and f"fun: {exact.fun!r}\n" in repr(exact)


# -- 2. callback and progress ---------------------------------------------------------------------


def test_the_callback_sees_each_evaluation_and_returning_true_stops():
    full = vhct.minimize(bowl, DOMAIN, 40, seed=3)
    seen = []

    def callback(intermediate):
        seen.append(
            (intermediate.nit, intermediate.points[-1].copy(), intermediate.values[-1], intermediate.fun)
        )
        assert not intermediate.points.flags.writeable  # a view of the history: the caller cannot change it
        return intermediate.nit == 7

    result = vhct.minimize(bowl, DOMAIN, 40, seed=3, callback=callback)
    assert [n for n, *_ in seen] == list(range(1, 8))
    assert all(p.tolist() == full.points[n - 1].tolist() and v == full.values[n - 1] for n, p, v, _ in seen)
    assert [fun for *_, fun in seen] == [min(full.values[:n]) for n in range(1, 8)]  # best so far
    assert result.nit == result.nfev == 7 and result.points.tolist() == full.points[:7].tolist()
    assert result.success is True and result.status == STATUS_STOPPED
    assert result.message == "stopped by the callback after 7 evaluations"


def test_a_callback_raising_stopiteration_stops_and_none_continues():
    def stop_at_3(intermediate):
        if intermediate.nit == 3:
            raise StopIteration

    assert vhct.maximize(bowl, DOMAIN, 20, seed=0, callback=stop_at_3).nit == 3
    assert vhct.maximize(bowl, DOMAIN, 20, seed=0, callback=lambda r: None).nit == 20
    with pytest.raises(ValueError, match="callback must be callable"):
        vhct.maximize(bowl, DOMAIN, 20, callback=3)


def test_progress_log_lines_every_n_evaluations(capsys):
    vhct.minimize(bowl, DOMAIN, 20, seed=0, progress=5)
    lines = capsys.readouterr().err.strip().splitlines()
    assert [line.split(":")[1].split()[0] for line in lines] == ["5/20", "10/20", "15/20", "20/20"]
    assert all(line.startswith("vhct.minimize: ") and "best " in line for line in lines)
    vhct.minimize(bowl, DOMAIN, 20, seed=0)
    assert capsys.readouterr().err == ""  # opt-in


def test_progress_true_without_tqdm_logs_every_tenth(capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)  # as if tqdm were not installed
    vhct.maximize(bowl, DOMAIN, 50, seed=0, progress=True)
    assert len(capsys.readouterr().err.strip().splitlines()) == 10


def test_progress_true_uses_tqdm_when_installed(capsys):
    pytest.importorskip("tqdm")
    vhct.maximize(bowl, DOMAIN, 50, seed=0, progress=True)
    assert "50/50" in capsys.readouterr().err


# -- 3. failure and Ctrl-C: the partial result travels with the exception ------------------------


@pytest.mark.parametrize(
    ("exc", "status"), [(ZeroDivisionError("boom"), STATUS_FAILED), (KeyboardInterrupt(), STATUS_INTERRUPTED)]
)
def test_an_exception_or_ctrl_c_keeps_the_evaluations_so_far(exc, status):
    full = vhct.minimize(bowl, DOMAIN, 30, seed=5)
    f = Counted(bowl, fail_at=9, exc=exc)
    with pytest.raises(type(exc)) as info:
        vhct.minimize(f, DOMAIN, 30, seed=5)
    partial = info.value.result
    assert partial.nit == 8 and partial.nfev == 9  # f was called a ninth time, and failed
    assert partial.success is False and partial.status == status
    assert (
        partial.points.tolist() == full.points[:8].tolist()
        and partial.values.tolist() == full.values[:8].tolist()
    )
    assert partial.fun == min(full.values[:8]) and "after 8 completed evaluations" in partial.message
    assert any("exc.result" in note for note in info.value.__notes__)


def test_nan_stops_with_the_partial_result_and_names_the_evaluation():
    f = Counted(bowl, fail_at=4, value=float("nan"))
    with pytest.raises(
        ValueError, match=r"vhct.minimize: f returned nan at x=\[.*\] \(evaluation 4\)"
    ) as info:
        vhct.minimize(f, DOMAIN, 30, seed=5)
    partial = info.value.result
    assert partial.nit == 3 and partial.success is False and partial.status == STATUS_FAILED
    assert partial.points.tolist() == [p.tolist() for p in f.seen[:3]]


def test_a_failure_at_the_first_evaluation_has_no_best_point():
    with pytest.raises(ValueError) as info:
        vhct.minimize(lambda x: math.inf, DOMAIN, 30, seed=5)
    assert info.value.result.nit == 0 and info.value.result.x is None and info.value.result.fun is None


# -- 4. bounds --------------------------------------------------------------------------------------


def test_scipy_bounds_are_accepted():
    pairs = vhct.minimize(bowl, DOMAIN, 60, seed=1)
    for bounds in (Bounds([0.0, -1.0], [1.0, 1.0]), Bounds(np.array([0, -1]), np.array([1, 1]))):
        assert vhct.minimize(bowl, bounds, 60, seed=1).points.tolist() == pairs.points.tolist()
    as_array = vhct.minimize(bowl, np.array(DOMAIN), 60, seed=1)
    assert as_array.points.tolist() == pairs.points.tolist()
    three = vhct.minimize(lambda x: float(x @ x), ((0, 1), (0, 1), (0, 1)), 10, seed=0)  # 3 pairs in a tuple
    assert three.points.shape == (10, 3)
    broadcast = vhct.minimize(lambda x: float(x @ x), Bounds(0.0, [1.0, 2.0]), 10, seed=0)
    assert broadcast.points.shape == (10, 2) and np.all(broadcast.points[:, 1] <= 2)


@pytest.mark.parametrize(
    "ambiguous",
    [
        ([0, 1], [2, 3]),  # the lo=[0, 1], hi=[2, 3], scipy's (lb, ub) form
        (np.array([0.0, 1.0]), np.array([2.0, 3.0])),
        [np.array([0.0, 1.0]), np.array([2.0, 3.0])],
        [[0, 1, 2], [3, 4, 5]],  # (2, d) with d != 2: only the two-arrays reading fits
        np.array([[0.0], [1.0]]),
    ],
)
def test_the_two_arrays_form_is_refused_with_the_accepted_forms(ambiguous):
    f = Counted(bowl)
    with pytest.raises(ValueError, match=r"\(lo_array, hi_array\)") as info:
        vhct.minimize(f, ambiguous, 10)
    assert BOUNDS_FORMS in str(info.value) and "scipy.optimize.Bounds(lb, ub)" in str(info.value)
    assert f.calls == 0


@pytest.mark.parametrize(
    ("bounds", "match"),
    [
        ([["0", "1"]], "must hold real numbers .* got '0'"),
        ([[0, True]], "must hold real numbers .* got True"),
        (np.array([["0", "1"]]), "dtype <U1"),
        (Bounds(["0"], ["1"]), "real numbers"),
        ([[1.0, 0.0]], "dimension 0 is empty or inverted: lo=1.0 must be < hi=0.0"),
        ([[0.0, 1.0], [2.0, 2.0]], "dimension 1 is empty or inverted"),
        ([[0.0, math.inf]], "must be finite"),
        ([[0.0, math.nan]], "must be finite"),
        (SimpleNamespace(lb=[0.0, 0.0], ub=[1.0, 1.0, 1.0]), "different lengths"),  # any lb/ub object
        (SimpleNamespace(lb=0.0, ub=1.0), "does not say the dimension"),
        ([], "has shape"),
        ([[0.0, 1.0], [0.0]], "not a table of numbers"),
        ("abc", "domain"),
    ],
)
def test_bad_bounds_are_refused_naming_the_problem(bounds, match):
    with pytest.raises(ValueError, match=match) as info:
        vhct.maximize(bowl, bounds, 10)
    assert BOUNDS_FORMS in str(info.value)


# -- 5. errors speak of the user's call --------------------------------------------------------------


def test_a_huge_value_is_reported_as_the_function_returned_it():
    f = Counted(bowl, fail_at=3, value=1e200)
    with pytest.raises(ValueError) as info:
        vhct.minimize(f, DOMAIN, 20, seed=0)
    message = str(info.value)
    assert message.startswith("vhct.minimize: f returned 1e+200 at x=") and "(evaluation 3)" in message
    assert "-1e+200" not in message and "tell" not in message and "reward" not in message
    assert info.value.result.nit == 2


def test_a_non_number_is_reported_with_its_evaluation():
    f = Counted(bowl, fail_at=2, value="0.5")
    with pytest.raises(
        ValueError, match=r"vhct.maximize: f returned '0.5' at .*\(evaluation 2\); f must return a real"
    ):
        vhct.maximize(f, DOMAIN, 20, seed=0)


# -- 6. memory: nothing sized by the budget is allocated up front -----------------------------------


@pytest.mark.parametrize("name", hierarchical_algorithms())
def test_a_huge_budget_allocates_only_what_its_evaluations_fill(name):
    tracemalloc.start()
    try:
        result = vhct.maximize(
            bowl, [[0, 1]] * 3, 10**9, algorithm=name, seed=0, callback=lambda r: r.nit == 20
        )
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert result.nit == 20 and result.points.shape == (20, 3)
    assert peak < 2**28, (
        f"{peak / 2**20:.0f} MiB traced for 20 evaluations"
    )  # was 22.4 GiB (points by budget)


def test_the_history_grows_past_its_first_block(monkeypatch):
    monkeypatch.setattr(vhct.api.history, "UPFRONT_BYTES", 8 * 3 * 4)  # 1024 rows up front (the floor)
    result = vhct.minimize(bowl, DOMAIN, 2500, algorithm="T-HOO", seed=0)
    opt = make_optimizer("T-HOO", DOMAIN, 2500, seed=0)
    assert drive(opt, lambda x: -bowl(x), 2500).tolist() == result.points.tolist()
    assert result.values.tolist() == [bowl(p) for p in result.points]


# -- 7. memoization of a deterministic function ------------------------------------------------------


@pytest.mark.parametrize("name", algorithms_of(TreeSearch))
def test_deterministic_never_evaluates_a_point_twice_and_keeps_the_trajectory(name):
    plain = vhct.minimize(branin, BRANIN, 200, algorithm=name, seed=0)
    f = Counted(branin)
    memo = vhct.minimize(f, BRANIN, 200, algorithm=name, seed=0, deterministic=True)
    assert memo.nit == 200 and memo.nfev == f.calls < 200
    assert len({p.tobytes() for p in f.seen}) == f.calls  # never the same point twice
    assert memo.distinct_points == plain.distinct_points == f.calls
    assert np.array_equal(memo.points, plain.points) and np.array_equal(memo.values, plain.values)
    assert (
        memo.x.tolist() == plain.x.tolist() and memo.recommendation.tolist() == plain.recommendation.tolist()
    )
    assert plain.nfev == 200


def test_errors_under_memoization_name_the_call_and_the_round():
    f = Counted(branin, fail_at=12, value=math.inf)
    with pytest.raises(ValueError, match=r"\(evaluation 12, round \d+\)") as info:
        vhct.minimize(f, BRANIN, 200, seed=0, deterministic=True)
    assert info.value.result.nfev == 12 and info.value.result.nit > 12


def test_deterministic_must_be_a_bool():
    with pytest.raises(ValueError, match="deterministic must be True or False"):
        vhct.minimize(branin, BRANIN, 20, deterministic="yes")


LIGHT = """
import sys
import vhct
r = vhct.minimize(lambda x: float((x ** 2).sum()), [[-1, 1], [-1, 1]], 50, seed=0, deterministic=True,
                  callback=lambda r: None, progress=25)
assert r.evaluations == r.nit == 50 and r["nfev"] == r.distinct_points
print(",".join(sorted({m.split(".")[0] for m in sys.modules})))
"""


def test_import_vhct_and_the_one_call_api_stay_numpy_only():
    out = subprocess.run([sys.executable, "-c", LIGHT], capture_output=True, text=True, check=True)
    loaded = set(out.stdout.strip().split(","))
    assert "numpy" in loaded
    assert not loaded & {"optuna", "pandas", "torch", "scipy", "matplotlib", "cmaes", "GPy", "tqdm"}, loaded


def test_a_size_beyond_the_machine_is_refused_before_anything_is_allocated():
    """`minimize(..., algorithm="BO", n_init=10**9)` raised a raw MemoryError (7.45 GiB drawn up front)."""
    calls = []
    with pytest.raises(ValueError, match=r"n_init must be at most [\d,]+ on this machine, got 1,000,000,000"):
        vhct.minimize(lambda x: calls.append(x) or 0.0, [[0.0, 1.0]], 10, algorithm="BO", n_init=10**9)
    assert calls == []
