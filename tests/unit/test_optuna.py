"""VHCTSampler in real Optuna studies: the same points as the ask/tell loop, resume, parameter kinds."""

from __future__ import annotations

import math
import sys
import warnings

import numpy as np
import pytest
from support import drive

optuna = pytest.importorskip("optuna")

from optuna.distributions import (  # noqa: E402
    CategoricalDistribution,
    FloatDistribution,
    IntDistribution,
)

from vhct.extras import MissingExtraError  # noqa: E402
from vhct.integrations.optuna import VHCTSampler  # noqa: E402
from vhct.integrations.optuna.record import describe  # noqa: E402
from vhct.integrations.optuna.space import from_unit  # noqa: E402
from vhct.optimizers.registry import make_optimizer  # noqa: E402

optuna.logging.set_verbosity(optuna.logging.WARNING)

#: widths that are powers of two: the cube's dyadic points map to the box exactly
SPACE = {"a": FloatDistribution(0.0, 4.0), "b": FloatDistribution(-2.0, 2.0)}


def f(a: float, b: float) -> float:
    return -((a - 1.3) ** 2) - (b + 0.7) ** 2 + 0.3 * math.sin(5 * a)


def objective(trial: optuna.Trial) -> float:
    return f(trial.suggest_float("a", 0.0, 4.0), trial.suggest_float("b", -2.0, 2.0))


def loop_points(
    n: int, algorithm: str = "VHCT", seed: int = 3, sign: float = 1.0, **params
) -> list[list[float]]:
    """The plain ask/tell loop on the same box."""
    opt = make_optimizer(algorithm, [[0.0, 4.0], [-2.0, 2.0]], n, seed=seed, **params)
    return drive(opt, lambda x: sign * f(*x), n).tolist()


def study_points(study: optuna.Study) -> list[list[float]]:
    return [[t.params["a"], t.params["b"]] for t in study.trials]


@pytest.mark.parametrize(
    ("algorithm", "params"), [("VHCT", {"rho": 0.75}), ("HCT", {}), ("T-HOO", {"horizon": 60})]
)
def test_the_sampler_proposes_the_ask_tell_loops_points(algorithm, params):
    sampler = VHCTSampler(algorithm, seed=3, search_space=SPACE, **params)
    study = optuna.create_study(direction="maximize", sampler=sampler)
    study.optimize(objective, n_trials=60)
    loop_params = {k: v for k, v in params.items() if k != "horizon"}
    assert study_points(study) == loop_points(60, algorithm, **loop_params)


def test_a_minimizing_study_maximizes_the_negated_value():
    study = optuna.create_study(direction="minimize", sampler=VHCTSampler(seed=3, search_space=SPACE))
    study.optimize(lambda t: -objective(t), n_trials=40)
    assert study_points(study) == loop_points(40)


def test_inferred_space_starts_after_the_first_trial():
    """Without search_space, trial 0 is the independent sampler's; VHCT's rounds start at trial 1."""
    study = optuna.create_study(direction="maximize", sampler=VHCTSampler(seed=3))
    study.optimize(objective, n_trials=30)
    assert study_points(study)[1:] == loop_points(29)
    assert study_points(study)[0] != loop_points(1)[0]


def test_stop_and_resume_from_storage_continues_as_uninterrupted(tmp_path):
    storage = f"sqlite:///{tmp_path / 'study.db'}"
    first = optuna.create_study(
        study_name="s", storage=storage, direction="maximize", sampler=VHCTSampler(seed=3, rho=0.75)
    )
    first.optimize(objective, n_trials=25)
    del first  # the process "stops": a new sampler and the study loaded from its file
    resumed = optuna.load_study(study_name="s", storage=storage, sampler=VHCTSampler(seed=3, rho=0.75))
    resumed.optimize(objective, n_trials=25)
    whole = optuna.create_study(direction="maximize", sampler=VHCTSampler(seed=3, rho=0.75))
    whole.optimize(objective, n_trials=50)
    assert study_points(resumed) == study_points(whole)


@pytest.mark.parametrize(
    ("first", "then", "named"),
    [
        ({"seed": 3}, {"seed": 4}, "seed=3, this VHCTSampler has seed=4"),
        ({"seed": 3, "rho": 0.75}, {"seed": 3, "rho": 0.5}, "rho=0.75, this VHCTSampler has rho=0.5"),
        ({"seed": 3, "rho": 0.75}, {"seed": 3}, "rho=0.75, this VHCTSampler has rho=None"),
        ({"seed": 3}, {"algorithm": "HCT", "seed": 3}, "algorithm='VHCT', this VHCTSampler has algo.*='HCT'"),
    ],
)
def test_resume_with_other_settings_is_refused(tmp_path, first, then, named):
    """Three rounds replay alike under rho 0.75 and 0.5: the settings recorded in the study, not
    the replay, tell them apart, at the first trial whatever ``catch``."""
    storage = f"sqlite:///{tmp_path / 'study.db'}"

    def load(settings: dict) -> optuna.Study:
        return optuna.load_study(
            study_name="s", storage=storage, sampler=VHCTSampler(**settings, search_space=SPACE)
        )

    optuna.create_study(study_name="s", storage=storage)
    study = load(first)
    study.optimize(objective, n_trials=3)
    assert study._storage.get_study_system_attrs(study._study_id)["vhct:sampler"]["seed"] == 3
    other = load(then)
    with pytest.raises(ValueError, match=rf"^study 's' was run with {named}: its rounds would not replay"):
        other.optimize(objective, n_trials=1, catch=(Exception,))
    assert len(other.trials) == 4 and other.trials[-1].state == optuna.trial.TrialState.FAIL
    # the study is unharmed: the sampler that ran it resumes it
    same = load(first)
    same.optimize(objective, n_trials=2)
    assert [t.state for t in same.trials[4:]] == [optuna.trial.TrialState.COMPLETE] * 2


def test_a_parameter_that_is_not_json_is_recorded_by_its_qualified_name():
    assert describe(0.75) == 0.75 and describe((1, 2)) == [1, 2]
    assert describe(math.sqrt) == "math.sqrt" and describe(object()) == "builtins.object"


def test_concurrent_trials_one_round_at_a_time():
    study = optuna.create_study(direction="maximize", sampler=VHCTSampler(seed=3, search_space=SPACE))
    first = study.ask(SPACE)
    with pytest.warns(UserWarning, match="still running: it is drawn by the independent sampler"):
        second = study.ask(SPACE)  # round 0 is still being evaluated by `first`
    study.tell(second, f(second.params["a"], second.params["b"]))  # not VHCT's: not told to it
    study.tell(first, f(first.params["a"], first.params["b"]))
    for _ in range(10):
        trial = study.ask(SPACE)
        study.tell(trial, f(trial.params["a"], trial.params["b"]))
    vhct_trials = [t for t in study.trials if "vhct:round" in t.system_attrs]
    assert [t.number for t in vhct_trials] == [0, *range(2, 12)]
    assert [[t.params["a"], t.params["b"]] for t in vhct_trials] == loop_points(11)


def test_a_failed_trial_is_proposed_again():
    study = optuna.create_study(direction="maximize", sampler=VHCTSampler(seed=3, search_space=SPACE))
    trial = study.ask(SPACE)
    study.tell(trial, state=optuna.trial.TrialState.FAIL)
    retry = study.ask(SPACE)
    assert retry.params == trial.params
    study.tell(retry, f(retry.params["a"], retry.params["b"]))
    for _ in range(8):
        t = study.ask(SPACE)
        study.tell(t, f(t.params["a"], t.params["b"]))
    assert study_points(study)[1:] == loop_points(9)


def test_log_and_integer_parameters():
    log_float = FloatDistribution(1e-4, 1.0, log=True)
    assert from_unit(0.5, log_float) == pytest.approx(1e-2)
    assert from_unit(0.0, log_float) == pytest.approx(1e-4) and from_unit(1.0, log_float) == 1.0
    # integers: each value gets an equal share of the cube's side
    ints = IntDistribution(1, 4)
    shares = np.bincount([from_unit(u, ints) for u in np.linspace(0, 1, 4001)], minlength=5)[1:]
    assert shares.min() >= 999 and shares.max() <= 1001
    assert from_unit(0.5, FloatDistribution(0.0, 1.0, step=0.25)) == 0.5
    assert from_unit(0.6, FloatDistribution(0.0, 1.0, step=0.25)) == 0.5
    log_int = IntDistribution(1, 1000, log=True)
    assert from_unit(0.5, log_int) in (22, 23)  # sqrt(0.5 * 1000.5) in log space

    space = {"lr": log_float, "layers": ints}
    study = optuna.create_study(direction="maximize", sampler=VHCTSampler(seed=1, search_space=space))

    def tune(trial):
        lr, layers = trial.suggest_float("lr", 1e-4, 1.0, log=True), trial.suggest_int("layers", 1, 4)
        return -((math.log10(lr) + 2.5) ** 2) - (layers - 3) ** 2

    study.optimize(tune, n_trials=40)
    opt = make_optimizer("VHCT", [[0.0, 1.0], [0.0, 1.0]], seed=1)  # one cube side per parameter
    for trial in study.trials:
        u = opt.ask()
        assert trial.params == {"layers": from_unit(u[0], ints), "lr": from_unit(u[1], log_float)}
        opt.tell(u, trial.value)
    assert study.best_params["layers"] == 3 and abs(math.log10(study.best_params["lr"]) + 2.5) < 0.5


def test_categorical_parameters_go_to_the_independent_sampler():
    study = optuna.create_study(direction="maximize", sampler=VHCTSampler(seed=3, search_space=SPACE))

    def with_choice(trial):
        kind = trial.suggest_categorical("kind", ["x", "y"])
        return objective(trial) + (0.1 if kind == "y" else 0.0)

    with pytest.warns(UserWarning, match="categorical parameter 'kind' is drawn by the independent sampler"):
        study.optimize(with_choice, n_trials=20)
    assert {t.params["kind"] for t in study.trials} == {"x", "y"}
    assert isinstance(study.trials[0].distributions["kind"], CategoricalDistribution)
    # the numeric parameters are still VHCT's rounds (rewards differ from the loop's: compare the first)
    assert study_points(study)[0] == loop_points(1)[0]


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="unknown algorithm 'Nope'"):
        VHCTSampler("Nope")
    with pytest.raises(ValueError, match="VHCT does not accept parameter"):
        VHCTSampler(rh0=0.5)
    with pytest.raises(ValueError, match="POO needs the horizon"):
        VHCTSampler("POO")
    with pytest.raises(ValueError, match="seed must be a non-negative int"):
        VHCTSampler(seed=-1)
    with pytest.raises(ValueError, match="search_space must map parameter names"):
        VHCTSampler(search_space={"a": (0, 1)})
    study = optuna.create_study(directions=["maximize", "maximize"], sampler=VHCTSampler(search_space=SPACE))
    with pytest.raises(ValueError, match="multi-objective"):
        study.optimize(lambda t: (objective(t), 0.0), n_trials=1, catch=())


def test_without_the_extra_the_error_names_it(monkeypatch):
    from vhct import extras

    real = extras.missing_modules
    monkeypatch.setattr(
        extras, "missing_modules", lambda names: ["optuna"] if "optuna" in names else real(names)
    )
    monkeypatch.delitem(sys.modules, "vhct.integrations.optuna")
    with pytest.raises(MissingExtraError, match=r"needs optuna, .*pip install 'vhct\[optuna\]'"):
        import vhct.integrations.optuna  # noqa: F401
    with pytest.raises(MissingExtraError, match=r"the TPE baseline .*pip install 'vhct\[optuna\]'"):
        make_optimizer("TPE", [[0.0, 1.0]])


def test_a_pruned_trial_is_told_its_last_intermediate_value():
    study = optuna.create_study(direction="maximize", sampler=VHCTSampler(seed=3, search_space=SPACE))
    trial = study.ask(SPACE)
    value = f(trial.params["a"], trial.params["b"])
    trial.report(value, step=1)
    study.tell(trial, state=optuna.trial.TrialState.PRUNED)
    for _ in range(8):
        t = study.ask(SPACE)
        study.tell(t, f(t.params["a"], t.params["b"]))
    assert study_points(study) == loop_points(9)  # round 0 was told `value`: no repetition
    # without an intermediate value, a pruned trial counts as failed: its point comes again
    bare = study.ask(SPACE)
    study.tell(bare, state=optuna.trial.TrialState.PRUNED)
    assert study.ask(SPACE).params == bare.params


def test_parallel_jobs_keep_the_optimizers_rounds_in_order():
    """n_jobs=2: trials run in threads; the ones that are VHCT's follow the loop's points."""
    study = optuna.create_study(direction="maximize", sampler=VHCTSampler(seed=3, search_space=SPACE))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # trials drawn by the independent sampler
        study.optimize(objective, n_trials=40, n_jobs=2)
    rounds = sorted(
        (t.system_attrs["vhct:round"], t.number, [t.params["a"], t.params["b"]])
        for t in study.trials
        if "vhct:round" in t.system_attrs
    )
    assert [r[0] for r in rounds] == list(range(len(rounds))) and len(rounds) >= 10
    assert [r[2] for r in rounds] == loop_points(len(rounds))


@pytest.mark.parametrize(
    ("name", "module", "extra"), [("CMA-ES", "cmaes", "optuna"), ("GP-Optuna", "torch", "real-data")]
)
def test_a_baselines_own_dependency_is_named_with_its_extra(monkeypatch, name, module, extra):
    from vhct import extras

    real = extras.missing_modules
    monkeypatch.setattr(
        extras, "missing_modules", lambda names: [m for m in names if m == module] or real(names)
    )
    with pytest.raises(
        MissingExtraError, match=rf"the {name} baseline .*needs {module}, .*'vhct\[{extra}\]'"
    ):
        make_optimizer(name, [[0.0, 1.0]])
