"""Aggregation across seeds: statistics, table layout, byte-stable writing; run tables checked
against their sidecars and the config before anything is written."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from vhct.pipeline import aggregate as ag
from vhct.pipeline.files import sha256
from vhct.pipeline.records import FORMAT, RunRecord
from vhct.pipeline.specs import SettingInfo
from vhct.pipeline.tables import RunTableError, read_run, read_runs, sidecar_path
from vhct.pipeline.versions import source_hash
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


def record_text(seed: int, rounds: int, wall_seconds: float = 0.5, table_sha256: str = "0" * 64) -> str:
    """A valid run record of a real-data run (f* unknown, table regret against 1), made by the
    installed run code, of a table with ``table_sha256``, as JSON."""
    run = {
        "experiment": "e",
        "setting": "s",
        "algorithm": "HCT",
        "params": {},
        "objective": "landmine",
        "objective_params": {},
        "noise": 0.0,
        "horizon": rounds,
        "seed": seed,
        "progress_every": 0,
    }
    return RunRecord(
        format=FORMAT,
        run=run,
        seed=seed,
        rounds=rounds,
        wall_seconds=wall_seconds,
        python="3.11",
        host="test",
        versions={},
        source=source_hash("run"),
        data={},
        table_sha256=table_sha256,
        f_star=None,
        regret_reference="best_observed",
        metadata={"seed": seed, "f_star": None},
    ).to_json()


def write_runs(runs: dict[str, list[pd.DataFrame]], folder: Path) -> dict[str, list[str]]:
    """Write run tables (gzip CSV, as the run jobs do) and sidecars; return their paths by setting."""
    paths: dict[str, list[str]] = {}
    for setting, tables in runs.items():
        for seed, table in enumerate(tables):
            path = folder / "runs" / setting / f"seed{seed}.csv.gz"
            path.parent.mkdir(parents=True, exist_ok=True)
            table.to_csv(path, index=False, compression={"method": "gzip", "mtime": 0})
            record = record_text(seed, len(table), 0.5 + seed, sha256(path))
            path.with_name(f"seed{seed}.json").write_text(record)
            paths.setdefault(setting, []).append(str(path))
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


def test_aggregate_experiment_reads_tables_and_sidecars(runs, tmp_path):
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
    records = {
        s: [RunRecord.from_json(record_text(k, len(t))) for k, t in enumerate(ts)] for s, ts in runs.items()
    }
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


@pytest.mark.parametrize("columns", [ag.AGGREGATED_COLUMNS, AUDITED_COLUMNS])
def test_a_run_table_made_before_the_optimizers_seconds_fails_naming_it(runs, tmp_path, columns):
    """The aggregates and the audit read it through one reader: the message names the file and says
    the run must be redone."""
    old = {
        s: [t.drop(columns="optimizer_seconds").assign(depth=1.0, selection_bound=1.0) for t in ts]
        for s, ts in runs.items()
    }
    paths = write_runs(old, tmp_path)
    with pytest.raises(RunTableError) as err:
        read_runs(paths, columns)
    msg = str(err.value)
    assert all(p in msg for ps in paths.values() for p in ps)
    assert "lacks the columns ['optimizer_seconds'] (written before these columns existed: " in msg
    assert "the run must be redone" in msg


def test_read_run_requires_the_columns(tmp_path):
    path = tmp_path / "r.csv.gz"
    pd.DataFrame({"t": [1], "value": [0.0]}).to_csv(path, index=False)
    path.with_name("r.json").write_text(record_text(0, 1, table_sha256=sha256(path)))
    with pytest.raises(RunTableError, match=r"lacks the columns \['cumulative_regret'"):
        read_run(path, ag.AGGREGATED_COLUMNS, 1)


def cut_rows(path: Path, rows: int) -> None:
    """Keep the first ``rows`` rows: still a valid gzip file, just a short table."""
    pd.read_csv(path).head(rows).to_csv(path, index=False, compression="gzip")


def cut_bytes(path: Path, keep: float = 0.5) -> None:
    """Cut the gzip file itself: decompression ends early."""
    raw = path.read_bytes()
    path.write_bytes(raw[: int(len(raw) * keep)])


def set_cell(path: Path, column: str, value) -> None:
    table = pd.read_csv(path)
    table.loc[1, column] = value
    table.to_csv(path, index=False, compression="gzip")


def rehash(path: Path) -> None:
    """Record a table's present bytes in its sidecar, as a run job that wrote this table would have:
    what is left to check is the table itself."""
    if path.exists() and sidecar_path(path).exists():
        edit_sidecar(path, table_sha256=sha256(path))


def edit_sidecar(path: Path, **changes) -> None:
    """Change top-level fields of a sidecar; ``rounds`` with the run's horizon, as a run writes them."""
    sidecar = sidecar_path(path)
    data = {**json.loads(sidecar.read_text()), **changes}
    if "rounds" in changes:
        data["run"]["horizon"] = changes["rounds"]
    sidecar.write_text(json.dumps(data))


@pytest.mark.parametrize(
    ("damage", "problem"),
    [
        (lambda p: cut_rows(p, 2), "2 rows, but the config and the sidecar say 5 rounds"),
        (cut_bytes, "cannot be read (EOFError"),
        (lambda p: p.write_bytes(b"\x1f\x8b" + bytes(40)), "cannot be read"),
        (lambda p: p.write_bytes(gzip.compress(b"")), "cannot be read (EmptyDataError"),
        (lambda p: set_cell(p, "t", 7), "column 't' is not 1..5"),
        (lambda p: set_cell(p, "cumulative_regret", np.inf), "non-finite values in the columns ['cumul"),
        (lambda p: set_cell(p, "value", np.nan), "non-finite values in the columns ['value']"),
        (lambda p: edit_sidecar(p, rounds=3), "its sidecar records 3 rounds, the config 5"),
        (lambda p: p.with_name("seed1.json").unlink(), "its sidecar"),
        (lambda p: set_cell(p, "cumulative_regret", 0.5), "its bytes (sha256"),  # not rehashed
    ],
)
def test_a_bad_run_table_fails_naming_it_before_anything_is_written(runs, tmp_path, damage, problem):
    """Damage the table's hash does not catch (its sidecar records the damaged bytes, as from a
    faulty writer) is caught by the table's own checks; any other change of its bytes by the hash."""
    paths = write_runs(runs, tmp_path)
    old = aggregate_into(paths, tmp_path / "agg")
    before = [p.read_bytes() for p in old]
    bad = Path(paths["A"][1])
    damage(bad)
    if "sha256" not in problem:
        rehash(bad)
    with pytest.raises(RunTableError) as err:
        aggregate_into(paths, tmp_path / "agg")
    msg = str(err.value)
    assert msg.startswith(f"run table {bad}: ") and problem in msg
    assert f"snakemake --forcerun {bad}" in msg and "delete it" in msg
    assert [p.read_bytes() for p in old] == before  # the previous aggregates are untouched
    assert not list((tmp_path / "agg").glob(".*"))  # and no temporary file is left


def test_every_seed_cut_short_is_rejected_against_the_config(runs, tmp_path):
    """All seeds of a setting equally short (sidecars rewritten to match): only the config can tell."""
    paths = write_runs(runs, tmp_path)
    for path in paths["B"]:
        cut_rows(Path(path), 2)
        edit_sidecar(Path(path), rounds=2, table_sha256=sha256(path))
    with pytest.raises(RunTableError, match=r"seed0\.csv\.gz: its sidecar records 2 rounds, the config 4"):
        aggregate_into(paths, tmp_path / "agg")
    for path in paths["B"]:
        edit_sidecar(Path(path), rounds=4)  # the sidecars of the real failure: the complete run's count
    with pytest.raises(RunTableError) as err:
        aggregate_into(paths, tmp_path / "agg")
    msg = str(err.value)
    assert msg.startswith("2 run tables are incomplete or damaged:")
    for path in paths["B"]:  # every bad table named, and one command redoes them all
        assert f"  - {path}: 2 rows, but the config and the sidecar say 4 rounds" in msg
    assert f"`snakemake --forcerun {' '.join(paths['B'])}`" in msg
    assert not (tmp_path / "agg").exists()


def test_depth_may_be_nan(tmp_path):
    path = tmp_path / "seed0.csv.gz"
    pd.DataFrame({"t": [1, 2], "depth": [np.nan, np.nan], "value": [0.1, 0.2]}).to_csv(path, index=False)
    path.with_name("seed0.json").write_text(record_text(0, 2, table_sha256=sha256(path)))
    table, record = read_run(path, ["t", "depth", "value"], 2)
    assert table["depth"].isna().all() and record.seed == 0


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
