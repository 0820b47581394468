"""VHCT (or any of the project's optimizers) as an Optuna sampler: :class:`VHCTSampler`.

    import optuna
    from vhct.integrations.optuna import VHCTSampler

    study = optuna.create_study(sampler=VHCTSampler("VHCT", seed=0, rho=0.75))
    study.optimize(objective, n_trials=100)

How the study's parameters become the optimizer's box. The optimizer works on the unit cube,
one dimension per numeric parameter in sorted name order: a float parameter on a linear scale
maps ``u -> low + u (high - low)``, on a log scale ``u -> exp(log low + u (log high - log low))``
(the cube is uniform in log space); a ``step`` rounds to the nearest grid point. An integer
parameter maps its cube side to ``[low - step/2, high + step/2]`` (log scale: in log space) and is
rounded to the nearest allowed integer, so every integer gets an equal share of the side; the
optimizer is told the cube point it asked, the objective sees the rounded value.

The search space. Pass ``search_space`` (a dict of Optuna distributions) to have every trial,
the first included, proposed by the optimizer. Without it the space is the intersection of the
completed trials' spaces (Optuna's ``IntersectionSearchSpace``), frozen at the first trial that
has one: until then (the first trial) parameters come from the independent sampler. The box is
fixed: a trial whose objective suggests one of its parameters with another distribution (other
bounds, step, or, checked by Optuna itself at the ``suggest_*`` call, kind or log scale) stops
the study with a ``ValueError`` naming the parameter and both distributions, whatever ``catch``.
A parameter of ``search_space`` that the objective never suggests is refused (``ValueError``
naming it, whatever ``catch``) once ``UNSUGGESTED_LIMIT`` trials have finished without any trial
suggesting it: a trial that does not suggest every parameter of the box is not told (below), so
such a parameter would pin every trial at the optimizer's current point. Not at the first trial,
because a conditional parameter is legitimately missing from the trials of the other branches.

What the optimizer is told. Only a trial that evaluated the optimizer's point: one that
suggested every parameter of the space with the proposed values. A trial of a conditional
search space that skipped one of them (another branch), or that took an enqueued value, is not
told (a warning says so, with how to restructure: suggest every parameter unconditionally, or
one study per branch); its round stays open, and it is no failure either (it did not evaluate
the point: nothing is learnt about it). So in a conditional space
the optimizer learns its parameters only from the trials that suggested them.

Categorical parameters are not the optimizer's (a hierarchical partition needs an ordered
box): they are drawn by the independent sampler (default ``RandomSampler``, seeded from
``seed``), with one warning per parameter.

Several trials at once. The optimizers are sequential: a round's point is asked, evaluated and
told before the next is asked. A trial that starts while the optimizer's current point is still
being evaluated by another running trial is drawn by the independent sampler and never told to
the optimizer (a warning says so): with ``n_jobs > 1`` only one trial at a time is VHCT's (and
Optuna reseeds the independent sampler in each thread, so those other trials are not
reproducible; the optimizer's are).

Failed and pruned trials. A trial that fails after suggesting the optimizer's point (the
objective raised, or returned NaN, or a value the optimizer refuses: infinite, or beyond
``REWARD_LIMIT`` such as 1e200, which Optuna stores as COMPLETE) leaves its round open once: the
next trial gets the same point again, in case the failure was passing. When the same point has
failed ``FAILURES_BEFORE_PENALTY`` times, the optimizer is told its penalty: the worst value of
the study's finished trials at that moment (told to the optimizer or not, e.g. the independent
sampler's first trial). An objective that fails in a region is taken as a bad value there, no
better than the worst point seen, so the tree's bounds steer the search elsewhere instead of
retrying the point for ever (which would take every later trial); the worst value
and not some lower constant, so that the rewards keep their scale (VHCT's variance estimates use
them). The penalty is recorded in the system attributes of the trial being proposed when it is
told (``vhct:penalty``, ``[round, reward]`` pairs), so a resumed study replays it exactly. If
the study has no value yet, there is nothing to penalize with: the next trials are drawn by the
independent sampler (not the optimizer's rounds) until one has a value. One warning (per
sampler) names the trials of the first penalized point; later ones are penalized the same way
in silence (their trials are the FAIL ones carrying ``vhct:round``). Optuna's own samplers
simply skip failed trials, which is enough for samplers that draw at random but would stall a
deterministic tree. A pruned trial with an intermediate value is told that value; without one
it is no failure of the objective: its round stays open. A refused value gets one warning naming
the trial and the value: the study goes on, resumed ones too.

One study per sampler. The optimizer's state is one study's rounds, so a sampler is bound to
the study of its first trial, told apart by its identity, not its name: the study's id in its
storage, the storage by its database URL (an SQLite path made absolute) or journal file, or for
any other storage (in memory) the storage object itself. A trial of another study (another
name, or the same name in another storage) raises a ``ValueError`` (that trial is marked FAIL).
Create one sampler per study.

Horizon. For T-HOO, POO and PCT with ``schedule="fixed_budget"`` the horizon counts the
optimizer's rounds (trials it was told, not the independent sampler's); past it the optimizer
runs on with one ``HorizonWarning`` (its guarantees assume that horizon). PCT's anytime
schedule does not use it.

Stop and resume. The sampler keeps no state of its own that the study does not hold: the
first sampler of a study records its ``algorithm``, ``seed``, ``horizon`` and parameters in the
study's system attributes (``vhct:sampler``; a parameter that is not JSON, such as a callable, by
its qualified name), and each proposed trial records its round and cube point in its system
attributes (``vhct:round``, ``vhct:point``). A fresh sampler (a new process, the study loaded
from its storage) is refused at its first trial (``ValueError`` naming the setting and both
values) if any of those differs, and otherwise rebuilds the optimizer by replaying the completed
rounds in order, checking that each replayed point is the recorded one (a mismatch raises).
Resuming therefore needs an integer ``seed``.

Modules, one job each: ``sampler`` (:class:`VHCTSampler`, Optuna's interface and the optimizer's
rounds), ``space`` (the box: its parameters, the values at a cube point, which trials evaluated
it), ``penalty`` (failed trials and the penalty), ``record`` (what the study records to resume),
``identity`` (which study a sampler drives).
"""

from vhct.extras import require

require(("optuna",), "optuna", "the Optuna sampler (vhct.integrations.optuna)")

from vhct.integrations.optuna.penalty import FAILURES_BEFORE_PENALTY  # noqa: E402
from vhct.integrations.optuna.record import (  # noqa: E402
    NAMES_ATTR,
    PENALTY_ATTR,
    POINT_ATTR,
    ROUND_ATTR,
    SETTINGS_ATTR,
)
from vhct.integrations.optuna.sampler import VHCTSampler  # noqa: E402
from vhct.integrations.optuna.space import UNSUGGESTED_LIMIT  # noqa: E402

__all__ = [
    "FAILURES_BEFORE_PENALTY",
    "NAMES_ATTR",
    "PENALTY_ATTR",
    "POINT_ATTR",
    "ROUND_ATTR",
    "SETTINGS_ATTR",
    "UNSUGGESTED_LIMIT",
    "VHCTSampler",
]
