"""The library guards its user's box (issue 48, item 4): every point an algorithm asks is a finite
point of the box before ``f`` sees it, every recommendation before it is returned, and an ask may be
given a time limit (``ask_timeout``). A violation is an ``AlgorithmError`` naming the algorithm and
where its code comes from, with the partial result attached.

The misbehaving algorithms are registered in this process from this module (``register`` with
``"<this module>:Class"``); tests/unit/test_plugins.py checks the message of an installed plugin,
which names its entry point.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import numpy as np
import pytest
from support import QUICK_PARAMS, drive, hierarchical_algorithms, quick_optimizer

import vhct
from vhct.api import STATUS_FAILED, AlgorithmError, AskTimeoutError
from vhct.optimizers.base import Optimizer
from vhct.optimizers.registry import Algorithm, register, unregister

BOX = [[0.0, 1.0], [0.0, 1.0]]
#: seconds the hanging ask is given: the test waits this long once, then releases the thread
HANG_TIMEOUT = 0.2


class Scripted(Optimizer):
    """Asks the box's centre, except the points of :attr:`script` (round -> point) in those rounds;
    recommends :attr:`advice`, else the centre."""

    name = "Scripted"
    script: dict[int, object] = {}
    advice: object = None

    def _ask(self):
        return self.script.get(self.t + 1, self.domain.mean(axis=1))

    def _tell(self, reward: float) -> None:
        pass

    def recommend(self):
        return self.domain.mean(axis=1) if self.advice is None else self.advice


class Far(Scripted):
    """The probe: asks x = [6, 6] on [0, 1]^2 in round 3."""

    script = {3: np.array([6.0, 6.0])}


class NaNAsk(Scripted):
    script = {1: np.array([np.nan, np.nan])}


class NaNAdvice(Scripted):
    advice = np.array([np.nan, np.nan])


class WrongShape(Scripted):
    script = {1: np.array([0.5, 0.5, 0.5])}


class Corners(Scripted):
    """Asks the box's two corners: the bounds themselves are inside."""

    script = {1: np.array([0.0, 0.0]), 2: np.array([1.0, 1.0])}


RELEASE = threading.Event()


class Hang(Scripted):
    """Its third ask waits until the test sets :data:`RELEASE` (a hung plugin)."""

    def _ask(self):
        if self.t + 1 == 3:
            RELEASE.wait()
        return super()._ask()


class Raises(Scripted):
    def _ask(self):
        raise ZeroDivisionError("the plugin's own bug")


def bowl(x: np.ndarray) -> float:
    return float(np.sum((x - 0.2) ** 2))


ALGORITHMS = (Far, NaNAsk, NaNAdvice, WrongShape, Corners, Hang, Raises)


@pytest.fixture(autouse=True, scope="module")
def registered() -> Iterator[None]:
    for cls in ALGORITHMS:
        register(Algorithm(cls.__name__, f"{__name__}:{cls.__name__}"))
    yield
    for cls in ALGORITHMS:
        unregister(cls.__name__)


class Recorder:
    """``f``: records every point it is called at."""

    def __init__(self):
        self.seen: list[np.ndarray] = []

    def __call__(self, x: np.ndarray) -> float:
        self.seen.append(x.copy())
        return float(np.sum(x))


def test_an_ask_outside_the_box_is_refused_before_f_sees_it():
    """Probe: a plugin asking x = [6, 6] on [0, 1]^2 made ``vhct.minimize`` call f there and return
    ``x=[6., 6.]``, ``success=True``::

        vhct.minimize(f, [[0, 1], [0, 1]], 10, algorithm="Far")   # Far asks [6, 6] in round 3
    """
    f = Recorder()
    with pytest.raises(AlgorithmError) as caught:
        vhct.minimize(f, BOX, 10, algorithm="Far")
    message = str(caught.value)
    assert message.startswith(f"vhct.minimize: algorithm 'Far' ({__name__}:Far): ask() returned x=[6.0, 6.0]")
    assert "outside the bounds [[0.0, 1.0], [0.0, 1.0]] (round 3; dimension 0: 6.0 > hi=1.0)" in message
    assert len(f.seen) == 2 and all(((p >= 0) & (p <= 1)).all() for p in f.seen)  # never [6, 6]
    partial = caught.value.result
    assert partial.success is False and partial.status == STATUS_FAILED and partial.nit == 2
    assert partial.points.tolist() == [p.tolist() for p in f.seen]


def test_a_nan_ask_names_the_algorithm_not_f():
    """Probe: a plugin asking NaN got "f returned nan at x=[nan, nan]", blaming the user's f; now the
    error names the algorithm, and f is not called::

        vhct.minimize(f, [[0, 1], [0, 1]], 10, algorithm="NaNAsk")   # NaNAsk asks [nan, nan]
    """
    f = Recorder()
    with pytest.raises(AlgorithmError, match=r"algorithm 'NaNAsk' .*: ask\(\) returned x=\[nan, nan\], "):
        vhct.minimize(f, BOX, 10, algorithm="NaNAsk")
    assert f.seen == []


def test_a_nan_recommendation_is_refused_with_every_evaluation_kept():
    """Probe: a plugin recommending NaN returned ``recommendation=[nan nan]``, ``success=True``; now
    an error, with the evaluations attached::

        vhct.minimize(f, [[0, 1], [0, 1]], 10, algorithm="NaNAdvice")   # NaNAdvice recommends NaN
    """
    refused = r"'NaNAdvice' .*: recommend\(\) returned \[nan, nan\], which is not finite \(at the end"
    with pytest.raises(AlgorithmError, match=refused) as caught:
        vhct.minimize(Recorder(), BOX, 10, algorithm="NaNAdvice")
    partial = caught.value.result
    assert partial.success is False and partial.nit == 10 and partial.recommendation is None
    assert partial.x.tolist() == [0.5, 0.5] and partial.fun == 1.0  # the evaluations are kept


def test_a_point_of_the_wrong_length_is_refused():
    with pytest.raises(
        AlgorithmError, match=r"ask\(\) returned array\(\[0.5, 0.5, 0.5\]\), not a point of 2"
    ):
        vhct.minimize(Recorder(), BOX, 5, algorithm="WrongShape")


def test_the_bounds_themselves_are_inside():
    """The check is exact and includes the bounds: the corners are asked and evaluated."""
    f = Recorder()
    result = vhct.minimize(f, BOX, 3, algorithm="Corners")
    assert [p.tolist() for p in f.seen] == [[0.0, 0.0], [1.0, 1.0], [0.5, 0.5]] and result.success


def test_a_hanging_ask_ends_at_the_time_limit():
    """Probe: a plugin whose ``_ask`` never returns hung ``minimize`` with no time limit::

        vhct.minimize(f, [[0, 1], [0, 1]], 10, algorithm="Hang", ask_timeout=0.2)   # round 3 hangs

    The hung thread is released afterwards (no wall-clock assertion: the run ends, and says why).
    """
    RELEASE.clear()
    try:
        with pytest.raises(AskTimeoutError) as caught:
            vhct.minimize(Recorder(), BOX, 10, algorithm="Hang", ask_timeout=HANG_TIMEOUT)
    finally:
        RELEASE.set()
    assert isinstance(caught.value, TimeoutError) and isinstance(caught.value, AlgorithmError)
    assert str(caught.value).startswith(
        f"vhct.minimize: algorithm 'Hang' ({__name__}:Hang): ask() did not return within "
        f"ask_timeout={HANG_TIMEOUT:g} s (round 3)"
    )
    partial = caught.value.result
    assert partial.nit == 2 and partial.recommendation is None  # the optimizer may still be busy
    hung = [t for t in threading.enumerate() if t.name == "vhct ask of Hang"]
    assert all(t.daemon for t in hung)
    for thread in hung:
        thread.join()


def test_an_ask_that_raises_under_a_time_limit_raises_as_without_one():
    for timeout in (None, 5.0):
        with pytest.raises(ZeroDivisionError, match="the plugin's own bug"):
            vhct.minimize(Recorder(), BOX, 5, algorithm="Raises", ask_timeout=timeout)


@pytest.mark.parametrize("bad", [0, -1.0, float("inf"), float("nan"), "1", True])
def test_a_bad_time_limit_is_named(bad):
    with pytest.raises(ValueError, match="ask_timeout"):
        vhct.minimize(Recorder(), BOX, 5, ask_timeout=bad)


@pytest.mark.parametrize("name", [*hierarchical_algorithms(), "Random", "TPE", "CMA-ES"])
def test_the_built_in_algorithms_run_unchanged(name):
    """Regression: the guard passes every point of the built-ins, on a box whose bounds are not
    binary fractions (where a mapping's round-off would show), with and without a time limit."""
    box = [[-0.1, 0.3], [1e-3, 2.7]]
    rounds = 200 if name in hierarchical_algorithms() else 60
    opt = quick_optimizer(name, box, rounds, seed=5)
    expected = drive(opt, lambda x: -bowl(x), rounds)
    for timeout in (None, 60.0):
        params = QUICK_PARAMS.get(name, {})
        result = vhct.minimize(bowl, box, rounds, name, 5, ask_timeout=timeout, **params)
        assert result.points.tolist() == expected.tolist() and result.success
        assert result.recommendation.tolist() == opt.recommend().tolist()
