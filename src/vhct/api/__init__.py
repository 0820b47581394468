"""One call to optimize a function: ``vhct.maximize(f, domain, budget)`` and ``vhct.minimize(...)``.

Runs the ask/tell loop of any registered algorithm and returns a :class:`Result` that behaves like
``scipy.optimize.OptimizeResult`` (a dict with attribute access: ``x``, ``fun``, ``nfev``, ``nit``,
``success``, ``message``, ...) and also carries skopt's ``x_iters``/``func_vals``. ``minimize``
maximizes ``-f`` and reports values of ``f`` itself. Needs numpy alone: SciPy is never imported
(a ``scipy.optimize.Bounds`` is recognised by its ``lb``/``ub``).

Errors: any exception during the run (raised by ``f``, a value ``f`` returned that the optimizer
cannot use, a ``KeyboardInterrupt``, an :class:`AlgorithmError` of an algorithm that asked or
recommended a point outside the box or did not answer within ``ask_timeout``) propagates with the
partial result attached as ``exc.result`` (``success=False``), so no evaluation is lost.

One job per module: ``bounds`` reads the box, ``result`` is the record, ``history`` keeps the
evaluations, ``progress`` reports them, ``guard`` checks the algorithm's points and times its asks,
``loop`` runs the optimizer and is ``maximize``/``minimize``.
"""

from vhct.api.bounds import BOUNDS_FORMS, as_bounds
from vhct.api.loop import maximize, minimize
from vhct.api.result import STATUS_DONE, STATUS_FAILED, STATUS_INTERRUPTED, STATUS_STOPPED, Result
from vhct.optimizers.base import AlgorithmError, AskTimeoutError

__all__ = [
    "AlgorithmError",
    "AskTimeoutError",
    "BOUNDS_FORMS",
    "STATUS_DONE",
    "STATUS_FAILED",
    "STATUS_INTERRUPTED",
    "STATUS_STOPPED",
    "Result",
    "as_bounds",
    "maximize",
    "minimize",
]
