"""The audit's verdict table (``verdicts.csv``, ``vhct.reporting.render.verdict_table``): written by the
audit beside its JSON, one row per comparison of each reading of each statement, equal to the audit
record's verdicts as its one reader (``records.read_audit``) gives them back."""

from __future__ import annotations

import math

import pandas as pd
from findings_run import COMPUTED, complete

from vhct.reporting.audit.records import AUDIT_FORMAT, Audit, Comparison, parse_audit, read_audit
from vhct.reporting.render import VERDICT_COLUMNS, write_audit


def comparison(a: str, b: str, verdict: str, category: str, effect: float, ci: tuple | None) -> dict:
    """A made-up comparison record (JSON) of ``a`` against ``b``; ``ci``: its 90 % interval, or none."""
    low, high = ci if ci is not None else (None, None)
    return Comparison(
        "garland",
        a,
        b,
        effect=effect,
        effect_name="ratio of means",
        ci_low=low,
        ci_high=high,
        ci_level=0.9 if ci is not None else None,
        verdict=verdict,
        category=category,
        n_a=20,
        n_b=20,
        mean_a=effect,
        mean_b=1.0,
        p_claimed=0.01,
        p_refuted=0.5,
        p_refuted_holm=0.5,
    ).to_json()


def reading(cid: str, verdict: str, category: str, comparisons: dict, reading_of: str | None = None) -> dict:
    """A made-up claim (a reading of ``reading_of`` when given), ``comparisons``: experiment -> list."""
    return {
        "id": cid,
        **({"reading_of": reading_of} if reading_of else {}),
        "quote": "q",
        "location": "l",
        "verdict": verdict,
        "category": category,
        "coverage": ", ".join(comparisons),
        "reason": "r",
        "experiments": [
            {"experiment": e, "verdict": verdict, "category": category, "reason": "r", "comparisons": cs}
            for e, cs in comparisons.items()
        ],
    }


def made_up_audit() -> Audit:
    """A statement read two ways that disagree, one reproduced on two experiments (one comparison
    without an interval), one inconclusive, and one decided by computation; ``summary`` its tally."""
    yes, no = ("reproduced", "reproduced"), ("not reproduced", "the opposite")
    maybe = ("inconclusive", "underpowered")
    return parse_audit(
        complete(
            {
                "format": AUDIT_FORMAT,
                "reading_flips": [],
                "flipped_claims": [],
                "sensitivity": [],
                "discrepancies": [],
                "summary": {"readings disagree": 1, "reproduced": 1, "inconclusive": 1},
                "claims": [
                    reading(
                        "R1", *yes, {"garland": [comparison("VHCT", "HCT", *yes, 0.8125, (0.75, 0.875))]}, "S"
                    ),
                    reading(
                        "R2",
                        *no,
                        {"garland": [comparison("VHCT", "BO", *no, 1.0625, (1.03125, 1.09375))]},
                        "S",
                    ),
                    reading(
                        "S2",
                        *yes,
                        {
                            "garland": [comparison("VHCT", "HCT", *yes, 0.5, (0.25, 0.75))],
                            "mnist": [
                                comparison("VHCT", "HCT", *yes, 0.625, None),
                                comparison("VHCT", "POO", *yes, 0.6875, (0.5, 0.8)),
                            ],
                        },
                    ),
                    reading(
                        "S3", *maybe, {"garland": [comparison("VHCT", "PCT", *maybe, 0.96875, (0.5, 1.5))]}
                    ),
                ],
                "computed": [COMPUTED],
            }
        )
    )


def written(audit: Audit, folder) -> tuple[Audit, pd.DataFrame]:
    """The audit written by the audit's writer (all four files), its JSON read back by the records'
    reader and its CSV by pandas."""
    paths = {ext: folder / f"audit.{ext}" for ext in ("md", "json", "html")}
    csv = folder / "verdicts.csv"
    write_audit(audit, paths["md"], paths["json"], paths["html"], csv)
    return read_audit(paths["json"]), pd.read_csv(csv, keep_default_na=False)


def same(cell, value: float | None) -> bool:
    """A number cell is the record's value to the last digit; empty where it has none (None or nan)."""
    if value is None or math.isnan(value):
        return cell == ""
    return cell != "" and float(cell) == value


def expected_rows(audit: Audit) -> list[dict]:
    """The record's verdicts, row by row, from the record alone: a reading's statement is its
    ``reading_of`` (else itself), readings in the audit's order grouped under their statements."""
    order = list(dict.fromkeys(c.claim.reading_of or c.claim.id for c in audit.claims))
    rows = []
    for statement in order:
        for claim in (c for c in audit.claims if (c.claim.reading_of or c.claim.id) == statement):
            for exp in claim.experiments:
                assert exp.comparisons, "the made-up audit gives every experiment its comparisons"
                for c in exp.comparisons:
                    rows.append(
                        {
                            "statement": statement,
                            "reading": claim.claim.id,
                            "reading_verdict": claim.verdict,
                            "reading_category": claim.category,
                            "experiment": exp.experiment,
                            "comparison": c.label,
                            "effect_name": c.effect_name,
                            "effect": c.effect,
                            "ci_level": c.ci_level,
                            "ci_low": c.ci_low,
                            "ci_high": c.ci_high,
                            "comparison_verdict": c.verdict,
                            "comparison_category": c.category,
                        }
                    )
    for computed in audit.computed:
        rows.append(
            {
                "statement": computed.claim.id,
                "reading": computed.claim.id,
                "reading_verdict": computed.verdict,
            }
        )
    return rows


def test_the_verdict_csv_is_the_audit_records_verdicts(tmp_path):
    """A made-up audit written: every (statement, reading, comparison) row of the CSV is the record's,
    effect and interval to the last digit, and the statements' verdicts are its tally."""
    record, table = written(made_up_audit(), tmp_path)
    assert tuple(table.columns) == VERDICT_COLUMNS
    expected = expected_rows(record)
    assert len(table) == len(expected)
    numbers = ("effect", "ci_level", "ci_low", "ci_high")
    for row, want in zip(table.to_dict("records"), expected, strict=True):
        for key, value in want.items():
            if key in numbers:
                assert same(row[key], value), (key, row, want)
            else:
                assert row[key] == (value or ""), (key, row, want)
    # one verdict per statement, and their counts are the audit's tally (``summary``)
    on_runs = table[table["statement"].isin({c.claim.reading_of or c.claim.id for c in record.claims})]
    by_statement = on_runs.groupby("statement", sort=False)["statement_verdict"].unique()
    assert all(len(v) == 1 for v in by_statement)
    found = by_statement.str[0].value_counts().to_dict()
    assert found == {v: n for v, n in record.summary.items() if n}
    # a statement with several readings has a row per reading under it
    disagree = by_statement[by_statement.str[0] == "readings disagree"].index
    assert len(disagree) and all(
        on_runs[on_runs["statement"] == s]["reading"].nunique() > 1 for s in disagree
    )
    # a statement checked by computation: its verdict, no effect
    computed = table[table["statement"].isin({c.claim.id for c in record.computed})]
    assert list(computed["statement_verdict"]) == [c.verdict for c in record.computed]
    assert (computed["effect"] == "").all()


def test_an_experiment_without_comparisons_keeps_its_verdict_and_a_nan_effect_is_empty(tmp_path):
    """A made-up audit: a reading none of whose comparisons ran still has a row (its verdict, no
    comparison, no effect), and a comparison whose effect is not a number has its row, the effect empty."""
    nan_comparison = Comparison(
        "garland",
        "VHCT",
        "HCT",
        verdict="inconclusive",
        category="too few seeds",
        effect_name="ratio of means",
    ).to_json()
    audit = complete(
        {
            "format": AUDIT_FORMAT,
            "reading_flips": [],
            "flipped_claims": [],
            "sensitivity": [],
            "discrepancies": [],
            "summary": {"reproduced": 1, "inconclusive": 1},
            "claims": [
                {
                    "id": "C1",
                    "quote": "q",
                    "location": "l",
                    "verdict": "reproduced",
                    "coverage": "garland",
                    "reason": "r",
                    "experiments": [
                        {"experiment": "garland", "verdict": "reproduced", "reason": "r", "comparisons": []}
                    ],
                },
                {
                    "id": "C2",
                    "quote": "q",
                    "location": "l",
                    "verdict": "inconclusive",
                    "coverage": "garland",
                    "reason": "r",
                    "experiments": [
                        {
                            "experiment": "garland",
                            "verdict": "inconclusive",
                            "reason": "r",
                            "comparisons": [nan_comparison],
                        }
                    ],
                },
            ],
        }
    )
    _, table = written(parse_audit(audit), tmp_path)
    assert list(table["statement"]) == ["C1", "C2"]
    assert list(table["comparison_verdict"]) == ["reproduced", "inconclusive"]
    assert table.loc[0, "comparison"] == "" and table.loc[0, "effect"] == ""
    assert table.loc[1, "comparison"] == "VHCT vs HCT"
    assert table.loc[1, "effect"] == "" and table.loc[1, "effect_name"] == "ratio of means"
