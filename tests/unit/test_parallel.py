"""POO, GPO and PCT: the schedules of Grill et al. (2015) and Shang et al. (2019), and their options."""

import math

import numpy as np
import pytest
from support import drive, noisy, run_spec

from vhct.optimizers.parallel import GPO, PCT, POO, rho_grid
from vhct.optimizers.registry import make_optimizer
from vhct.pipeline.run import run_experiment

RHO_MAX = 0.9


def sine(x):
    return float(np.sin(5 * x[0]))


def dmax(rho_max):
    return math.log(2) / math.log(1 / rho_max)


def grill_condition(n, n_instances, rho_max=RHO_MAX):
    """``N <= Dmax/2 ln(n / ln n)``, written out from Grill et al.'s Algorithm 1 (undefined below n = 2)."""
    return n >= 2 and n_instances <= 0.5 * dmax(rho_max) * math.log(n / math.log(n))


def grill_schedule(rounds, rho_max=RHO_MAX):
    """Which instance (numbered in order of creation) Algorithm 1 evaluates at each round."""
    order, n, n_instances = [], 0, 1
    while len(order) < rounds:
        while grill_condition(n, n_instances, rho_max):
            for i in range(n_instances):
                order += [n_instances + i] * (n // n_instances)
            n, n_instances = 2 * n, 2 * n_instances
        order += list(range(n_instances))
        n += n_instances
    return order[:rounds]


def drive_poo(poo, rounds, seed=0):
    """Run ``rounds`` rounds; return the instance served at each round and the pass ends seen."""
    rng = np.random.default_rng(seed)
    served, pass_ends = [], []
    for t in range(1, rounds + 1):
        before = [inst.pulls for inst in poo.instances]
        x = poo.ask()
        poo.tell(x, sine(x) + rng.uniform(-0.05, 0.05))
        after = [inst.pulls for inst in poo.instances]
        before += [0] * (len(after) - len(before))  # instances that joined this round
        (index,) = [i for i in range(len(after)) if after[i] != before[i]]
        served.append(index)
        if poo.queued == 0:
            pass_ends.append((t, poo.n, poo.N, after))
    return served, pass_ends


def test_rho_grid_is_the_papers_index_range():
    grid = rho_grid(4, RHO_MAX)
    assert grid == pytest.approx([RHO_MAX ** (8 / k) for k in (3, 5, 7, 9)])
    assert grid == sorted(grid) and len(rho_grid(7, RHO_MAX)) == 7
    # i = N gives rho_max^(2N/(2N+1)), just above rho_max; i = 1 the smallest, rho_max^(2N/3)
    assert RHO_MAX < rho_grid(16, RHO_MAX)[-1] < RHO_MAX ** (32 / 34)
    assert rho_grid(16, RHO_MAX)[0] == pytest.approx(RHO_MAX ** (32 / 3))


@pytest.mark.parametrize("rounds", [100, 1000, 5000])
def test_poo_instances_and_evaluations_follow_grill_algorithm_1(rounds):
    poo = POO([[0.0, 1.0]], rounds, rho_max=RHO_MAX, seed=0)
    served, pass_ends = drive_poo(poo, rounds)

    # the exact order of evaluations, catch-ups included
    assert served == grill_schedule(rounds)
    # N instances, a power of two: one doubling per batch, each when the condition held
    assert len(poo.instances) == poo.N == 2 ** len(poo.doublings)
    for k, (n_k, n_instances_k) in enumerate(poo.doublings):
        assert n_instances_k == 2**k and grill_condition(n_k, n_instances_k)
        assert n_k % n_instances_k == 0
    # ... and no doubling was due before the last pass
    assert not grill_condition(poo.n - poo.N, poo.N)
    # every instance is the grid value of its doubling and caught up with exactly n/N of it
    assert poo.instances[0].rho == RHO_MAX and poo.instances[0].catch_up == 0
    for k, (n_k, n_instances_k) in enumerate(poo.doublings):
        batch = [inst for inst in poo.instances if inst.batch == k]
        assert [inst.rho for inst in batch] == rho_grid(n_instances_k, RHO_MAX)
        assert all(inst.catch_up == n_k // n_instances_k for inst in batch)
    # n counts evaluations: those served plus those queued; at the end of a pass all are served
    pulls = [inst.pulls for inst in poo.instances]
    assert sum(pulls) == rounds == poo.n - poo.queued
    assert max(pulls) <= poo.n // poo.N
    assert pass_ends, "no pass completed"
    for t, n, n_instances, counts in pass_ends:
        assert n == t and len(counts) == n_instances and set(counts) == {n // n_instances}


def test_poo_grid_reaches_thirty_two_instances_at_5000():
    poo = POO([[0.0, 1.0]], 5000, rho_max=RHO_MAX, seed=0)
    drive_poo(poo, 5000)
    assert poo.N == 32 and [N for _, N in poo.doublings] == [1, 2, 4, 8, 16]
    expected = sorted([RHO_MAX] + [rho for _, N in poo.doublings for rho in rho_grid(N, RHO_MAX)])
    assert sorted(inst.rho for inst in poo.instances) == pytest.approx(expected)
    assert min(inst.rho for inst in poo.instances) == pytest.approx(RHO_MAX ** (32 / 3))


def test_poo_is_deterministic_given_a_seed():
    def points(seed):  # in 2-D, where the seed decides the split dimensions
        return drive_points(POO([[0.0, 1.0]] * 2, 300, seed=seed), 300)

    assert np.array_equal(points(3), points(3)) and not np.array_equal(points(3), points(4))


@pytest.mark.parametrize(("truncation", "extra"), [("authors", 1), ("strict", 0)])
def test_poo_passes_its_truncation_to_every_t_hoo(truncation, extra):
    poo = POO([[0.0, 1.0]], 500, truncation=truncation, seed=0)
    drive_poo(poo, 500)
    for inst in poo.instances:
        hoo = inst.optimizer
        assert hoo.truncation == truncation and hoo.max_depth == hoo.truncation_depth + extra


def expected_phases(budget, rho_max=RHO_MAX):
    half = budget / 2
    return max(1, math.ceil(0.5 * dmax(rho_max) * math.log(half / math.log(half))))


def drive_points(opt, rounds, seed=0):
    """``rounds`` rounds on ``sine`` with Uniform(-0.05, 0.05) noise seeded by ``seed``; the points."""
    return drive(opt, noisy(sine, np.random.default_rng(seed), 0.05), rounds)


@pytest.mark.parametrize("candidate", ["last_point", "recommendation"])
def test_gpo_phases_rho_grid_and_what_each_phase_cross_validates(candidate):
    gpo = GPO([[0.0, 1.0]], 600, candidate=candidate, seed=0)
    points = drive_points(gpo, 600)
    length = gpo.phase_length
    assert gpo.n_phases == expected_phases(600) and length == 600 // (2 * gpo.n_phases)
    assert gpo.rhos == rho_grid(gpo.n_phases, RHO_MAX)
    assert [inst.rho for _, inst in gpo.candidates] == gpo.rhos
    for i, (point, inst) in enumerate(gpo.candidates):
        start = 2 * i * length
        # the second half of the phase evaluates the candidate, and only it
        assert np.all(points[start + length : start + 2 * length] == point) and inst.pulls == length
        if candidate == "last_point":
            np.testing.assert_array_equal(point, points[start + length - 1])
        else:
            np.testing.assert_array_equal(point, inst.optimizer.recommend())
    # after the phases, GPO exploits the best cross-validated candidate
    best = max(gpo.candidates, key=lambda c: c[1].mean_reward)[0]
    assert np.all(points[2 * gpo.n_phases * length :] == best)


def test_gpo_candidates_differ_between_last_point_and_recommendation():
    last = GPO([[0.0, 1.0]], 600, candidate="last_point", seed=0)
    rec = GPO([[0.0, 1.0]], 600, candidate="recommendation", seed=0)
    p_last, p_rec = drive_points(last, 600), drive_points(rec, 600)
    length = last.phase_length
    differ = 0
    for i, ((x_last, _), (x_rec, _)) in enumerate(zip(last.candidates, rec.candidates, strict=True)):
        # each phase's base run is the same (a fresh HCT, same seed); the point cross-validated may not be
        start = 2 * i * length
        np.testing.assert_array_equal(p_last[start : start + length], p_rec[start : start + length])
        differ += not np.array_equal(x_last, x_rec)
    assert differ > 0


def test_pct_fixed_budget_runs_one_gpo_over_the_horizon():
    pct = PCT([[0.0, 1.0]], horizon=1000, schedule="fixed_budget", seed=0)
    drive_points(pct, 10)
    gpo = pct.gpo
    drive_points(pct, 1100 - 10)  # past the horizon: still the same GPO, exploiting
    assert pct.gpo is gpo and gpo.budget == 1000 and gpo.n_phases == expected_phases(1000)
    assert len(gpo.candidates) == gpo.n_phases and gpo.candidate == "last_point"


def test_pct_anytime_restarts_gpo_in_doubling_epochs():
    pct = PCT([[0.0, 1.0]], seed=0, first_epoch=64)
    drive_points(pct, 64)
    first = pct.gpo
    drive_points(pct, 128 + 10)
    assert pct.gpo is not first and pct.gpo.budget == 256 and first.budget == 64
    assert pct.gpo.n_phases == expected_phases(256)


@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("T-HOO", {"truncation": "strict"}),
        ("T-HOO", {"truncation": "authors"}),
        ("POO", {"truncation": "strict"}),
        ("PCT", {"schedule": "fixed_budget", "candidate": "recommendation"}),
        ("PCT", {"schedule": "anytime", "candidate": "last_point"}),
    ],
)
def test_every_variant_runs_through_the_registry(name, params):
    opt = make_optimizer(name, [[0.0, 1.0]], 300, seed=0, **params)
    for key, value in params.items():
        assert getattr(opt, key) == value
    table, _ = run_experiment(run_spec(name, "garland", 300, 0, params=params))
    assert len(table) == 300 and np.all(table["regret"] >= -1e-9)


@pytest.mark.parametrize(
    ("name", "params", "message"),
    [
        ("T-HOO", {"truncation": "deep"}, r"truncation must be one of \('authors', 'strict'\)"),
        ("POO", {"truncation": None}, "truncation must be one of"),
        ("PCT", {"schedule": "doubling"}, r"schedule must be one of \('anytime', 'fixed_budget'\)"),
        ("PCT", {"candidate": "best"}, r"candidate must be one of \('last_point', 'recommendation'\)"),
        ("PCT", {"first_epoch": 1}, "first_epoch"),
    ],
)
def test_bad_choices_name_the_parameter_and_the_allowed_values(name, params, message):
    with pytest.raises(ValueError, match=message):
        make_optimizer(name, [[0.0, 1.0]], 100, **params)


def test_fixed_budget_pct_needs_the_horizon():
    with pytest.raises(ValueError, match="horizon"):
        PCT([[0.0, 1.0]], schedule="fixed_budget")
    with pytest.raises(ValueError, match="candidate"):
        GPO([[0.0, 1.0]], 100, candidate="median")
