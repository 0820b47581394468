"""The claims of issue 37 item 4 (the paper's statements that runs can check), as shipped in
config/claims.yaml, each decided on made-up runs of known truth: reproduced where the truth lies in
its claimed region, "the opposite" where it lies in the refuting one and "no effect of the claimed
size" between its margins (where the claim has that category)."""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np
import pandas as pd
import pytest

from vhct.pipeline.records import RunSpec
from vhct.pipeline.run import run_columns, seeded_run
from vhct.reporting.audit.claims import load_claims
from vhct.reporting.audit.evaluate import evaluate_claim
from vhct.reporting.audit.kinds_one_sample import seconds_to
from vhct.reporting.audit.runs import Run
from vhct.reporting.audit.verdicts import NO_EFFECT, NOT_REPRODUCED, OPPOSITE, REPRODUCED

SEEDS, HORIZON, SPREAD = 20, 400, 0.02
#: a made-up run's regret grows like final * (t / horizon) ** power; the base power of the slopes
POWER = 0.6
#: setting -> final regret (or power), given experiment and setting
Level = Callable[[str, str], float]


def claim_of(claim_id: str):
    return next(c for c in load_claims().claims if c.id == claim_id)


def runs_of(
    claim,
    final: Level,
    power: Level | None = None,
    seconds: Level | None = None,
    rounds: Level | None = None,
    seed: int = 0,
) -> dict:
    """Runs of every setting the claim reads on every experiment it reads: per seed, cumulative regret
    final(e, s) (t / horizon) ** power(e, s), each with a small multiplicative spread (the same seeds
    in every experiment, as the pipeline runs them); each round takes seconds(e, s) (1 ms), a tenth
    of it the optimizer's own; rounds(e, s) rounds (the horizon: a setting that stopped early)."""
    rng = np.random.default_rng(seed)
    out: dict = {}
    for e in claim.experiments_read:
        out[e] = {}
        for s in claim.settings:
            n = int(rounds(e, s)) if rounds else HORIZON
            t = np.arange(1, n + 1, dtype=float)
            runs = []
            for k in range(SEEDS):
                p = (power or (lambda *_: POWER))(e, s) + SPREAD * rng.standard_normal()
                cumulative = final(e, s) * (1.0 + SPREAD * rng.standard_normal()) * (t / HORIZON) ** p
                spent = (seconds(e, s) if seconds else 1e-3) * (1.0 + SPREAD * rng.standard_normal())
                table = pd.DataFrame(
                    {
                        "t": t.astype(int),
                        "value": -np.diff(cumulative, prepend=0.0),
                        "cumulative_regret": cumulative,
                        "depth": np.full(n, 3.0),
                        "step_seconds": np.full(n, spent),
                        "optimizer_seconds": np.full(n, spent / 10),
                    }
                )
                runs.append(Run(k, table, 0.0))
            out[e][s] = runs
    return out


def decided(claim, runs, scales=None) -> tuple[str, str]:
    result = evaluate_claim(claim, runs, scales or dict.fromkeys(runs, 1.0))
    assert all(e.verdict != "not evaluated" for e in result.experiments), result.reason
    return result.verdict, result.category


def beside(claim, runs) -> tuple[str, str]:
    """The claim's verdict at its one other margin (the project's), as the audit reads it beside."""
    (margin,) = evaluate_claim(claim, runs, dict.fromkeys(runs, 1.0)).margins
    return margin.verdict, margin.category


# ---------------------------------------------------------------- the counterexample, "very easy"

EASY = ("counterexample-very-easy-fig6", "counterexample-very-easy-normalized")


@pytest.mark.parametrize("claim_id", EASY)
@pytest.mark.parametrize(
    ("factor", "expected", "at_margin"),
    [
        (0.5, (REPRODUCED, REPRODUCED), (REPRODUCED, REPRODUCED)),
        (2.0, (NOT_REPRODUCED, OPPOSITE), (NOT_REPRODUCED, OPPOSITE)),
        (0.98, (REPRODUCED, REPRODUCED), (NOT_REPRODUCED, NO_EFFECT)),
    ],
)
def test_counterexample_very_easy_on_runs_of_known_truth(claim_id, factor, expected, at_margin):
    """The counterexample's regret ``factor`` times every other function's, for every tree algorithm:
    decided with no margin, and at the project's 5 % read beside it."""
    claim = claim_of(claim_id)
    runs = runs_of(claim, lambda e, s: 100.0 * (factor if e == "counterexample" else 1.0))
    assert decided(claim, runs) == expected
    assert beside(claim, runs) == at_margin


def test_counterexample_very_easy_readings_differ_by_the_random_search_scale():
    """The same raw regret on every function: the normalized reading divides by random search's regret,
    so a counterexample whose random-search regret is a quarter of the others' is the harder one."""
    fig6, normalized = (claim_of(c) for c in EASY)
    runs = runs_of(fig6, lambda e, s: 100.0 * (0.5 if e == "counterexample" else 1.0))
    scales = {e: (0.125 if e == "counterexample" else 1.0) for e in runs}
    assert decided(fig6, runs, scales)[0] == REPRODUCED
    assert decided(normalized, runs, scales) == (NOT_REPRODUCED, OPPOSITE)


# ---------------------------------------------------------------- variance and regret: the noise sweep

LEVELS = {"noise0.01": 0.01, "": 0.05, "noise0.1": 0.1, "noise0.2": 0.2, "high-noise": 0.5}


def noise_of(experiment: str) -> float:
    """The noise half-width of a sweep experiment, by its name (garland, garland-noise0.1, ...)."""
    suffix = experiment.partition("-")[2]
    return LEVELS[suffix]


@pytest.mark.parametrize(
    ("regret", "expected"),
    [
        (lambda b: 100.0 * (1.0 + 4.0 * b), (REPRODUCED, REPRODUCED)),  # rises with the noise
        (lambda b: 100.0 * (3.0 - 4.0 * b), (NOT_REPRODUCED, OPPOSITE)),
    ],  # falls with it
)
def test_vhct_regret_rises_with_the_noise_on_runs_of_known_truth(regret, expected):
    claim = claim_of("variance-regret-positive")
    assert decided(claim, runs_of(claim, lambda e, s: regret(noise_of(e)))) == expected


def test_vhct_regret_that_rises_except_at_one_level_is_not_reproduced():
    """Monotone over every consecutive pair: a dip between 0.1 and 0.2 on DoubleSine refutes it."""
    claim = claim_of("variance-regret-positive")

    def regret(e: str, s: str) -> float:
        dip = e == "doublesine-noise0.2"
        return 100.0 * (1.0 + 4.0 * noise_of(e)) * (0.7 if dip else 1.0)

    assert decided(claim, runs_of(claim, regret)) == (NOT_REPRODUCED, OPPOSITE)


@pytest.mark.parametrize(
    ("ratio", "expected"),
    [
        (lambda b: 0.5 + b, (REPRODUCED, REPRODUCED)),  # VHCT/HCT rises with the noise: the lead shrinks
        (lambda b: 1.2 - b, (NOT_REPRODUCED, OPPOSITE)),
    ],  # the lead grows with the noise
)
def test_vhct_lead_over_hct_shrinks_with_the_noise_on_runs_of_known_truth(ratio, expected):
    claim = claim_of("variance-regret-lead-shrinks")
    runs = runs_of(claim, lambda e, s: 100.0 * (ratio(noise_of(e)) if s == "VHCT-rho0.75" else 1.0))
    assert decided(claim, runs) == expected


# ---------------------------------------------------------------- the rescaling remark


@pytest.mark.parametrize(
    ("shift", "expected"),
    [(0.0, (REPRODUCED, REPRODUCED)), (0.2, (NOT_REPRODUCED, OPPOSITE)), (-0.2, (NOT_REPRODUCED, OPPOSITE))],
)
def test_rescaling_keeps_the_rate_on_runs_of_known_truth(shift, expected):
    """The rescaled objective's regret a times f's (a rescaling of R_t alone keeps the slope), its
    slope of log R_t on log t ``shift`` above f's."""
    claim = claim_of("rescaling-keeps-the-rate")
    rescaled = {p[0] for p in claim.pairs}
    scale = {
        "garland-scale2": 2.0,
        "garland-scale0.25": 0.25,
        "himmelblau-scale890": 890.0,
        "himmelblau-scale0.25": 0.25,
    }
    assert rescaled == set(scale)
    runs = runs_of(
        claim, lambda e, s: 100.0 * scale.get(e, 1.0), lambda e, s: POWER + (shift if e in rescaled else 0.0)
    )
    assert decided(claim, runs) == expected
    comp = evaluate_claim(claim, runs).experiments[0].comparisons[0]
    assert comp.effect == pytest.approx(shift, abs=0.02) and comp.a == "VHCT-rho0.75 on garland-scale2"
    assert comp.effect_name == "mean slope difference (garland-scale2 - garland) of log R_t on log t"
    assert comp.claimed == "mean slope difference > -0.05 and mean slope difference < 0.05"


@pytest.mark.parametrize("algorithm", ["VHCT", "HCT", "T-HOO"])
def test_an_offset_alone_leaves_the_tree_algorithms_regret_unchanged(algorithm):
    """The claim's note: f + b moves every U and B by b, so the runs choose the same points (to
    rounding); the scale a is what the rescaling claim tests."""
    params = {"rho": 0.75, "nu": 1.0} if algorithm == "T-HOO" else {"rho": 0.75, "nu": 1.0, "b": 1.0}
    finals = []
    for offset in (0.0, 0.5, -3.0):
        spec = RunSpec(
            experiment="e",
            setting="s",
            algorithm=algorithm,
            params=params,
            objective="rescaled",
            objective_params={"objective": "garland", "offset": offset},
            noise=0.05,
            horizon=500,
            seed=1,
            progress_every=1000,
        )
        f, optimizer, noise = seeded_run(spec)
        finals.append(run_columns(optimizer, f, spec.horizon, noise, spec.seed)["cumulative_regret"][-1])
    assert finals == pytest.approx([finals[0]] * 3, rel=1e-9)


def test_rescaling_pairs_the_seeds_both_experiments_ran():
    """A seed either experiment lacks is left out of the paired differences (the claim's minimum
    lowered below the seeds both ran)."""
    claim = claim_of("rescaling-keeps-the-rate").model_copy(update={"min_seeds": SEEDS - 2})
    runs = runs_of(claim, lambda e, s: 100.0)
    runs["garland"]["HCT-rho0.75"] = [r for r in runs["garland"]["HCT-rho0.75"] if r.seed != 5]
    runs["garland-scale2"]["HCT-rho0.75"] = [r for r in runs["garland-scale2"]["HCT-rho0.75"] if r.seed != 7]
    result = evaluate_claim(claim, runs)
    hct = next(c for c in result.experiments[0].comparisons if c.a.startswith("HCT"))
    assert hct.n_a == SEEDS - 2 and sorted(map(int, hct.values_a)) == sorted(set(range(SEEDS)) - {5, 7})


# ---------------------------------------------------------------- the conclusion: phi(h) needed


@pytest.mark.parametrize(
    ("factor", "expected", "at_margin"),
    [
        (2.0, (REPRODUCED, REPRODUCED), (REPRODUCED, REPRODUCED)),
        (0.8, (NOT_REPRODUCED, OPPOSITE), (NOT_REPRODUCED, OPPOSITE)),
        (1.05, (REPRODUCED, REPRODUCED), (NOT_REPRODUCED, NO_EFFECT)),
    ],
)
def test_a_wrong_rho_costs_regret_on_runs_of_known_truth(factor, expected, at_margin):
    """VHCT at rho = 0.25 ``factor`` times its regret at rho = 0.5 and 0.75, on every function: with
    no margin, and at the project's 1.1 times read beside it."""
    claim = claim_of("phi-knowledge-needed-wrong-rho")
    runs = runs_of(claim, lambda e, s: 100.0 * (factor if s == "VHCT-rho0.25" else 1.0))
    assert decided(claim, runs) == expected
    assert beside(claim, runs) == at_margin


@pytest.mark.parametrize(
    ("factor", "expected", "at_margin"),
    [
        (0.5, (REPRODUCED, REPRODUCED), (REPRODUCED, REPRODUCED)),
        (1.7, (NOT_REPRODUCED, OPPOSITE), (NOT_REPRODUCED, OPPOSITE)),
        (0.975, (REPRODUCED, REPRODUCED), (NOT_REPRODUCED, NO_EFFECT)),
    ],
)
def test_knowing_phi_gives_the_best_performance_on_runs_of_known_truth(factor, expected, at_margin):
    """VHCT told phi(h) = 2/h at ``factor`` times VHCT's regret with rho = 0.75 on the counterexample:
    with no margin, and at the project's 5 % read beside it."""
    claim = claim_of("phi-knowledge-needed-counterexample")
    runs = runs_of(claim, lambda e, s: 100.0 * (factor if s == "VHCT-phi2overh" else 1.0))
    assert decided(claim, runs) == expected
    assert beside(claim, runs) == at_margin


def test_the_two_readings_of_each_statement_share_it():
    claims = {c.id: c for c in load_claims().claims}
    for statement, readings in {
        "counterexample-very-easy": EASY,
        "phi-knowledge-needed": ("phi-knowledge-needed-wrong-rho", "phi-knowledge-needed-counterexample"),
    }.items():
        assert {claims[r].reading_of for r in readings} == {statement}
        assert len({claims[r].quote for r in readings}) == 1


# ---------------------------------------------------------------- BO's days against the others' minutes

HOUR = 3600.0


def test_a_run_that_stopped_early_is_extended_at_its_last_rounds_cost():
    """Rounds costing t ms, stopped at t = 100 of 1000: measured 5.05 s, then 900 rounds at the mean of
    its last 10 (0.0955 s): a lower bound of the growing cost's true 500.5 s."""
    t = np.arange(1, 101, dtype=float)
    table = pd.DataFrame({"step_seconds": t / 1000, "optimizer_seconds": t / 2000})
    run = Run(0, table, 0.0)
    assert seconds_to(run, "step_seconds", 100) == pytest.approx(5.05)
    assert seconds_to(run, "step_seconds", 1000) == pytest.approx(5.05 + 900 * 0.0955)
    assert seconds_to(run, "optimizer_seconds", 1000) == pytest.approx((5.05 + 900 * 0.0955) / 2)
    assert seconds_to(run, "step_seconds", 1000) < float(np.arange(1, 1001).sum() / 1000)


@pytest.mark.parametrize(
    ("hours", "expected"), [(0.25, (REPRODUCED, REPRODUCED)), (3.0, (NOT_REPRODUCED, OPPOSITE))]
)
def test_the_others_take_minutes_on_runs_of_known_truth(hours, expected):
    """Every tree algorithm's run to the horizon takes ``hours``."""
    claim = claim_of("others-take-minutes")
    runs = runs_of(claim, lambda e, s: 100.0, seconds=lambda e, s: hours * HOUR / HORIZON)
    assert decided(claim, runs) == expected


@pytest.mark.parametrize(
    ("claim_id", "hours", "expected"),
    [
        ("bo-takes-hours", 2.0, (REPRODUCED, REPRODUCED)),
        ("bo-takes-hours", 0.1, (NOT_REPRODUCED, OPPOSITE)),
        ("bo-takes-days", 48.0, (REPRODUCED, REPRODUCED)),
        ("bo-takes-days", 2.0, (NOT_REPRODUCED, OPPOSITE)),
    ],
)
def test_bo_takes_hours_or_days_read_through_its_extension_to_the_horizon(claim_id, hours, expected):
    """BO stopped at a tenth of the horizon on Garland, its rounds at a cost that reaches ``hours``
    only when extended to the horizon; on Landmine and MNIST it ran the horizon at that cost."""
    claim = claim_of(claim_id)
    assert claim.experiments_read == ["garland", "landmine", "mnist"]
    runs = runs_of(
        claim,
        lambda e, s: 100.0,
        seconds=lambda e, s: hours * HOUR / HORIZON,
        rounds=lambda e, s: HORIZON // 10 if e == "garland" else HORIZON,
    )
    # another setting ran Garland's horizon (as the tree algorithms do): BO stopped before it
    runs["garland"]["VHCT-rho0.75"] = runs_of(claim, lambda e, s: 100.0)["garland"]["BO"]
    assert decided(claim, runs) == expected
    garland = evaluate_claim(claim, runs).experiments[0].comparisons[0]
    extended = f"to t = {HORIZON} (measured to t = {HORIZON // 10}, extended: a lower bound)"
    assert extended in garland.effect_name
    assert garland.effect == pytest.approx(hours * HOUR / claim.thresholds.seconds, rel=0.02)
    # a lower bound below the threshold refutes nothing: Garland alone is left open, the runs that
    # reached the horizon (Landmine, MNIST) decide
    assert garland.verdict == (REPRODUCED if expected[0] == REPRODUCED else "inconclusive"), garland.reason


@pytest.mark.parametrize(
    ("hours", "verdict"), [(2.0, (NOT_REPRODUCED, OPPOSITE)), (0.25, ("inconclusive", "underpowered"))]
)
def test_a_lower_bound_refutes_at_most_but_never_reproduces_it(hours, verdict):
    """ "At most an hour" for a setting that stopped at a tenth of the horizon: its extended time, a lower
    bound, above an hour refutes the claim; below it, it decides nothing."""
    claim = claim_of("others-take-minutes").model_copy(update={"experiments": ["garland"]})
    runs = runs_of(
        claim,
        lambda e, s: 100.0,
        seconds=lambda e, s: hours * HOUR / HORIZON,
        rounds=lambda e, s: HORIZON // 10 if s == "PCT" else HORIZON,
    )
    pct = next(c for c in evaluate_claim(claim, runs).experiments[0].comparisons if c.a == "PCT")
    assert (pct.verdict, pct.category) == verdict, pct.reason


def test_a_wall_time_reason_states_durations_not_fractions_of_the_threshold():
    """BO's 6 min per run on MNIST against "hours": the reason the audit writes (and every document
    prints) states the mean, its interval and the threshold as durations, never "/ 3600 s 0.1"."""
    claim = claim_of("bo-takes-hours")
    runs = runs_of(claim, lambda e, s: 100.0, seconds=lambda e, s: 0.1 * HOUR / HORIZON)
    result = evaluate_claim(claim, runs, dict.fromkeys(runs, 1.0))
    mnist = next(e for e in result.experiments if e.experiment == "mnist").comparisons[0]
    assert mnist.effect == pytest.approx(0.1, rel=0.02)
    assert "/ 3600 s" in mnist.effect_name  # the record keeps its unit; the printed text converts it
    duration = r"(\d+) min (\d\d) s"
    said = rf"to t = {HORIZON} is {duration}, 90% CI \[{duration}, {duration}\], against a threshold of 1 h;"
    shown = re.search(said, mnist.reason)
    assert shown is not None, mnist.reason
    mean, low, high = (60 * int(shown[i]) + int(shown[i + 1]) for i in (1, 3, 5))
    assert low <= mean <= high and abs(mean - mnist.effect * HOUR) <= 1  # 6 min, to the second
    for text in (mnist.reason, result.reason):
        assert "3600" not in text and "e-0" not in text, text
