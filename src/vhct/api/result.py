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
