"""Memoization of deterministic objectives: the same run tables, fewer evaluations."""

import numpy as np
import pytest
from support import hierarchical_algorithms, run_spec, write_landmine_mat

from vhct.objectives import make_objective
from vhct.objectives.base import Objective
from vhct.objectives.landmine import LandmineSVM
from vhct.objectives.noise import UniformNoise
from vhct.optimizers.memo import PointMemo
from vhct.optimizers.registry import make_optimizer
from vhct.pipeline.run import experiment_columns, run_columns
from vhct.pipeline.tables import WALL_TIME_COLUMNS

#: the registry's tree methods and their portfolios, which pull the same representative points
#: again and again
TREE = hierarchical_algorithms()


class Counting(Objective):
    """Garland with a call counter; ``stochastic`` chosen per instance (True: never memoized)."""

    name = "counting"

    def __init__(self, stochastic: bool):
        self.inner = make_objective("garland")
        super().__init__(self.inner.domain)
        self.stochastic = stochastic
        self.calls = 0

    def __call__(self, x, seed=None):
        self.calls += 1
        return self.inner(x)

    @property
    def f_star(self):
        return self.inner.f_star


def table_bytes(columns):
    """A run table's bytes, column by column (name, type, values), without its wall-time columns
    (the only columns that vary)."""
    kept = {k: np.ascontiguousarray(v) for k, v in columns.items() if k not in WALL_TIME_COLUMNS}
    return b"".join(f"{k}:{v.dtype.str};".encode() + v.tobytes() for k, v in kept.items())


def test_point_memo_evaluates_each_exact_point_once():
    seen = []
    memo = PointMemo(lambda x: seen.append(x.copy()) or float(x.sum()))
    for x in ([0.1, 0.2], [0.1, 0.2], [0.1, 0.2 + 1e-17], [0.1, np.nextafter(0.2, 1)]):
        memo(np.array(x))
    assert memo.calls == len(seen) == 2 and memo.lookups == 4  # 0.2 + 1e-17 == 0.2 exactly


@pytest.mark.parametrize("algorithm", TREE)
def test_memoized_run_table_is_byte_identical_with_fewer_evaluations(algorithm):
    tables, calls = {}, {}
    for stochastic in (True, False):
        f = Counting(stochastic)
        opt = make_optimizer(algorithm, f.domain, 1000, seed=3)
        counted = {}
        columns = run_columns(opt, f, 1000, UniformNoise(0.05, np.random.default_rng(4)), 3, None, counted)
        tables[stochastic], calls[stochastic] = table_bytes(columns), f.calls
        assert counted["evaluations"] == f.calls
    assert tables[False] == tables[True]
    assert calls[True] == 1000
    assert calls[False] < 1000


def test_landmine_runs_are_memoized_with_the_same_table(tmp_path, monkeypatch):
    """The real Landmine objective (deterministic): memoized and unmemoized runs make the same table."""
    mat = write_landmine_mat(tmp_path / "LandmineData.mat")
    params = {"data_path": str(mat), "field": 0, "split_seed": 0}
    spec = run_spec("VHCT", "landmine", 150, 0, objective_params=params)
    memoized, meta = experiment_columns(spec)
    monkeypatch.setattr(LandmineSVM, "stochastic", True)  # the memo is skipped for stochastic objectives
    plain, plain_meta = experiment_columns(spec)
    assert table_bytes(memoized) == table_bytes(plain)
    assert plain_meta["evaluations"] == 150
    assert meta["evaluations"] < 150
