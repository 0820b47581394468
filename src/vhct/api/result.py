"""What one run of ``vhct.maximize``/``vhct.minimize`` found: :class:`Result`, a dict with attribute
access like ``scipy.optimize.OptimizeResult``, and the codes of its ``status``."""

from __future__ import annotations

from typing import Any

import numpy as np

#: ``Result.status``: the budget of rounds or of calls (``max_nfev``) was used up; ``message`` says which
STATUS_DONE = 0
#: ``Result.status``: the callback asked to stop (returned True or raised StopIteration)
STATUS_STOPPED = 1
#: ``Result.status``: ``f`` raised or returned an unusable value, the algorithm broke its contract
#: (``AlgorithmError``), or the run failed otherwise
STATUS_FAILED = 2
#: ``Result.status``: interrupted by ``KeyboardInterrupt`` (Ctrl-C)
STATUS_INTERRUPTED = 3


def _short(point: object) -> str:
    """A point in a few characters (numpy's summary beyond 8 coordinates), or ``None``."""
    if point is None:
        return "None"
    return np.array2string(np.asarray(point), precision=6, threshold=8)


class Result(dict):
    """What one run found: a dict with attribute access, like ``scipy.optimize.OptimizeResult``.

    ``r.x`` and ``r["x"]`` are the same; ``dict(r)``, ``r.keys()`` and ``"x" in r`` work. Keys:

    - ``x``, ``fun``: the evaluated point with the best value (highest for ``maximize``, lowest for
      ``minimize``) and that value of ``f`` (``None`` when no evaluation completed).
    - ``recommendation``: the algorithm's own ``recommend()`` at the end (for the tree methods a
      node's centre chosen from its statistics, robust to noise; may differ from ``x``). For a
      noisy ``f``, the answer to read: ``fun`` is then the best single noisy value, flattered by
      the noise. ``recommendation_fun`` and ``recommendation_count``: the mean of the values of
      ``f`` observed at exactly that point and how many (``None`` and 0 if it was never
      evaluated); an estimate of its value, optimistic when the point was chosen for its values.
    - ``deterministic``: the run's setting; with ``False`` (a noisy ``f``) the printout shows the
      recommendation first.
    - ``points`` (shape ``(nit, d)``) and ``values`` (shape ``(nit,)``): every round's point and its
      value of ``f``, in order; ``x_iters`` and ``func_vals`` (skopt's names) are the same arrays.
      ``r.values`` is that array (not ``dict.values()``, which it shadows).
    - ``nit``: optimizer rounds (rows of ``points``); ``evaluations``: the same number, its old name.
    - ``nfev``: calls to ``f``, at most ``max_nfev``; fewer than ``nit`` with ``deterministic=True``,
      which answers a repeated point from its cache.
    - ``distinct_points``: the number of distinct points among ``points`` (with ``deterministic=True``,
      equal to ``nfev``); ``nit - distinct_points`` calls a deterministic ``f`` could save.
    - ``success``, ``status``, ``message``: whether the run ended normally (status 0: the rounds or
      ``max_nfev`` used, the message saying which, and whether the rounds ran out short of
      ``max_nfev``; status 1: stopped by the callback) or not (status 2: ``f`` or the algorithm failed;
      3: interrupted).
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
        """A few lines, never every point: the answer, counts and the message, keys right-aligned
        (as scipy's ``OptimizeResult`` prints). For a noisy ``f`` (``deterministic=False``) the
        ``recommendation`` comes first, with the mean of ``f`` observed there: ``fun`` is the best
        single noisy value, which the noise flatters; for a deterministic ``f``, ``fun`` and ``x``."""
        rows = [("message", str(self.get("message"))), ("success", str(self.get("success")))]
        recommendation = self.get("recommendation")
        noisy = self.get("deterministic") is False and recommendation is not None
        if noisy:
            there = self.get("recommendation_fun")
            count = self.get("recommendation_count", 0)
            plural = "s" if count != 1 else ""
            seen = f"mean of f there {there:.6g}, {count} evaluation{plural}" if count else "never evaluated"
            rows.append(("recommendation", f"{_short(recommendation)} ({seen})"))
        fun = repr(self.get("fun"))
        if noisy and self.get("fun") is not None:
            fun += " (best single value, at x: if f is noisy, a flattering one)"
        rows += [("fun", fun), ("x", _short(self.get("x"))), ("nit", str(self.get("nit")))]
        rows.append(("nfev", str(self.get("nfev"))))
        if "algorithm" in self:
            rows.append(("algorithm", f"{self['algorithm']} ({self.get('wall_seconds', 0.0):.3g} s)"))
        width = max(len(key) for key, _ in rows)
        return "Result(\n  " + "\n  ".join(f"{key:>{width}}: {shown}" for key, shown in rows) + "\n)"

    def __reduce__(self):  # pickle as a plain dict subclass (attribute access survives)
        return (Result, (dict(self),))
