"""The algorithm's side of a run, checked where the user would meet it: every point an algorithm
asks is a finite point of the box before ``f`` sees it, every recommendation before it is returned,
and, with ``ask_timeout``, every ask answers in time. One place for built-ins and plugins alike.

The box is compared exactly (``lo <= x <= hi``, the bounds as ``as_bounds`` read them): the check is
of the very array ``f`` would receive, so there is no tolerance to choose. The built-in algorithms
never leave the box (a cell's centre ``0.5 * (lo + hi)`` lies within its cell in floating point; BO
clips to the bounds, Optuna's samplers keep to them; tests/unit/test_guard.py runs them on a box of
awkward bounds).

A time limit on a Python call that may never return: the asks run in one daemon thread of the run,
which the loop waits for at most ``ask_timeout`` seconds. Python cannot stop a thread, so an ask that
overruns is abandoned, still running: its thread holds the optimizer until the ask returns or the
process exits (a daemon thread does not keep the process alive), and nothing asks that optimizer
again (the partial result has no recommendation).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from vhct.optimizers.base import AlgorithmError, AskTimeoutError, Optimizer, check_positive
from vhct.optimizers.registry import algorithm_origin

#: coordinates of a point shown in full in a message; a longer point is summarised by numpy
SHOWN_COORDINATES = 10


def _shown(values: np.ndarray) -> str:
    """Exact values (``repr`` of each float) for a short array, numpy's summary for a long one."""
    if values.size <= SHOWN_COORDINATES:
        return str(values.tolist())
    return np.array2string(values, threshold=SHOWN_COORDINATES, separator=", ")


class TimedAsk:
    """``ask`` called in one daemon thread, each call waited for at most ``timeout`` seconds."""

    def __init__(self, ask: Callable[[], Any], timeout: float, name: str):
        self._ask = ask
        self.timeout = timeout
        #: an ask overran or its wait was interrupted: the thread may still be inside the optimizer
        self.abandoned = False
        self._requests: queue.SimpleQueue[bool] = queue.SimpleQueue()
        self._replies: queue.SimpleQueue[tuple[bool, Any]] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._serve, name=name, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while self._requests.get():
            try:
                reply = (True, self._ask())
            except BaseException as exc:  # handed to the waiting thread, which raises it
                reply = (False, exc)
            self._replies.put(reply)

    def __call__(self) -> Any:
        """The ask's answer (its exception raised here); :class:`queue.Empty` when it overran."""
        self._requests.put(True)
        try:
            ok, answer = self._replies.get(timeout=self.timeout)
        except BaseException:  # overran (queue.Empty) or interrupted (Ctrl-C): the ask runs on
            self.abandoned = True
            raise
        if not ok:
            raise answer
        return answer

    def close(self) -> None:
        """Let the thread end once its current ask (if any) returns."""
        self._requests.put(False)


class Guard:
    """The checked asks and recommendation of one run's optimizer.

    Args:
        opt: the run's optimizer.
        box: the run's box, shape (d, 2), as ``as_bounds`` read it.
        algorithm: its registered name (the messages name it and where its code comes from).
        caller: ``"vhct.maximize"`` or ``"vhct.minimize"``, for messages.
        ask_timeout: seconds an ask may take, or None (no limit; asks run in the caller's thread).
    """

    def __init__(
        self, opt: Optimizer, box: np.ndarray, algorithm: str, caller: str, ask_timeout: float | None
    ):
        self.opt = opt
        self.box = box
        self.lo, self.hi = box[:, 0].copy(), box[:, 1].copy()
        self.shape = (box.shape[0],)
        self.who = f"{caller}: algorithm {algorithm!r} ({algorithm_origin(algorithm)})"
        self.timed: TimedAsk | None = None
        if ask_timeout is not None:
            self.timed = TimedAsk(opt.ask, ask_timeout, f"vhct ask of {algorithm}")

    def ask(self, t: int) -> np.ndarray:
        """The optimizer's next point, checked; round ``t`` is named in errors."""
        if self.timed is None:
            point = self.opt.ask()
        else:
            try:
                point = self.timed()
            except queue.Empty:
                raise AskTimeoutError(
                    f"{self.who}: ask() did not return within ask_timeout={self.timed.timeout:g} s "
                    f"(round {t}); it is left running in a daemon thread, which Python cannot stop "
                    "(docs/library.md)"
                ) from None
        if (
            type(point) is np.ndarray
            and point.shape == self.shape
            and point.dtype == np.float64
            and np.count_nonzero((self.lo <= point) & (point <= self.hi)) == self.shape[0]  # NaN fails
        ):  # the fast path of every round (count_nonzero: a third of the cost of two .all())
            return point
        return self._checked(point, "ask()", f"round {t}", "; f was not called there")

    def recommend(self, strict: bool) -> np.ndarray | None:
        """The optimizer's recommendation, checked: an :class:`AlgorithmError` if ``strict``, else None
        for a bad one, for one that raises, or when an ask was abandoned (the optimizer may be busy)."""
        if self.timed is not None and self.timed.abandoned:
            return None
        if strict:
            return self._checked(self.opt.recommend(), "recommend()", "at the end of the run")
        try:
            return self._checked(self.opt.recommend(), "recommend()", "partial result")
        except Exception:  # a broken optimizer state must not hide the evaluations
            return None

    def close(self) -> None:
        if self.timed is not None:
            self.timed.close()

    def _checked(self, value: object, call: str, where: str, after: str = "") -> np.ndarray:
        """``value`` as a float array of shape (d,) inside the box, else an AlgorithmError saying
        ``{call} returned ...`` with ``where`` in brackets and ``after`` at the end."""
        try:
            point = np.array(value, dtype=float)
        except (TypeError, ValueError):
            point = None
        if point is None or point.shape != self.shape:
            raise AlgorithmError(
                f"{self.who}: {call} returned {value!r}, not a point of {self.shape[0]} numbers "
                f"({where}){after}"
            )
        shown = ("x=" if call == "ask()" else "") + _shown(point)
        if not np.all(np.isfinite(point)):
            raise AlgorithmError(f"{self.who}: {call} returned {shown}, which is not finite ({where}){after}")
        outside = (point < self.lo) | (point > self.hi)
        if np.any(outside):
            k = int(np.argmax(outside))
            lo, hi, coordinate = float(self.lo[k]), float(self.hi[k]), float(point[k])
            side = f"{coordinate!r} < lo={lo!r}" if coordinate < lo else f"{coordinate!r} > hi={hi!r}"
            bounds = _shown(self.box) if self.box.size <= SHOWN_COORDINATES else f"of {self.shape[0]} dims"
            raise AlgorithmError(
                f"{self.who}: {call} returned {shown}, outside the bounds {bounds} ({where}; dimension {k}: "
                f"{side}){after}"
            )
        return point


def check_ask_timeout(value: float | None) -> float | None:
    """``ask_timeout``: None (no limit) or a finite number of seconds > 0."""
    return None if value is None else check_positive("ask_timeout", value)
