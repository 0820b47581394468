"""VHCTSampler never poisons a study (issues 31, 39): refused values, a second study (same name
included), conditional, mismatched and unused search-space parameters, failing regions, runs past a
horizon."""

from __future__ import annotations

import math
import warnings

import pytest
from support import drive

optuna = pytest.importorskip("optuna")

from optuna.distributions import FloatDistribution, IntDistribution  # noqa: E402
from optuna.trial import TrialState  # noqa: E402

from vhct.integrations.optuna import UNSUGGESTED_LIMIT, VHCTSampler  # noqa: E402
from vhct.integrations.optuna.space import from_unit  # noqa: E402
from vhct.optimizers.base import HorizonWarning  # noqa: E402
from vhct.optimizers.registry import make_optimizer  # noqa: E402

optuna.logging.set_verbosity(optuna.logging.ERROR)

#: widths that are powers of two: the cube's dyadic points map to the box exactly
SPACE = {"a": FloatDistribution(0.0, 4.0), "b": FloatDistribution(-2.0, 2.0)}


def f(a: float, b: float) -> float:
    return -((a - 1.3) ** 2) - (b + 0.7) ** 2 + 0.3 * math.sin(5 * a)


def loop_points(n: int, seed: int = 3) -> list[list[float]]:
    """The plain ask/tell loop of VHCT on the same box."""
    opt = make_optimizer("VHCT", [[0.0, 4.0], [-2.0, 2.0]], seed=seed)
    return drive(opt, lambda x: f(*x), n).tolist()


def points(trials) -> list[list[float]]:
    return [[t.params["a"], t.params["b"]] for t in trials]


def bad_at(number: int, bad: float):
    """The objective ``f``, except that trial ``number`` returns ``bad``."""

    def objective(trial: optuna.Trial) -> float:
        value = f(trial.suggest_float("a", 0.0, 4.0), trial.suggest_float("b", -2.0, 2.0))
        return bad if trial.number == number else value

    return objective


def messages(record, category=UserWarning) -> list[str]:
    return [str(w.message) for w in record if issubclass(w.category, category)]


# ---------------------------------------------------------------------------- 1. refused values


@pytest.mark.parametrize(("bad", "at"), [(math.inf, 2), (-math.inf, 2), (1e200, 3), (-1e200, 3)])
def test_a_value_the_optimizer_refuses_counts_as_failed_and_its_point_is_asked_again(bad, at):
    study = optuna.create_study(direction="maximize", sampler=VHCTSampler(seed=3, search_space=SPACE))
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        study.optimize(bad_at(at, bad), n_trials=at + 21, catch=(Exception,))
    assert [t.state for t in study.trials] == [TrialState.COMPLETE] * (at + 21)  # Optuna stores it
    assert all(math.isfinite(t.value) for t in study.trials if t.number != at)
    assert study.trials[at + 1].params == study.trials[at].params  # the same point again
    # the refused trial was not told: the other trials are exactly the loop's rounds
    assert points(t for t in study.trials if t.number != at) == loop_points(at + 20)
    refused = [m for m in messages(record) if "cannot be told" in m]
    assert len(refused) == 1 and refused[0].startswith(f"trial {at} returned {bad!r}")


def test_a_minimizing_study_survives_infinity_too():
    study = optuna.create_study(direction="minimize", sampler=VHCTSampler(seed=0))
    with pytest.warns(UserWarning, match=r"trial 2 returned inf, which VHCT cannot be told"):
        study.optimize(lambda t: -bad_at(2, -math.inf)(t), n_trials=23, catch=())
    assert all(t.state == TrialState.COMPLETE for t in study.trials)
    assert study.trials[3].params == study.trials[2].params


@pytest.mark.parametrize("stop_after", [3, 8])
def test_a_study_holding_an_infinite_value_resumes(tmp_path, stop_after):
    """Stopped right after the inf trial (3) or later (8): a fresh sampler continues as one run."""
    storage = f"sqlite:///{tmp_path / 'study.db'}"
    first = optuna.create_study(study_name="s", storage=storage, sampler=VHCTSampler(seed=0))
    with pytest.warns(UserWarning, match="trial 2 returned inf"):
        first.optimize(bad_at(2, math.inf), n_trials=stop_after)
    del first
    resumed = optuna.load_study(study_name="s", storage=storage, sampler=VHCTSampler(seed=0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        resumed.optimize(bad_at(2, math.inf), n_trials=25 - stop_after, catch=())
    whole = optuna.create_study(sampler=VHCTSampler(seed=0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        whole.optimize(bad_at(2, math.inf), n_trials=25)
    assert [t.state for t in resumed.trials] == [TrialState.COMPLETE] * 25
    assert points(resumed.trials) == points(whole.trials)
    assert resumed.trials[3].params == resumed.trials[2].params


def test_a_study_where_inf_once_failed_every_later_trial_resumes(tmp_path):
    """What the old sampler left: inf at trial 2, then trials that FAILED (no round recorded)."""
    storage = f"sqlite:///{tmp_path / 'study.db'}"
    study = optuna.create_study(study_name="s", storage=storage, sampler=VHCTSampler(seed=0))
    with pytest.warns(UserWarning, match="trial 2 returned inf"):
        study.optimize(bad_at(2, math.inf), n_trials=3)
    for _ in range(4):
        study.tell(study.ask(), state=TrialState.FAIL)  # these asks re-propose round 2
    resumed = optuna.load_study(study_name="s", storage=storage, sampler=VHCTSampler(seed=0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        resumed.optimize(bad_at(2, math.inf), n_trials=10, catch=())
    assert all(t.state == TrialState.COMPLETE for t in resumed.trials[7:])
    assert resumed.trials[7].params == resumed.trials[2].params


# ---------------------------------------------------------------------------- 2. one study per sampler


def test_a_sampler_refuses_a_second_study():
    sampler = VHCTSampler("VHCT", seed=0)
    a = optuna.create_study(study_name="A", direction="minimize", sampler=sampler)
    b = optuna.create_study(study_name="B", direction="maximize", sampler=sampler)
    alone = optuna.create_study(direction="minimize", sampler=VHCTSampler("VHCT", seed=0))
    for _ in range(15):
        a.optimize(lambda t: -bad_at(-1, 0.0)(t), n_trials=1)
        refused = r"drives study 'A' \(id 0 in InMemoryStorage .*\) and cannot drive study 'B'.*one sampler"
        with pytest.raises(ValueError, match=refused):
            b.optimize(bad_at(-1, 0.0), n_trials=1, catch=(Exception,))
    alone.optimize(lambda t: -bad_at(-1, 0.0)(t), n_trials=15)
    assert points(a.trials) == points(alone.trials)  # A is not disturbed
    assert [t.state for t in b.trials] == [TrialState.FAIL] * 15  # nothing left RUNNING in B


def test_reloading_the_same_study_with_its_sampler_is_allowed(tmp_path):
    storage = f"sqlite:///{tmp_path / 'study.db'}"
    sampler = VHCTSampler(seed=3, search_space=SPACE)
    optuna.create_study(study_name="s", storage=storage, direction="maximize", sampler=sampler).optimize(
        bad_at(-1, 0.0), n_trials=5
    )
    again = optuna.load_study(study_name="s", storage=storage, sampler=sampler)
    again.optimize(bad_at(-1, 0.0), n_trials=5)
    assert points(again.trials) == loop_points(10)


def journal(path) -> optuna.storages.JournalStorage:
    return optuna.storages.JournalStorage(optuna.storages.journal.JournalFileBackend(str(path)))


@pytest.mark.parametrize("kind", ["sqlite", "journal", "memory"])
def test_a_same_named_study_in_another_storage_is_another_study(tmp_path, kind):
    """Studies are told apart by storage and id, not by name: 's' in b.db is not 's' in a.db."""
    if kind == "sqlite":
        first, second = (f"sqlite:///{tmp_path / name}" for name in ("a.db", "b.db"))
    elif kind == "journal":
        first, second = journal(tmp_path / "a.log"), journal(tmp_path / "b.log")
    else:
        first, second = optuna.storages.InMemoryStorage(), optuna.storages.InMemoryStorage()
    sampler = VHCTSampler(seed=3, search_space=SPACE)
    a = optuna.create_study(study_name="s", storage=first, direction="maximize", sampler=sampler)
    a.optimize(bad_at(-1, 0.0), n_trials=5)
    b = optuna.create_study(study_name="s", storage=second, direction="maximize", sampler=sampler)
    refused = r"drives study 's' \(id \d in .*\) and cannot drive study 's' \(id \d in "
    with pytest.raises(ValueError, match=refused):
        b.optimize(bad_at(-1, 0.0), n_trials=1, catch=(Exception,))
    assert [t.state for t in b.trials] == [TrialState.FAIL]
    a.optimize(bad_at(-1, 0.0), n_trials=5)  # the first study goes on undisturbed
    assert points(a.trials) == loop_points(10)


@pytest.mark.parametrize("kind", ["sqlite", "journal"])
def test_the_same_file_by_a_relative_path_is_the_same_study(tmp_path, monkeypatch, kind):
    monkeypatch.chdir(tmp_path)
    sampler = VHCTSampler(seed=3, search_space=SPACE)
    if kind == "sqlite":
        first, then = f"sqlite:///{tmp_path / 'a.db'}", "sqlite:///a.db"
    else:
        first, then = journal(tmp_path / "a.log"), journal("a.log")  # another object, the same file
    optuna.create_study(study_name="s", storage=first, direction="maximize", sampler=sampler).optimize(
        bad_at(-1, 0.0), n_trials=5
    )
    again = optuna.load_study(study_name="s", storage=then, sampler=sampler)
    again.optimize(bad_at(-1, 0.0), n_trials=5)
    assert points(again.trials) == loop_points(10)


# ---------------------------------------------------------------------------- 3. conditional spaces


def branching(trial: optuna.Trial) -> float:
    if trial.suggest_categorical("kind", ["a", "b"]) == "a":
        return -((trial.suggest_float("u", 0.0, 1.0) - 0.3) ** 2)
    return -((trial.suggest_float("v", 0.0, 1.0) - 0.7) ** 2) - 0.05


@pytest.mark.parametrize("search_space", [None, {"u": FloatDistribution(0.0, 1.0)}])
def test_a_conditional_space_tells_only_the_trials_that_suggested_the_parameters(search_space):
    study = optuna.create_study(direction="maximize", sampler=VHCTSampler(seed=0, search_space=search_space))
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        study.optimize(branching, n_trials=40)
    owned = study.trials[-1].system_attrs["vhct:params"]
    assert len(owned) == 1  # the branch of the first completed trial (or search_space)
    (name,) = owned
    dist = FloatDistribution(0.0, 1.0)
    # replay: the optimizer's rounds must be the loop's that is told only the trials suggesting `name`
    opt = make_optimizer("VHCT", [[0.0, 1.0]], seed=0)
    rounds = [t for t in study.trials if "vhct:round" in t.system_attrs]
    skipped = 0
    for t in rounds:
        x = opt.ask()
        assert t.system_attrs["vhct:round"] == opt.t and t.system_attrs["vhct:point"] == x.tolist()
        if name in t.params:
            assert t.params[name] == from_unit(x[0], dist)
            opt.tell(x, t.value)
        else:
            skipped += 1
    assert skipped >= 5 and opt.t >= 10  # both branches were taken
    advice = [m for m in messages(record) if "did not suggest" in m]
    assert len(advice) == 1 and "unconditionally, or run one study per branch" in advice[0]


def test_an_enqueued_value_is_not_told_as_the_optimizers_point():
    """A partly enqueued trial (``a`` fixed, ``b`` proposed) did not evaluate the optimizer's point."""
    study = optuna.create_study(direction="maximize", sampler=VHCTSampler(seed=3, search_space=SPACE))
    study.optimize(bad_at(-1, 0.0), n_trials=4)
    study.enqueue_trial({"a": 0.123})
    with pytest.warns(UserWarning, match=r"trial 4 evaluated a=0.123, not the proposed"):
        study.optimize(bad_at(-1, 0.0), n_trials=6)
    assert study.trials[4].params["a"] == 0.123 and "vhct:round" in study.trials[4].system_attrs
    assert study.trials[5].system_attrs["vhct:point"] == study.trials[4].system_attrs["vhct:point"]
    assert points(t for t in study.trials if t.number != 4) == loop_points(9)
    # a wholly enqueued trial never asks the sampler: it is not a round at all
    study.enqueue_trial({"a": 0.5, "b": 0.5})
    study.optimize(bad_at(-1, 0.0), n_trials=3)
    assert "vhct:round" not in study.trials[10].system_attrs
    assert points(t for t in study.trials if t.number not in (4, 10)) == loop_points(11)


# ---------------------------------------------------------------------------- 4. search_space vs objective


@pytest.mark.parametrize(
    ("given", "suggest"),
    [
        (FloatDistribution(0.0, 4.0), lambda t: t.suggest_float("u", 0.0, 1.0)),
        (FloatDistribution(0.0, 1.0), lambda t: t.suggest_float("u", 0.0, 1.0, step=0.25)),
        (IntDistribution(0, 10), lambda t: t.suggest_int("u", 0, 8)),
    ],
)
def test_a_search_space_that_disagrees_with_the_objective_is_refused(given, suggest):
    study = optuna.create_study(sampler=VHCTSampler(seed=0, search_space={"u": given}))
    with pytest.raises(ValueError) as error:
        study.optimize(lambda t: suggest(t) ** 2, n_trials=5, catch=(Exception,))
    text = str(error.value)
    assert text.startswith("parameter 'u': the objective suggests ")
    assert str(study.trials[0].distributions["u"]) in text and str(given) in text
    assert "from the search_space argument" in text
    assert len(study.trials) == 1  # refused at the first trial, not after many


@pytest.mark.parametrize(
    "suggest", [lambda t: t.suggest_float("u", 1e-3, 1.0, log=True), lambda t: t.suggest_int("u", 0, 1)]
)
def test_another_kind_or_scale_is_refused_by_optuna_at_the_suggest_call(suggest):
    study = optuna.create_study(sampler=VHCTSampler(seed=0, search_space={"u": FloatDistribution(1e-3, 1.0)}))
    with pytest.raises(ValueError, match="Cannot set different"):
        study.optimize(lambda t: suggest(t) ** 2, n_trials=1)


def test_a_search_space_parameter_the_objective_never_suggests_is_refused():
    """Before: every trial stayed at the centre (a trial that skips ``c`` is never told)."""
    space = {**SPACE, "c": FloatDistribution(0.0, 1.0)}
    study = optuna.create_study(direction="maximize", sampler=VHCTSampler(seed=0, search_space=space))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "trial 0 did not suggest ['c']"
        with pytest.raises(ValueError) as error:
            study.optimize(bad_at(-1, 0.0), n_trials=50, catch=(Exception,))
    assert str(error.value).startswith(
        f"search_space names ['c'], but none of the study's {UNSUGGESTED_LIMIT} finished trials suggested it"
    )
    assert "Remove ['c'] from search_space, or suggest it in the objective" in str(error.value)
    assert len(study.trials) == UNSUGGESTED_LIMIT


def test_a_dynamic_distribution_is_refused():
    """Without search_space the box is the first completed trial's; a later other box is refused."""
    study = optuna.create_study(sampler=VHCTSampler(seed=0))
    with pytest.raises(ValueError, match=r"parameter 'u'.*trial 1.*inferred from the study's first"):
        study.optimize(lambda t: t.suggest_float("u", 0.0, 1.0 + t.number), n_trials=5)


# ---------------------------------------------------------------------------- 4b. failing regions


def failing_in_region(trial: optuna.Trial) -> float:
    """Best at x = 0.25, but the objective raises for 0.2 < x < 0.3."""
    x = trial.suggest_float("x", 0.0, 1.0)
    if 0.2 < x < 0.3:
        raise RuntimeError(f"no value at x={x}")
    return -((x - 0.25) ** 2)


@pytest.mark.parametrize("search_space", [None, {"x": FloatDistribution(0.0, 1.0)}])
def test_a_region_where_the_objective_fails_is_penalized_and_the_search_moves_on(search_space):
    """Before: 39 of 40 trials failed at x = 0.25, silently. Now a point that fails twice is told
    the study's worst value, and the search goes around the region."""
    study = optuna.create_study(direction="maximize", sampler=VHCTSampler(seed=0, search_space=search_space))
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        study.optimize(failing_in_region, n_trials=40, catch=(RuntimeError,))
    failed = [t for t in study.trials if t.state == TrialState.FAIL]
    assert 2 <= len(failed) <= 6  # each failing point twice, three points
    assert all(0.2 < t.params["x"] < 0.3 for t in failed)
    assert study.best_value > -0.005  # it found the region's edges, x = 0.1875 or 0.3125
    penalty = [m for m in messages(record) if "failed at the same point" in m]
    assert len(penalty) == 1
    first = [t.number for t in failed[:2]]
    assert penalty[0].startswith(f"trials {first} failed at the same point of VHCT, {{'x': 0.25}}: ")
    if search_space is None:  # trial 0, the independent sampler's, gave a value
        assert "the worst value of the study so far" in penalty[0]
    else:  # VHCT's first point failed before the study had any value
        assert "before any trial of the study had a value" in penalty[0]
        assert "drawn by the independent sampler" in penalty[0]
        assert "vhct:round" not in study.trials[2].system_attrs


def test_the_penalty_is_the_studys_worst_value_and_the_rounds_replay_it():
    study = optuna.create_study(direction="minimize", sampler=VHCTSampler(seed=0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        study.optimize(lambda t: -failing_in_region(t), n_trials=30, catch=(RuntimeError,))
    # the loop: VHCT told each round's value, or the recorded penalty when its point failed twice
    opt = make_optimizer("VHCT", [[0.0, 1.0]], seed=0)
    rounds = {}
    for t in study.trials:
        if "vhct:round" in t.system_attrs:
            rounds.setdefault(t.system_attrs["vhct:round"], []).append(t)
    penalties = {k: r for t in study.trials for k, r in t.system_attrs.get("vhct:penalty", ())}
    assert len(penalties) >= 1
    for k in sorted(rounds):
        x = opt.ask()
        trials = rounds[k]
        assert opt.t == k and all(t.system_attrs["vhct:point"] == x.tolist() for t in trials)
        done = [t for t in trials if t.state == TrialState.COMPLETE]
        if done:
            opt.tell(x, -done[0].value)
        elif k in penalties:
            assert len(trials) == 2
            before = [u.value for u in study.trials if u.number < trials[-1].number and u.value is not None]
            assert penalties[k] == -max(before)  # the worst loss so far, as a reward
            opt.tell(x, penalties[k])


@pytest.mark.parametrize("stop_after", [2, 3, 12])
def test_a_study_with_penalized_points_resumes_as_uninterrupted(tmp_path, stop_after):
    """Stopped between a point's two failures (2), right after them (3) or later (12)."""
    storage = f"sqlite:///{tmp_path / 'study.db'}"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        first = optuna.create_study(study_name="s", storage=storage, sampler=VHCTSampler(seed=0))
        first.optimize(lambda t: -failing_in_region(t), n_trials=stop_after, catch=(RuntimeError,))
        resumed = optuna.load_study(study_name="s", storage=storage, sampler=VHCTSampler(seed=0))
        resumed.optimize(lambda t: -failing_in_region(t), n_trials=30 - stop_after, catch=(RuntimeError,))
        whole = optuna.create_study(sampler=VHCTSampler(seed=0))
        whole.optimize(lambda t: -failing_in_region(t), n_trials=30, catch=(RuntimeError,))
    assert [t.params for t in resumed.trials[1:]] == [t.params for t in whole.trials[1:]]
    assert sum(t.state == TrialState.FAIL for t in resumed.trials) <= 6


# ---------------------------------------------------------------------------- 5. past the horizon


def run_loop(algorithm: str, horizon: int, rounds: int, **params) -> list[str]:
    opt = make_optimizer(algorithm, [[0.0, 1.0]], horizon, seed=0, **params)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        drive(opt, lambda x: -((x[0] - 0.3) ** 2), rounds)
    return messages(record, HorizonWarning)


@pytest.mark.parametrize(
    ("algorithm", "params"), [("T-HOO", {}), ("POO", {}), ("PCT", {"schedule": "fixed_budget"})]
)
def test_a_loop_past_its_horizon_warns_once(algorithm, params):
    assert run_loop(algorithm, 16, 16, **params) == []  # up to the horizon: silent
    warned = run_loop(algorithm, 16, 200, **params)
    assert warned == [
        f"{algorithm} was built for horizon=16 rounds and is asked round 17: its guarantees no longer hold "
        + warned[0].split("no longer hold ", 1)[1]
    ]


def test_pct_anytime_does_not_use_the_horizon_and_does_not_warn():
    assert run_loop("PCT", 16, 200) == []


def test_the_sampler_past_its_horizon_warns_once():
    study = optuna.create_study(
        direction="maximize", sampler=VHCTSampler("T-HOO", seed=3, horizon=8, search_space=SPACE)
    )
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        study.optimize(bad_at(-1, 0.0), n_trials=8)
        assert messages(record, HorizonWarning) == []
        study.optimize(bad_at(-1, 0.0), n_trials=12)
    warned = messages(record, HorizonWarning)
    assert len(warned) == 1
    assert warned[0].startswith("T-HOO was built for horizon=8 rounds and is asked round 9")
