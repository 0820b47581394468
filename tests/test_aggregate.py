"""Aggregation across seeds: statistics, table layout, byte-stable writing."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from vhct import aggregate as ag

INFO = {"A": {"algorithm": "VHCT", "label": "VHCT"}, "B": {"algorithm": "HCT", "label": "HCT, x"}}


def fake_run(regrets: np.ndarray, values: np.ndarray | None = None) -> pd.DataFrame:
    n = len(regrets)
    return pd.DataFrame(
        {
            "t": np.arange(1, n + 1),
            "x0": np.linspace(0, 1, n),
            "value": 1 - regrets if values is None else values,
            "regret": regrets,
            "cumulative_regret": np.cumsum(regrets),
            "step_seconds": np.full(n, 0.001),
        }
    )


@pytest.fixture
def runs() -> dict[str, list[pd.DataFrame]]:
    rng = np.random.default_rng(0)
    return {
        "A": [fake_run(rng.random(5)) for _ in range(3)],
        "B": [fake_run(rng.random(4)) for _ in range(2)],
    }


def test_regret_table_mean_and_std_per_round(runs):
    table = ag.regret_table(runs, INFO)
    assert list(table.columns) == ag.REGRET_COLUMNS
    assert len(table) == 5 + 4
    a = table[table.setting == "A"]
    stacked = np.vstack([r["cumulative_regret"] for r in runs["A"]])
    np.testing.assert_allclose(a["mean"], stacked.mean(axis=0))
    np.testing.assert_allclose(a["std"], stacked.std(axis=0, ddof=1))
    assert a["t"].tolist() == [1, 2, 3, 4, 5]
    assert set(a["n_seeds"]) == {3}
    assert set(table[table.setting == "B"]["algorithm"]) == {"HCT"}


def test_single_seed_has_zero_std():
    table = ag.regret_table({"A": [fake_run(np.array([0.5, 0.25]))]}, INFO)
    assert table["std"].tolist() == [0.0, 0.0]
    assert table["mean"].tolist() == [0.5, 0.75]


def test_runs_of_different_lengths_are_rejected():
    with pytest.raises(ValueError, match="different lengths"):
        ag.regret_table({"A": [fake_run(np.ones(3)), fake_run(np.ones(4))]}, INFO)
    with pytest.raises(ValueError, match="no runs"):
        ag.regret_table({"A": []}, INFO)


def test_final_table(runs):
    final = ag.final_table(runs, INFO).set_index("setting")
    assert list(final.reset_index().columns) == ag.FINAL_COLUMNS
    ends = np.array([r["cumulative_regret"].iloc[-1] for r in runs["A"]])
    assert final.loc["A", "final_mean"] == pytest.approx(ends.mean())
    assert final.loc["A", "final_std"] == pytest.approx(ends.std(ddof=1))
    assert final.loc["A", "average_mean"] == pytest.approx(ends.mean() / 5)
    assert final.loc["B", "horizon"] == 4 and final.loc["B", "label"] == "HCT, x"
    best = np.array([r["value"].max() for r in runs["B"]])
    assert final.loc["B", "best_value_mean"] == pytest.approx(best.mean())


def test_write_table_is_byte_stable_and_atomic(runs, tmp_path):
    table = ag.regret_table(runs, INFO)
    first, second = tmp_path / "a" / "r.csv", tmp_path / "b.csv"
    ag.write_table(table, first)
    ag.write_table(ag.regret_table(runs, INFO), second)
    assert first.read_bytes() == second.read_bytes()
    assert list(tmp_path.rglob("*.tmp")) == []
    back = pd.read_csv(first)
    np.testing.assert_allclose(back["mean"], table["mean"], rtol=1e-11)


def test_aggregate_experiment_reads_tables_and_sidecars(runs, tmp_path):
    paths: dict[str, list[str]] = {}
    for setting, tables in runs.items():
        for seed, table in enumerate(tables):
            path = tmp_path / "runs" / setting / f"seed{seed}.csv.gz"
            path.parent.mkdir(parents=True, exist_ok=True)
            table.to_csv(path, index=False)
            path.with_name(f"seed{seed}.json").write_text(
                json.dumps({"seed": seed, "wall_seconds": 0.5 + seed})
            )
            paths.setdefault(setting, []).append(str(path))
    out = tmp_path / "agg"
    ag.aggregate_experiment(paths, INFO, out / "regret.csv", out / "final.csv", out / "timing.csv")
    regret = pd.read_csv(out / "regret.csv")
    np.testing.assert_allclose(regret["mean"], ag.regret_table(runs, INFO)["mean"], rtol=1e-11)
    timing = pd.read_csv(out / "timing.csv")
    assert list(timing.columns) == ag.TIMING_COLUMNS
    assert timing["wall_seconds"].tolist() == [0.5, 1.5, 2.5, 0.5, 1.5]
    assert (
        "wall_seconds" not in regret.columns and "wall_seconds" not in pd.read_csv(out / "final.csv").columns
    )


def test_read_run_requires_the_columns(tmp_path):
    path = tmp_path / "r.csv"
    pd.DataFrame({"t": [1], "value": [0.0]}).to_csv(path, index=False)
    with pytest.raises(ValueError, match="lacks columns"):
        ag.read_run(path)


def test_regret_against_the_best_observed_value():
    # f* unknown (reference 1): values 0.5..0.8, the best seen by any run of any setting is 0.8
    runs = {
        "A": [fake_run(1 - np.array([0.5, 0.6])), fake_run(1 - np.array([0.7, 0.6]))],
        "B": [fake_run(1 - np.array([0.8, 0.5]))],
    }
    regret = ag.regret_table(runs, INFO)
    a = regret[regret.setting == "A"]
    # seed 0: 0.3, 0.5; seed 1: 0.1, 0.3 -> mean 0.2, 0.4 (against 1: 0.4, 0.8)
    np.testing.assert_allclose(a["mean_vs_best"], [0.2, 0.4])
    np.testing.assert_allclose(a["mean"], [0.4, 0.8])
    final = ag.final_table(runs, INFO).set_index("setting")
    assert final["best_observed"].tolist() == pytest.approx([0.8, 0.8])
    assert final.loc["A", "final_vs_best_mean"] == pytest.approx(0.4)
    assert final.loc["A", "final_vs_best_std"] == pytest.approx(np.std([0.5, 0.3], ddof=1))
    assert final.loc["B", "final_vs_best_mean"] == pytest.approx(0.3)
    # the regret against the best observed value never exceeds the regret against 1
    assert (regret["mean_vs_best"] <= regret["mean"] + 1e-12).all()


def test_best_observed_is_the_maximum_over_every_run(runs):
    expected = max(t["value"].max() for tables in runs.values() for t in tables)
    assert ag.best_observed(runs) == expected
    with pytest.raises(ValueError, match="at least one run"):
        ag.best_observed({})
