"""The questions beyond the paper (src/vhct/resources/beyond.yaml): two-sided answers with the
audit's tests, capped settings labelled with their round, the audit's separate part and the
findings' section rendered from the audit JSON."""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml
from support import made_up_provenance, reseal
from test_audit import OWN_SHARE, make_run, runs_of

from vhct.pipeline.layout import AUDIT_JSON
from vhct.reporting import stats
from vhct.reporting.audit.beyond import evaluate_question, run_beyond
from vhct.reporting.audit.claims import BEYOND_PATH, ClaimsError, load_beyond
from vhct.reporting.audit.records import (
    AUDIT_FORMAT,
    Audit,
    AuditContext,
    Comparison,
    audit_json,
    parse_audit,
)
from vhct.reporting.render import format_number, render_findings, render_markdown, write_audit

BEYOND_FIGURE = "beyond_baselines"
PROV = made_up_provenance()


def beyond_lines(audit, figures) -> list[str]:
    """The findings' section on the questions beyond the paper, rendered by the one renderer."""
    text = render_findings(audit, PROV, {}, figures, "figures")
    return text[text.index("## Beyond the paper") : text.index("## Figures")].split("\n")[2:]


SEEDS = 20
BEYOND = load_beyond()
QUESTION = next(q for q in BEYOND.questions if q.id == "vhct-vs-random")


def sample(mean: float, seed: int, n: int = SEEDS, sd: float = 4.0) -> np.ndarray:
    return np.random.default_rng(seed).normal(mean, sd, n)


def answer(exp_runs: dict, question=QUESTION, experiment: str = "garland") -> dict:
    result = evaluate_question(question, {experiment: exp_runs})
    return next(e for e in result.experiments if e.experiment == experiment)


@pytest.mark.parametrize(
    ("mean_a", "mean_b", "expected"),
    [
        (60.0, 100.0, "VHCT-rho0.75 better"),
        (100.0, 60.0, "Random better"),
        (100.0, 100.0, "no significant difference"),
        # 3% lower: real but inside the 5% margin, which sits inside the test
        (97.0, 100.0, "no significant difference"),
    ],
)
def test_a_question_is_answered_in_both_directions(mean_a, mean_b, expected):
    row = answer(
        {"VHCT-rho0.75": runs_of(sample(mean_a, 1, sd=0.5)), "Random": runs_of(sample(mean_b, 2, sd=0.5))}
    )
    assert row.verdict == expected
    c = row.comparison
    assert c.effect == pytest.approx(c.mean_a / c.mean_b)
    assert c.p_claimed_holm is not None and c.p_refuted_holm is not None
    assert c.label in row.reason


def test_both_directions_of_every_experiment_are_one_holm_family():
    q = QUESTION.model_copy(update={"experiments": ["e1", "e2"]})
    runs = {
        "e1": {"VHCT-rho0.75": runs_of(sample(90.0, 3, sd=8.0)), "Random": runs_of(sample(100.0, 4, sd=8.0))},
        "e2": {"VHCT-rho0.75": runs_of(sample(60.0, 5)), "Random": runs_of(sample(100.0, 6))},
    }
    rows = evaluate_question(q, runs).experiments
    comps = [r.comparison for r in rows]
    raw = [p for c in comps for p in (c.p_claimed, c.p_refuted)]
    adjusted = stats.holm(raw)
    assert [p for c in comps for p in (c.p_claimed_holm, c.p_refuted_holm)] == pytest.approx(adjusted)
    assert rows[1].verdict == "VHCT-rho0.75 better"
    assert "Holm over the 4 one-sided tests" in rows[1].reason


def test_a_capped_baseline_is_compared_at_its_last_round_and_says_so():
    full = [make_run(s, 100.0 + s, horizon=30, seconds=1e-3) for s in range(SEEDS)]
    capped = [make_run(s, 300.0 + s, horizon=12, seconds=0.5) for s in range(SEEDS)]
    row = answer({"VHCT-rho0.75": full, "GP-Optuna": capped}, QUESTION.model_copy(update={"b": "GP-Optuna"}))
    c = row.comparison
    assert (c.round, c.horizon, c.early) == (12, 30, True)
    assert c.label == "VHCT-rho0.75 vs GP-Optuna at t = 12 of 30"
    assert row.reason.startswith(c.label)
    # regret read at round 12 of each side (make_run grows linearly: final * 12 / horizon)
    assert c.mean_a == pytest.approx(np.mean([(100.0 + s) * 12 / 30 for s in range(SEEDS)]))
    assert c.mean_b == pytest.approx(np.mean([300.0 + s for s in range(SEEDS)]))
    assert row.verdict == "VHCT-rho0.75 better"
    # cost: the optimizer's own seconds per round (a, b) and the whole round's (a_total, b_total)
    own = {"a": OWN_SHARE * 1e-3, "b": OWN_SHARE * 0.5}
    assert row.cost == pytest.approx({**own, "a_total": 1e-3, "b_total": 0.5})


def test_too_few_seeds_missing_experiment_and_missing_setting():
    few = answer({"VHCT-rho0.75": runs_of([1.0, 2.0]), "Random": runs_of([5.0, 6.0])})
    assert few.verdict == "inconclusive (too few seeds)" and "too few seeds" in few.reason
    assert few.cost is not None
    result = evaluate_question(QUESTION, {"garland": {"VHCT-rho0.75": runs_of(sample(1.0, 1))}})
    by = {e.experiment: e for e in result.experiments}
    assert by["landmine"].verdict == "not evaluated" and "not in this config" in by["landmine"].reason
    assert by["garland"].verdict == "not evaluated" and "Random not run" in by["garland"].reason
    # no evaluated comparison at all: the audit gets no beyond part
    assert run_beyond(BEYOND, {"garland": {"VHCT-rho0.75": runs_of(sample(1.0, 1))}}) is None


def test_the_shipped_questions_pit_vhct_and_hct_against_every_baseline():
    pairs = {(q.a, q.b) for q in BEYOND.questions}
    for a in ("VHCT-rho0.75", "HCT-rho0.75"):
        for b in ("Random", "TPE", "CMA-ES", "GP-Optuna", "BO"):
            assert (a, b) in pairs
    assert all(q.round == "common" and q.alpha == 0.05 for q in BEYOND.questions)


@pytest.mark.parametrize(
    ("mutate", "key"),
    [
        (lambda d: d["questions"][0].pop("b"), "questions/0"),
        (lambda d: d["questions"][1].update(b=d["questions"][1]["a"]), "questions/1/b"),
        (lambda d: d["questions"][2].update(id=d["questions"][0]["id"]), "questions/2/id"),
        (lambda d: d["defaults"].update(alpha=2), "defaults/alpha"),
    ],
)
def test_a_malformed_beyond_file_names_the_key(tmp_path, mutate, key):
    doc = yaml.safe_load(BEYOND_PATH.read_text(encoding="utf-8"))
    mutate(doc)
    path = tmp_path / "beyond.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    with pytest.raises(ClaimsError, match=f"key {key}"):
        load_beyond(path)


def made_up_audit() -> Audit:
    """An audit with a beyond part from made-up samples (one planted effect, one capped setting)."""
    runs = {
        "garland-beyond": {
            "VHCT-rho0.75": [make_run(s, 60.0 + s % 3, horizon=30) for s in range(SEEDS)],
            "Random": [make_run(s, 100.0 + s % 3, horizon=30, seconds=2e-4) for s in range(SEEDS)],
            "BO": [make_run(s, 8.0 + s % 3, horizon=6, seconds=0.8) for s in range(SEEDS)],
        }
    }
    questions = [q.model_copy(update={"experiments": ["garland-beyond"]}) for q in BEYOND.questions]
    beyond = BEYOND.model_copy(update={"questions": questions})
    part = run_beyond(beyond, runs)
    return Audit(
        format=AUDIT_FORMAT,
        context=AuditContext(experiments={}),
        summary={},
        flipped_claims=[],
        reading_flips=[],
        rules={"footing": "made up"},
        claims=[],
        sensitivity=[],
        discrepancies=[],
        conditions={},
        beyond=part,
    )


def test_the_findings_section_is_rendered_from_the_audit_json(tmp_path):
    audit = made_up_audit()
    write_audit(audit, tmp_path / "audit.md", tmp_path / "audit.json")
    data = json.loads((tmp_path / "audit.json").read_text(encoding="utf-8"))
    questions = data["beyond"]["questions"]  # each answer embeds its question's record
    rows = {(q["question"]["id"], e["experiment"]): e for q in questions for e in q["experiments"]}
    bo = Comparison.from_json(rows[("vhct-vs-bo", "garland-beyond")]["comparison"])
    text = "\n".join(beyond_lines(parse_audit(data), [tmp_path / f"{BEYOND_FIGURE}.png"]))
    assert "| Does VHCT beat random search? | garland-beyond | final (t = 30) |" in text
    assert "VHCT-rho0.75 better" in text
    # BO capped at 6 rounds: compared there, labelled, and better than VHCT at its own horizon
    assert rows[("vhct-vs-bo", "garland-beyond")]["verdict"] == "BO better"
    assert "| VHCT vs BO (GPyOpt) | garland-beyond | t = 6 of 30 |" in text
    assert f"{bo.effect:.4g}" in text and "BO better" in text
    assert f"[{BEYOND_FIGURE}](figures/{BEYOND_FIGURE}.png)" in text
    # both costs, each column saying which: the optimizer's own (OWN_SHARE of the round), the total
    assert "| optimizer s/round (ask + tell) A / B | total s/round (with the objective) A / B |" in text
    own, total = (format_number(x * 1e-3) + " / " + format_number(x * 0.8) for x in (OWN_SHARE, 1.0))
    assert f"| {own} | {total} |" in text
    # the 8 questions whose settings the made-up runs lack (HCT, TPE, CMA-ES, GP-Optuna) are counted
    assert "Not evaluated: 8 question-experiment pairs" in text
    # the audit's own Markdown has the section after the claims, with the same rows
    md = (tmp_path / "audit.md").read_text(encoding="utf-8")
    assert "## Beyond the paper" in md and "| t = 6 of 30 |" in md


def test_without_a_beyond_part_the_sections_say_so_in_one_line():
    audit = made_up_audit().model_copy(update={"beyond": None})
    lines = [line for line in beyond_lines(audit, []) if line]
    assert lines == ["No question beyond the paper was evaluated: the run's configuration runs no baseline."]
    assert "No question beyond the paper was evaluated" in render_markdown(audit)
    # no figure link when the figure was not shipped
    assert BEYOND_FIGURE not in "\n".join(beyond_lines(made_up_audit(), []))


def test_the_shipped_document_has_the_section_after_the_claims(tmp_path):
    """render() of a shipped run: one line without a beyond part; with one, its table and the figure."""
    from findings_run import made_up_run

    from vhct.reporting import findings, ship

    results, figures = made_up_run(tmp_path)
    docs = tmp_path / "docs"
    ship.ship(results, figures, docs)
    before = text = (docs / findings.DOCUMENT).read_text(encoding="utf-8")
    section = text[text.index("## Beyond the paper") :]
    assert text.index("## Verdicts") < text.index("## Beyond the paper")
    assert (
        section.split("\n")[2]
        == "No question beyond the paper was evaluated: the run's configuration runs no baseline."
    )
    path = docs / findings.DATA_DIR / AUDIT_JSON
    shipped = json.loads(path.read_text(encoding="utf-8"))
    beyond = json.loads(audit_json(made_up_audit()))["beyond"]
    path.write_text(json.dumps({**shipped, "beyond": beyond}), encoding="utf-8")
    reseal(docs / findings.DATA_DIR)
    (docs / findings.FIGURES_DIR / f"{BEYOND_FIGURE}.png").write_bytes(
        next(figures.glob("*.png")).read_bytes()
    )
    text = findings.render(docs)
    section = text[text.index("## Beyond the paper") : text.index("## Figures")]
    assert "| VHCT vs BO (GPyOpt) | garland-beyond | t = 6 of 30 |" in section
    assert f"]({findings.FIGURES_DIR}/{BEYOND_FIGURE}.png)" in section
    # the paper's verdicts, headline and summary do not read the beyond part: all before it is unchanged
    assert text[: text.index("## Beyond the paper")] == before[: before.index("## Beyond the paper")]


def test_the_question_rule_keeps_its_level_on_samples_of_known_truth():
    """Fast calibration (benchmarks/beyond_calibration.py has the full table): with every experiment at
    a side's margin, a false "better" stays within alpha's Monte Carlo bound; without Holm over the
    question's 4 experiments it would be about 1 - 0.95**4 = 0.19."""
    from calibration import binomial_bound, question_rates  # benchmarks/calibration.py

    repetitions = 100
    r = question_rates(20, "normal", repetitions, seed=1)
    bound = binomial_bound(BEYOND.defaults.alpha, repetitions)
    assert r["false A"] <= bound and r["false B"] <= bound and r["identical"] <= bound
