"""The README's Optuna example, word for word (tests/unit/test_examples.py checks and runs it).

Needs the ``optuna`` extra: ``pip install 'vhct[optuna]'``.
"""

import optuna
from vhct.integrations.optuna import VHCTSampler

def objective(trial):
    lr = trial.suggest_float("lr", 1e-4, 1e-1, log=True)
    layers = trial.suggest_int("layers", 1, 4)
    return (lr - 0.01) ** 2 + (layers - 2) ** 2

optuna.logging.set_verbosity(optuna.logging.WARNING)
study = optuna.create_study(sampler=VHCTSampler("VHCT", seed=0, rho=0.75))
study.optimize(objective, n_trials=100)
print(study.best_params, study.best_value)
