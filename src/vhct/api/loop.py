"""The evaluation loop behind ``vhct.maximize`` and ``vhct.minimize``: ask (the point checked), call
``f``, check its value, tell, record, report progress, ask the callback; any failure attaches the
partial result."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from vhct.api.bounds import as_bounds
from vhct.api.guard import Guard, check_ask_timeout
from vhct.api.history import History, distinct_rows, values_at
from vhct.api.progress import Progress
from vhct.api.result import STATUS_DONE, STATUS_FAILED, STATUS_INTERRUPTED, STATUS_STOPPED, Result
from vhct.optimizers.base import REWARD_LIMIT, SeedLike, check_horizon, is_number
from vhct.optimizers.memo import PointMemo
from vhct.optimizers.registry import make_optimizer

#: rounds allowed per evaluation of ``max_nfev`` when ``deterministic=True`` and no ``budget`` is given:
#: the tree methods pull evaluated points again and again (rho = 0.9 spent about 2 rounds per distinct
#: evaluation on Hartmann-6; rho = 0.75 made 82 distinct evaluations in 10^5 rounds), so the rounds
#: need a bound of their own or a run that stops proposing new points would never end
ROUNDS_PER_EVALUATION = 100


def _limits(
    budget: int | None, max_nfev: int | None, deterministic: bool, caller: str
) -> tuple[int, int | None]:
    """The round limit of a run from ``budget`` (rounds) and ``max_nfev`` (calls of ``f``), and
    ``max_nfev`` checked.

    Like scipy's ``maxiter`` and ``maxfev``, each given limit binds and the first reached ends the run.
    Without ``deterministic`` every round is a call, so ``max_nfev`` also bounds the rounds; with it, a
    missing ``budget`` becomes ``ROUNDS_PER_EVALUATION * max_nfev`` rounds.
    """
    if budget is None and max_nfev is None:
        raise ValueError(f"{caller}: give budget (rounds) or max_nfev (calls of f), or both; got neither")
    if max_nfev is not None:
        max_nfev = check_horizon("max_nfev", max_nfev)
    if budget is not None:
        budget = check_horizon("budget", budget)
    if max_nfev is None:
        return budget, None
    if not deterministic:
        return (max_nfev if budget is None else min(budget, max_nfev)), max_nfev
    return (ROUNDS_PER_EVALUATION * max_nfev if budget is None else budget), max_nfev


def _where(nfev: int, t: int) -> str:
    return f"evaluation {nfev}" + (f", round {t}" if nfev != t else "")


def _check_value(value: object, x: np.ndarray, nfev: int, t: int, caller: str) -> float:
    """The user's value as a float, or an error naming the evaluation, the point and the value itself."""
    number = value.item() if isinstance(value, np.ndarray) and value.ndim == 0 else value
    problem = None
    if not is_number(number):
        problem = "f must return a real number"
    elif not math.isfinite(number := float(number)):
        problem = "f must return a finite number"
    elif abs(number) > REWARD_LIMIT:
        problem = (
            f"|f| must be <= {REWARD_LIMIT:.3g} for the optimizer's statistics to stay finite, and should "
            "lie in a known range such as [0, 1]: scale f (see docs/library.md)"
        )
    if problem is not None:
        raise ValueError(f"{caller}: f returned {value!r} at x={x.tolist()} ({_where(nfev, t)}); {problem}")
    return number


def _short_of_nfev(rounds: int, budget: int | None, nfev: int, max_nfev: int) -> str:
    """The message of a run whose rounds ran out before ``max_nfev`` calls of ``f``."""
    if budget is not None and rounds == budget:
        return f"used the budget of {budget} rounds after {nfev} of max_nfev={max_nfev} calls of f"
    return (
        f"stopped after {rounds} rounds ({ROUNDS_PER_EVALUATION} per call of max_nfev={max_nfev}) with "
        f"only {nfev} calls of f: the optimizer keeps returning to points it has evaluated; raise rho "
        "(e.g. 0.9), give a larger budget of rounds, or see docs/library.md#which-optimizer-for-which-problem"
    )


def _run(
    f: Callable[[np.ndarray], float],
    domain: object,
    budget: int | None,
    algorithm: str,
    seed: SeedLike,
    sign: float,
    callback: Callable[[Result], bool | None] | None,
    progress: bool | int,
    deterministic: bool,
    max_nfev: int | None,
    ask_timeout: float | None,
    params: dict[str, Any],
) -> Result:
    caller = "vhct.maximize" if sign > 0 else "vhct.minimize"
    if not callable(f):
        raise ValueError(f"f must be callable, got {f!r}")
    if callback is not None and not callable(callback):
        raise ValueError(f"callback must be callable or None, got {callback!r}")
    if not isinstance(deterministic, bool):
        raise ValueError(f"deterministic must be True or False, got {deterministic!r}")
    if not (isinstance(progress, bool) or is_number(progress)):
        raise ValueError(f"progress must be True, False or a number of evaluations, got {progress!r}")
    ask_timeout = check_ask_timeout(ask_timeout)
    box = as_bounds(domain)
    rounds, max_nfev = _limits(budget, max_nfev, deterministic, caller)
    start = time.perf_counter()
    opt = make_optimizer(algorithm, box, rounds, seed=seed, **params)
    history = History(rounds, box.shape[0])
    ticker = Progress(progress, rounds, caller)
    nfev, best, best_value = 0, -1, -math.inf

    def result(status: int, message: str, final: bool = True, strict: bool = False) -> Result:
        """The run so far; ``final=False`` (the callback's): read-only views, no recommendation.
        ``strict``: a recommendation outside the box raises (the end of a run), else it is None."""
        points, values = history.arrays()
        out = Result(
            x=None if best < 0 else points[best].copy(),
            fun=None if best < 0 else float(values[best]),
            nfev=nfev,
            nit=history.n,
            evaluations=history.n,
            success=status in (STATUS_DONE, STATUS_STOPPED),
            status=status,
            message=message,
        )
        if final:
            points, values = history.final_arrays()
            out["recommendation"] = recommendation = guard.recommend(strict)
            there = (None, 0) if recommendation is None else values_at(points, values, recommendation)
            out["recommendation_fun"], out["recommendation_count"] = there
            out["distinct_points"] = memo.calls if memo is not None else distinct_rows(points)
        out.update(points=points, values=values, x_iters=points, func_vals=values)
        out.update(wall_seconds=time.perf_counter() - start, algorithm=algorithm, deterministic=deterministic)
        return out

    def evaluate(x: np.ndarray) -> float:
        """One call of the user's ``f``, counted and checked (a memo may stand in front of it)."""
        nonlocal nfev
        nfev += 1
        value = f(x.copy())
        if not (type(value) is float and -REWARD_LIMIT <= value <= REWARD_LIMIT):  # fast path: NaN fails
            value = _check_value(value, x, nfev, t, caller)
        return value

    memo = PointMemo(evaluate) if deterministic else None
    call = evaluate if memo is None else memo
    status, message = STATUS_DONE, f"used the budget of {rounds} evaluations"
    t = 0
    guard = Guard(opt, box, algorithm, caller, ask_timeout)  # last before the try: it may start a thread
    try:
        for t in range(1, rounds + 1):
            x = guard.ask(t)
            value = call(x)
            reward = sign * value
            try:
                opt.tell(x, reward)
            except ValueError as exc:  # a value this optimizer cannot use: say so in terms of the call
                reason = str(exc).split("; nothing was recorded")[0]
                raise ValueError(
                    f"{caller}: f returned {value!r} at x={x.tolist()} ({_where(nfev, t)}); "
                    f"{algorithm} cannot use it ({reason}); scale f (see docs/library.md)"
                ) from None
            history.add(x, value)
            if reward > best_value:
                best, best_value = t - 1, reward
            if ticker.active:
                ticker.update(t, sign * best_value, start)
            if callback is not None:
                try:
                    stop = callback(result(STATUS_DONE, "running", final=False))
                except StopIteration:
                    stop = True
                if stop:  # skopt's rule: a truthy return stops
                    status, message = STATUS_STOPPED, f"stopped by the callback after {t} evaluations"
                    break
            if max_nfev is not None and nfev >= max_nfev:
                message = f"used max_nfev={max_nfev} calls of f in {t} rounds"
                break
        else:
            if max_nfev is not None and nfev < max_nfev:
                message = _short_of_nfev(rounds, budget, nfev, max_nfev)
        outcome = result(status, message, strict=True)
    except BaseException as exc:  # any failure, Ctrl-C included: attach what was evaluated so far
        kind = STATUS_INTERRUPTED if isinstance(exc, KeyboardInterrupt) else STATUS_FAILED
        done = history.n
        text = "interrupted (KeyboardInterrupt)" if kind == STATUS_INTERRUPTED else f"failed: {exc!r}"
        partial = result(kind, f"{text} after {done} completed evaluations")
        try:
            exc.result = partial  # type: ignore[attr-defined]
            exc.add_note(
                f"{caller}: {done} of {rounds} evaluations completed before this; the partial result "
                "(points, values, best so far) is attached as exc.result"
            )
        except (AttributeError, TypeError):  # an exception type that takes no attributes
            pass
        raise
    finally:
        ticker.close()
        guard.close()
    return outcome


def maximize(
    f: Callable[[np.ndarray], float],
    domain: object,
    budget: int | None = None,
    algorithm: str = "VHCT",
    seed: SeedLike = None,
    *,
    callback: Callable[[Result], bool | None] | None = None,
    progress: bool | int = False,
    deterministic: bool = False,
    max_nfev: int | None = None,
    ask_timeout: float | None = None,
    **params: Any,
) -> Result:
    """Maximize ``f`` over the box ``domain`` with ``budget`` rounds; returns a :class:`Result`.

    ``domain``: a list of ``(lo, hi)`` pairs, a (d, 2) array, or ``scipy.optimize.Bounds(lb, ub)``
    (the two-arrays form ``(lo_array, hi_array)`` is refused as ambiguous). ``algorithm`` is any
    registered name (``vhct.algorithm_names()``), ``params`` its parameters (as in the configs),
    ``seed`` an int or a numpy Generator (the same seed gives the same run). ``f`` takes a point (a
    float array of shape (d,)) and returns a finite real number.

    ``callback(intermediate)`` is called after every round with a :class:`Result` of the run so far
    (``intermediate.points[-1]``, ``intermediate.values[-1]`` are the latest evaluation; read-only
    views, no ``recommendation`` or ``distinct_points``, which cost a pass over the tree or the
    history); returning True or raising StopIteration ends the run, with ``success=True`` and
    ``status=1``. ``progress=True`` shows a tqdm bar if tqdm is
    installed, else a line on stderr every tenth of the budget; ``progress=N`` a line every N
    evaluations. ``deterministic=True`` caches ``f`` per exact point (the float array's bytes), so
    ``f`` is never called twice at the same point; ``nfev`` counts the calls, ``nit`` the rounds.

    ``max_nfev`` (scipy's name) is a budget of calls of ``f``: the run ends once ``f`` has been called
    that many times. With ``deterministic=True`` repeated points are answered by the cache and do not
    count, so it is a budget of distinct points; without it every round is a call. Give ``budget``,
    ``max_nfev`` or both (each binds, as scipy's ``maxiter`` and ``maxfev``). With ``deterministic=True``
    and no ``budget`` the rounds stop at ``ROUNDS_PER_EVALUATION * max_nfev``, and a run that ends
    short of ``max_nfev`` says so in ``message``.

    Every point the algorithm asks is checked to be a finite point of the box before ``f`` sees it,
    and its recommendation at the end too: else an ``AlgorithmError`` naming the algorithm.
    ``ask_timeout`` (seconds, None: no limit) bounds each ask: the asks then run in a daemon thread,
    and one that overruns raises ``AskTimeoutError`` and is abandoned, still running.

    Any exception during the run (from ``f``, an unusable value such as NaN, the algorithm, Ctrl-C)
    propagates with the partial result as ``exc.result`` (``success=False``, ``status`` 2, or 3 for
    Ctrl-C).
    """
    return _run(
        f,
        domain,
        budget,
        algorithm,
        seed,
        1.0,
        callback,
        progress,
        deterministic,
        max_nfev,
        ask_timeout,
        params,
    )


def minimize(
    f: Callable[[np.ndarray], float],
    domain: object,
    budget: int | None = None,
    algorithm: str = "VHCT",
    seed: SeedLike = None,
    *,
    callback: Callable[[Result], bool | None] | None = None,
    progress: bool | int = False,
    deterministic: bool = False,
    max_nfev: int | None = None,
    ask_timeout: float | None = None,
    **params: Any,
) -> Result:
    """Minimize ``f``: :func:`maximize` of ``-f``, with ``fun``, ``values`` and errors those of ``f``."""
    return _run(
        f,
        domain,
        budget,
        algorithm,
        seed,
        -1.0,
        callback,
        progress,
        deterministic,
        max_nfev,
        ask_timeout,
        params,
    )
