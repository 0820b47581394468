"""One call to optimize a function: ``vhct.maximize(f, domain, budget)`` and ``vhct.minimize(...)``.

Runs the ask/tell loop of any registered algorithm and returns a :class:`Result` that behaves like
``scipy.optimize.OptimizeResult`` (a dict with attribute access: ``x``, ``fun``, ``nfev``, ``nit``,
``success``, ``message``, ...) and also carries skopt's ``x_iters``/``func_vals``. ``minimize``
maximizes ``-f`` and reports values of ``f`` itself. Needs numpy alone: SciPy is never imported
(a ``scipy.optimize.Bounds`` is recognised by its ``lb``/``ub``).

Errors: any exception during the run (raised by ``f``, a value ``f`` returned that the optimizer
cannot use, a ``KeyboardInterrupt``) propagates with the partial result attached as
``exc.result`` (``success=False``), so no evaluation is lost.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from .optimizers.base import REWARD_LIMIT, SeedLike, as_domain, check_horizon, is_number
from .optimizers.memo import PointMemo
from .optimizers.registry import make_optimizer

#: ``Result.status``: the budget was used up
STATUS_DONE = 0
#: ``Result.status``: the callback asked to stop (returned True or raised StopIteration)
STATUS_STOPPED = 1
#: ``Result.status``: ``f`` raised, returned an unusable value, or the run failed otherwise
STATUS_FAILED = 2
#: ``Result.status``: interrupted by ``KeyboardInterrupt`` (Ctrl-C)
STATUS_INTERRUPTED = 3

#: bytes of history allocated up front at most (the whole budget's rows when they fit, as before); beyond
#: that the history doubles when full, so a huge budget allocates only what its evaluations fill
_UPFRONT_BYTES = 2**27

#: the accepted forms of ``domain``, quoted by every error about it
BOUNDS_FORMS = (
    "domain must be one of: a list of (lo, hi) pairs, one per dimension ([[0, 1], [-5, 5]]); "
    "a numpy array of shape (d, 2), one row per dimension; or scipy.optimize.Bounds(lb, ub) "
    "(lb and ub arrays of length d)"
)


class Result(dict):
    """What one run found: a dict with attribute access, like ``scipy.optimize.OptimizeResult``.

    ``r.x`` and ``r["x"]`` are the same; ``dict(r)``, ``r.keys()`` and ``"x" in r`` work. Keys:

    - ``x``, ``fun``: the evaluated point with the best value (highest for ``maximize``, lowest for
      ``minimize``) and that value of ``f`` (``None`` when no evaluation completed).
    - ``recommendation``: the algorithm's own ``recommend()`` at the end (for the tree methods a
      node's centre chosen from its statistics, robust to noise; may differ from ``x``).
    - ``points`` (shape ``(nit, d)``) and ``values`` (shape ``(nit,)``): every round's point and its
      value of ``f``, in order; ``x_iters`` and ``func_vals`` (skopt's names) are the same arrays.
      ``r.values`` is that array (not ``dict.values()``, which it shadows).
    - ``nit``: optimizer rounds (rows of ``points``); ``evaluations``: the same number, its old name.
    - ``nfev``: calls to ``f``; fewer than ``nit`` with ``deterministic=True``, which answers a
      repeated point from its cache.
    - ``distinct_points``: the number of distinct points among ``points`` (with ``deterministic=True``,
      equal to ``nfev``); ``nit - distinct_points`` calls a deterministic ``f`` could save.
    - ``success``, ``status``, ``message``: whether the run ended normally (budget used, status 0, or
      stopped by the callback, status 1) or not (status 2: ``f`` failed; 3: interrupted).
    - ``wall_seconds`` (the whole run, evaluations included) and ``algorithm``.
    """

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError as exc:
            raise AttributeError(name) from exc

    __setattr__ = dict.__setitem__  # type: ignore[assignment]
    __delattr__ = dict.__delitem__  # type: ignore[assignment]

    @property
    def values(self) -> np.ndarray:  # type: ignore[override]
        """The history of values, as the field was before ``Result`` became a dict.

        It shadows ``dict.values()``: use ``r.items()`` or ``dict(r).values()`` for the dict's values.
        """
        try:
            return self["values"]
        except KeyError as exc:
            raise AttributeError("values") from exc

    def __dir__(self) -> list[str]:
        return list(self.keys())

    def __repr__(self) -> str:
        """A few lines, never every point: the best value and point, counts and the message."""
        x = self.get("x")
        shown = "None" if x is None else np.array2string(np.asarray(x), precision=6, threshold=8)
        lines = [
            f"message: {self.get('message')}",
            f"success: {self.get('success')}",
            f"    fun: {self.get('fun')!r}",
            f"      x: {shown}",
            f"    nit: {self.get('nit')}",
            f"   nfev: {self.get('nfev')}",
        ]
        if "algorithm" in self:
            lines.append(f"algorithm: {self['algorithm']} ({self.get('wall_seconds', 0.0):.3g} s)")
        return "Result(\n  " + "\n  ".join(lines) + "\n)"

    def __reduce__(self):  # pickle as a plain dict subclass (attribute access survives)
        return (Result, (dict(self),))


def as_bounds(bounds: object) -> np.ndarray:
    """The box as a float array of shape (d, 2), refusing anything ambiguous or non-numeric.

    Accepted: a sequence of ``(lo, hi)`` pairs (a list, or a tuple of more or fewer than two pairs),
    a numpy array of shape (d, 2), or anything with ``lb``/``ub`` (``scipy.optimize.Bounds``; SciPy
    is not imported). Refused: strings or bools as bounds, ``lo >= hi``, non-finite bounds, and the
    ``(lo_array, hi_array)`` form of two arrays (a 2-tuple of sequences, two numpy arrays, or a
    (2, d) table with d != 2), which could be read as two intervals.
    """
    if hasattr(bounds, "lb") and hasattr(bounds, "ub"):
        lb, ub = _numeric_array(bounds.lb, "lb"), _numeric_array(bounds.ub, "ub")
        if lb.ndim == 0 and ub.ndim == 0:
            raise ValueError(
                f"scipy.optimize.Bounds with scalar lb={lb.item()!r} and ub={ub.item()!r} does not say "
                f"the dimension: give lb and ub as arrays of length d. {BOUNDS_FORMS}"
            )
        try:
            lb, ub = np.broadcast_arrays(lb, ub)
        except ValueError:
            raise ValueError(
                f"scipy.optimize.Bounds lb {lb.tolist()} and ub {ub.tolist()} have different lengths. "
                f"{BOUNDS_FORMS}"
            ) from None
        if lb.ndim != 1:
            raise ValueError(
                f"scipy.optimize.Bounds lb and ub must be 1-D, got shape {lb.shape}. {BOUNDS_FORMS}"
            )
        box = np.stack([lb, ub], axis=1)
    else:
        box = _numeric_array(bounds, "domain")
        if box.ndim != 2 or box.shape[0] == 0:
            raise ValueError(f"domain {_show(bounds)} has shape {box.shape}. {BOUNDS_FORMS}")
        two_arrays = (
            isinstance(bounds, tuple | list)
            and len(bounds) == 2
            and (isinstance(bounds, tuple) or any(isinstance(item, np.ndarray) for item in bounds))
        )
        if box.shape[1] != 2 or two_arrays:
            raise ValueError(
                f"domain {_show(bounds)} looks like the (lo_array, hi_array) form of two arrays, which "
                f"could also be read as {box.shape[0]} (lo, hi) pairs: write "
                f"scipy.optimize.Bounds(lb, ub) for that form, or a list of pairs. {BOUNDS_FORMS}"
            )
    if not np.all(np.isfinite(box)):
        raise ValueError(f"domain bounds must be finite, got {box.tolist()}. {BOUNDS_FORMS}")
    empty = box[:, 0] >= box[:, 1]
    if np.any(empty):
        bad = int(np.argmax(empty))
        raise ValueError(
            f"domain dimension {bad} is empty or inverted: lo={float(box[bad, 0])!r} must be < "
            f"hi={float(box[bad, 1])!r}. {BOUNDS_FORMS}"
        )
    return as_domain(box)


def _show(bounds: object) -> str:
    text = repr(bounds)
    return text if len(text) <= 200 else text[:197] + "..."


def _numeric_array(value: object, name: str) -> np.ndarray:
    """``value`` as a float array if every entry is a real number (never a string or a bool)."""
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "iuf":
            raise ValueError(
                f"{name} must hold real numbers, got an array of dtype {value.dtype}. {BOUNDS_FORMS}"
            )
        return value.astype(float)
    try:
        raw = np.asarray(value, dtype=object)
    except ValueError:  # ragged nesting
        raise ValueError(f"{name} {_show(value)} is not a table of numbers. {BOUNDS_FORMS}") from None
    nested = (list, tuple, np.ndarray)  # rows of unequal length leave sequences as entries
    if any(isinstance(item, nested) and not _numeric_0d(item) for item in raw.flat):
        raise ValueError(
            f"{name} {_show(value)} is not a table of numbers (rows of unequal length?). {BOUNDS_FORMS}"
        )
    bad = [item for item in raw.flat if not (is_number(item) or _numeric_0d(item))]
    if bad:
        raise ValueError(
            f"{name} must hold real numbers (not strings or bools), got {bad[0]!r} in {_show(value)}. "
            f"{BOUNDS_FORMS}"
        )
    try:
        return raw.astype(float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} {_show(value)} is not a table of numbers. {BOUNDS_FORMS}") from None


def _numeric_0d(item: object) -> bool:
    return isinstance(item, np.ndarray) and item.ndim == 0 and item.dtype.kind in "iuf"


class _History:
    """Points and values in evaluation order; grows by doubling, never allocating the budget up front."""

    def __init__(self, budget: int, dim: int):
        rows = min(budget, max(1024, _UPFRONT_BYTES // (8 * (dim + 1))))
        self.budget = budget
        self.points = np.empty((rows, dim))
        self.values = np.empty(rows)
        self.n = 0

    def add(self, point: np.ndarray, value: float) -> None:
        if self.n == len(self.values):
            rows = min(self.budget, 2 * self.n)
            self.points = np.concatenate([self.points, np.empty((rows - self.n, self.points.shape[1]))])
            self.values = np.concatenate([self.values, np.empty(rows - self.n)])
        self.points[self.n] = point
        self.values[self.n] = value
        self.n += 1

    def final_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """The rows so far, writable, for the caller to keep (views: no copy of a long history)."""
        return self.points[: self.n], self.values[: self.n]

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """Read-only views of the rows so far (rows are never written again, so views stay valid)."""
        points, values = self.points[: self.n], self.values[: self.n]
        points.flags.writeable = values.flags.writeable = False
        return points, values


def _distinct_rows(points: np.ndarray) -> int:
    """Distinct rows by their exact bytes (the cache's key), with one sorted copy, not a set of rows."""
    if len(points) == 0:
        return 0
    rows = np.ascontiguousarray(points).view(np.dtype((np.void, points.dtype.itemsize * points.shape[1])))
    return len(np.unique(rows.ravel()))


class _Progress:
    """Opt-in progress: a tqdm bar when tqdm is installed and ``progress is True``, else log lines."""

    def __init__(self, progress: bool | int, budget: int, label: str):
        self.bar = None
        self.every = 0
        self.label = label
        self.budget = budget
        #: whether :meth:`update` does anything (checked by the loop, so a silent run pays nothing)
        self.active = bool(progress)
        if progress is True:
            try:
                from tqdm.auto import tqdm  # optional: no dependency, only used when installed
            except ImportError:
                self.every = max(1, budget // 10)
            else:
                self.bar = tqdm(total=budget, desc=label, unit="eval")
        elif progress:
            self.every = check_horizon("progress (evaluations between log lines)", progress)

    def update(self, n: int, best: float, start: float) -> None:
        if self.bar is not None:
            self.bar.update(1)
            self.bar.set_postfix(best=f"{best:.6g}", refresh=False)
        elif self.every and (n % self.every == 0 or n == self.budget):
            print(
                f"{self.label}: {n}/{self.budget} evaluations, best {best:.6g}, "
                f"{time.perf_counter() - start:.1f} s",
                file=sys.stderr,
                flush=True,
            )

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


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


def _run(
    f: Callable[[np.ndarray], float],
    domain: object,
    budget: int,
    algorithm: str,
    seed: SeedLike,
    sign: float,
    callback: Callable[[Result], bool | None] | None,
    progress: bool | int,
    deterministic: bool,
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
    box = as_bounds(domain)
    budget = check_horizon("budget", budget)
    start = time.perf_counter()
    opt = make_optimizer(algorithm, box, budget, seed=seed, **params)
    history = _History(budget, box.shape[0])
    ticker = _Progress(progress, budget, caller)
    nfev, best, best_value = 0, -1, -math.inf

    def result(status: int, message: str, final: bool = True) -> Result:
        """The run so far; ``final=False`` (the callback's): read-only views, no recommendation."""
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
            try:
                out["recommendation"] = opt.recommend()
            except Exception:  # a broken optimizer state must not hide the evaluations
                out["recommendation"] = None
            out["distinct_points"] = memo.calls if memo is not None else _distinct_rows(points)
        out.update(points=points, values=values, x_iters=points, func_vals=values)
        out.update(wall_seconds=time.perf_counter() - start, algorithm=algorithm)
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
    status, message = STATUS_DONE, f"used the budget of {budget} evaluations"
    t = 0
    try:
        for t in range(1, budget + 1):
            x = opt.ask()
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
    except BaseException as exc:  # any failure, Ctrl-C included: attach what was evaluated so far
        kind = STATUS_INTERRUPTED if isinstance(exc, KeyboardInterrupt) else STATUS_FAILED
        done = history.n
        text = "interrupted (KeyboardInterrupt)" if kind == STATUS_INTERRUPTED else f"failed: {exc!r}"
        partial = result(kind, f"{text} after {done} completed evaluations")
        try:
            exc.result = partial  # type: ignore[attr-defined]
            exc.add_note(
                f"{caller}: {done} of {budget} evaluations completed before this; the partial result "
                "(points, values, best so far) is attached as exc.result"
            )
        except (AttributeError, TypeError):  # an exception type that takes no attributes
            pass
        raise
    finally:
        ticker.close()
    return result(status, message)


def maximize(
    f: Callable[[np.ndarray], float],
    domain: object,
    budget: int,
    algorithm: str = "VHCT",
    seed: SeedLike = None,
    *,
    callback: Callable[[Result], bool | None] | None = None,
    progress: bool | int = False,
    deterministic: bool = False,
    **params: Any,
) -> Result:
    """Maximize ``f`` over the box ``domain`` with ``budget`` evaluations; returns a :class:`Result`.

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

    Any exception during the run (from ``f``, an unusable value such as NaN, Ctrl-C) propagates with
    the partial result as ``exc.result`` (``success=False``, ``status`` 2, or 3 for Ctrl-C).
    """
    return _run(f, domain, budget, algorithm, seed, 1.0, callback, progress, deterministic, params)


def minimize(
    f: Callable[[np.ndarray], float],
    domain: object,
    budget: int,
    algorithm: str = "VHCT",
    seed: SeedLike = None,
    *,
    callback: Callable[[Result], bool | None] | None = None,
    progress: bool | int = False,
    deterministic: bool = False,
    **params: Any,
) -> Result:
    """Minimize ``f``: :func:`maximize` of ``-f``, with ``fun``, ``values`` and errors those of ``f``."""
    return _run(f, domain, budget, algorithm, seed, -1.0, callback, progress, deterministic, params)
