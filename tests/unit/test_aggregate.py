"""Aggregation across seeds: statistics, table layout, byte-stable writing; batch files of the run
store checked against their records and the config before anything is written."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from support import made_up_record, write_made_up_batch

from vhct.pipeline import aggregate as ag
from vhct.pipeline.specs import SettingInfo
from vhct.pipeline.store import RECORDS, STORED_COLUMNS
from vhct.pipeline.tables import READ_COLUMNS, RunTableError, read_runs
from vhct.reporting.audit.runs import AUDITED_COLUMNS

INFO = {  # what the aggregate job reads: each setting's record as the config computes it
    "A": SettingInfo(algorithm="VHCT", label="VHCT", params={}, horizon=5, seeds=[0, 1]),
    "B": SettingInfo(algorithm="HCT", label="HCT, x", params={}, horizon=4, seeds=[0, 1]),
}


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
            "optimizer_seconds": np.full(n, 0.0004),
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


def write_runs(runs: dict[str, list[pd.DataFrame]], folder: Path) -> dict[str, list[str]]:
    """Write each setting's runs as one batch file (as a run job does), seed k's record with
    ``0.5 + k`` wall seconds; return the batch files by setting."""
    paths: dict[str, list[str]] = {}
    for setting, tables in runs.items():
        records = [made_up_record(k, len(t), 0.5 + k) for k, t in enumerate(tables)]
        path = folder / "runs" / setting / f"seeds0-{len(tables) - 1}.npz"
        paths[setting] = [write_made_up_batch(path, tables, records)]
    return paths


def aggregate_into(paths: dict[str, list[str]], out: Path, info=INFO) -> list[Path]:
    targets = [out / "regret.csv", out / "final.csv", out / "timing.csv"]
    ag.aggregate_runs(paths, info, dict(zip(("regret", "final", "timing"), targets, strict=True)))
    return targets


def test_a_settings_curve_is_its_rows_of_the_experiments_regret_read_alone(runs, tmp_path):
    """The figures' input (issue 40, item 1): each setting aggregated from its own runs gives the
    same mean and std as its rows of the experiment's table, and timings, without the column that
    needs the other settings (``mean_vs_best``)."""
    paths = write_runs(runs, tmp_path)
    aggregate_into(paths, tmp_path / "all")
    regret, timing = (pd.read_csv(tmp_path / "all" / name) for name in ("regret.csv", "timing.csv"))
    for setting in paths:
        out = {"curve": tmp_path / setting / "regret.csv", "timing": tmp_path / setting / "timing.csv"}
        ag.aggregate_runs({setting: paths[setting]}, INFO, out)
        curve = pd.read_csv(out["curve"])
        assert list(curve.columns) == ag.CURVE_COLUMNS
        mine = regret[regret["setting"] == setting].reset_index(drop=True)
        pd.testing.assert_frame_equal(curve, mine[ag.CURVE_COLUMNS])
        pd.testing.assert_frame_equal(
            pd.read_csv(out["timing"]), timing[timing["setting"] == setting].reset_index(drop=True)
        )
    with pytest.raises(ValueError, match=r"unknown aggregate table\(s\) \['curves'\] \(known: regret, final"):
        ag.aggregate_runs(paths, INFO, {"curves": tmp_path / "x.csv"})


def test_aggregate_experiment_reads_batch_files_and_their_records(runs, tmp_path):
    out = tmp_path / "agg"
    aggregate_into(write_runs(runs, tmp_path), out)
    regret = pd.read_csv(out / "regret.csv")
    np.testing.assert_allclose(regret["mean"], ag.regret_table(runs, INFO)["mean"], rtol=1e-11)
    timing = pd.read_csv(out / "timing.csv")
    assert list(timing.columns) == ag.TIMING_COLUMNS
    assert timing["wall_seconds"].tolist() == [0.5, 1.5, 2.5, 0.5, 1.5]
    assert (
        "wall_seconds" not in regret.columns and "wall_seconds" not in pd.read_csv(out / "final.csv").columns
    )


def test_timing_has_the_optimizers_own_seconds_beside_the_totals(runs):
    records = {s: [made_up_record(k, len(t)) for k, t in enumerate(ts)] for s, ts in runs.items()}
    timing = ag.timing_table(runs, records, INFO)
    for (setting, tables), rows in zip(runs.items(), (timing[:3], timing[3:]), strict=True):
        rounds = len(tables[0])
        np.testing.assert_allclose(rows["step_seconds_sum"], 0.001 * rounds)
        np.testing.assert_allclose(rows["optimizer_seconds_sum"], 0.0004 * rounds)
        np.testing.assert_allclose(rows["optimizer_seconds_mean"], 0.0004)
        assert set(rows["setting"]) == {setting}


def test_the_optimizers_seconds_change_the_timing_table_only(runs, tmp_path):
    """regret.csv and final.csv do not read wall times: byte-identical when only they change."""
    first = [p.read_bytes() for p in aggregate_into(write_runs(runs, tmp_path / "a"), tmp_path / "agg-a")]
    slower = {s: [t.assign(optimizer_seconds=0.0009) for t in ts] for s, ts in runs.items()}
    second = [p.read_bytes() for p in aggregate_into(write_runs(slower, tmp_path / "b"), tmp_path / "agg-b")]
    assert first[:2] == second[:2] and first[2] != second[2]


@pytest.mark.parametrize("column", ["x0", "reward", "selection_bound"])
def test_a_column_the_store_does_not_keep_is_refused_before_any_file_is_read(column):
    """The store keeps what its readers read (the points, the noisy rewards and the bounds are not
    kept): asking for another column fails naming it and the columns there are."""
    with pytest.raises(ValueError, match=rf"stored runs have no column\(s\) \['{column}'\] \(they have t, "):
        read_runs({"A": ["no-such-file.npz"]}, [*ag.AGGREGATED_COLUMNS, column])
    assert set(ag.AGGREGATED_COLUMNS) <= set(READ_COLUMNS) and set(AUDITED_COLUMNS) <= set(READ_COLUMNS)


def load_batch(path: Path) -> dict[str, np.ndarray]:
    with np.load(path) as archive:
        return {name: archive[name] for name in archive.files}


def edit_array(path: Path, name: str, change) -> None:
    """Change one stored array of a batch file in place (its records, and their hash, as they were)."""
    contents = load_batch(path)
    contents[name] = change(contents[name].copy())
    np.savez_compressed(path, **contents)


def drop_array(path: Path, name: str) -> None:
    contents = load_batch(path)
    del contents[name]
    np.savez_compressed(path, **contents)


def cut_bytes(path: Path, keep: float = 0.5) -> None:
    """Cut the archive itself: its directory, at the end, is gone."""
    raw = path.read_bytes()
    path.write_bytes(raw[: int(len(raw) * keep)])


def halve_last(array: np.ndarray) -> np.ndarray:
    array[1, -1] /= 2
    return array


def rewrite_short(path: Path, rounds: int, runs: list[pd.DataFrame]) -> None:
    """Rewrite a batch by its writer with each run cut to ``rounds`` rounds and records to match, as
    a run job of a shorter horizon would have: consistent in itself, only the config can tell."""
    tables = [t.head(rounds) for t in runs]
    write_made_up_batch(path, tables, [made_up_record(k, rounds) for k in range(len(tables))])


def rewrite_non_finite(path: Path, runs: list[pd.DataFrame]) -> None:
    """Rewrite a batch by its writer with a NaN value (a faulty run): its hash holds, its values do not."""
    tables = [t.copy() for t in runs]
    tables[1].loc[1, "value"] = np.nan
    write_made_up_batch(path, tables, [made_up_record(k, len(t)) for k, t in enumerate(tables)])


@pytest.mark.parametrize(
    ("damage", "problem"),
    [
        (lambda p, r: edit_array(p, "value", halve_last), "are not the ones its runs wrote"),
        (
            lambda p, r: edit_array(p, "depth", lambda a: a.astype("f4")),
            "depth is float32 of shape (3, 5), not f8",
        ),
        (
            lambda p, r: edit_array(p, "guarantee", lambda a: a[:2]),
            "guarantee is int8 of shape (2, 5), not i1",
        ),
        (lambda p, r: drop_array(p, "optimizer_nanoseconds"), "lacks optimizer_nanoseconds"),
        (lambda p, r: drop_array(p, RECORDS), f"lacks {RECORDS}"),
        (lambda p, r: cut_bytes(p), "cannot be read (BadZipFile"),
        (lambda p, r: p.write_bytes(b"PK" + bytes(40)), "cannot be read"),
        (lambda p, r: p.unlink(), "cannot be read (FileNotFoundError"),
        (lambda p, r: rewrite_short(p, 3, r), "seed 0: 3 rounds recorded, the config 5"),
        (rewrite_non_finite, "seed 1: non-finite values"),
    ],
)
def test_a_bad_batch_file_fails_naming_it_before_anything_is_written(runs, tmp_path, damage, problem):
    """Damage of a batch file's arrays is caught by the hash its records hold; a batch its writer
    made wrong (short, non-finite) by the reader's own checks; each names the file and how to redo it."""
    paths = write_runs(runs, tmp_path)
    old = aggregate_into(paths, tmp_path / "agg")
    before = [p.read_bytes() for p in old]
    bad = Path(paths["A"][0])
    damage(bad, runs["A"])
    with pytest.raises(RunTableError) as err:
        aggregate_into(paths, tmp_path / "agg")
    msg = str(err.value)
    assert msg.startswith(f"1 batch file(s) of runs are damaged or not what is asked:\n  - {bad}: ")
    remedy = f"`rm {bad}`" if bad.exists() else "The next snakemake run makes them"  # nothing to delete
    assert problem in msg and msg.endswith(remedy)
    assert [p.read_bytes() for p in old] == before  # the previous aggregates are untouched
    assert not list((tmp_path / "agg").glob(".*"))  # and no temporary file is left


def test_every_bad_batch_is_named_in_one_error(runs, tmp_path):
    """Both settings' batches short (consistent with their records): only the config can tell, and one
    error names them all with one command that redoes them."""
    paths = write_runs(runs, tmp_path)
    for setting in paths:
        rewrite_short(Path(paths[setting][0]), 2, runs[setting])
    with pytest.raises(RunTableError) as err:
        aggregate_into(paths, tmp_path / "agg")
    msg = str(err.value)
    assert msg.startswith("2 batch file(s) of runs are damaged or not what is asked:")
    assert f"  - {paths['A'][0]}: seed 0: 2 rounds recorded, the config 5" in msg
    assert f"  - {paths['B'][0]}: seed 0: 2 rounds recorded, the config 4" in msg
    assert f"`rm {paths['A'][0]} {paths['B'][0]}`" in msg
    assert not (tmp_path / "agg").exists()


def test_depth_may_be_nan(tmp_path):
    table = {"t": [1, 2], "value": [0.1, 0.2], "step_seconds": [0.0, 0.0], "optimizer_seconds": [0.0, 0.0]}
    path = write_made_up_batch(tmp_path / "seeds0-0.npz", [table], [made_up_record(0, 2)])
    tables, records = read_runs({"s": [path]}, ["t", "depth", "value"], {"s": 2})
    assert tables["s"][0]["depth"].isna().all() and records["s"][0].seed == 0
    assert list(tables["s"][0].columns) == ["t", "depth", "value"]
    assert set(STORED_COLUMNS) == set(load_batch(Path(path))) - {RECORDS}


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
