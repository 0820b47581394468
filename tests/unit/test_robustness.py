"""Hostile input to the optimizers (issue 21): no hang, no half-updated optimizer, overflow named.

The parameters that used to hang run in a subprocess with a timeout: the timeout only turns a
regression (an endless loop) into a failure instead of a hung suite; it asserts no speed.
"""

import math
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
from support import REPO, algorithms_of, drive, garland, hierarchical_algorithms, noisy

from vhct.optimizers.base import REWARD_LIMIT, HorizonWarning, RewardRangeWarning
from vhct.optimizers.parallel import GPO, PCT, POO
from vhct.optimizers.registry import make_optimizer
from vhct.optimizers.tree import HCT, OSC, VHCT
from vhct.optimizers.uncertainty import MAX_LOG_TERM, Bernstein, ConfidenceSchedule, Hoeffding, _least_count

#: the guard against a hang: generous, a regression loops for ever
HANG_GUARD_SECONDS = 60

#: every hierarchical-bandit algorithm of the registry
ALGORITHMS = hierarchical_algorithms()


def noisy_garland(rng, scale=1.0, noise=0.05):
    """Garland plus Uniform(-noise, noise), the whole reward scaled by ``scale``."""
    return noisy(garland, rng, noise, scale)


def run_in_subprocess(code):
    """Run ``code`` in a fresh interpreter; a hang fails the test at the guard instead of hanging it."""
    script = textwrap.dedent(code)
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=HANG_GUARD_SECONDS
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize(
    "construct",
    [
        "VHCT([[0, 1]], rho=1e-30, seed=0)",
        "VHCT([[0, 1]], c=1e20, seed=0)",
        "VHCT([[0, 1]], nu=1e-20, seed=0)",
        "VHCT([[0, 1]], nu=1e-300, seed=0)",
        "HCT([[0, 1]], rho=1e-30, seed=0)",
        "HCT([[0, 1]], c=1e200, seed=0)",
        "POO([[0, 1]], 300, rho_max=1 - 1e-9, seed=0)",
        "PCT([[0, 1]], 300, rho_max=1 - 1e-9, seed=0)",
        "PCT([[0, 1]], 300, rho_max=1 - 1e-9, schedule='fixed_budget', seed=0)",
    ],
)
def test_formerly_hanging_or_crashing_parameters_run(construct):
    out = run_in_subprocess(
        f"""
        import numpy as np
        from vhct.optimizers.tree import VHCT, HCT
        from vhct.optimizers.parallel import POO, PCT
        opt = {construct}
        for _ in range(300):
            x = opt.ask()
            opt.tell(x, float(np.sin(5 * x[0])))
        print(opt.t, len(getattr(opt, "instances", [])))
        """
    )
    rounds, instances = map(int, out.split())
    assert rounds == 300
    assert instances <= 2 * 300  # POO's instances stay bounded by its horizon


@pytest.mark.parametrize(
    ("construct", "depth"),
    [
        ("VHCT([[0, 1]], rho=1e-30, seed=0)", 1),
        ("VHCT([[0, 1]], c=1e20, seed=0)", 1),
        ("VHCT([[0, 1]], nu=1e-20, seed=0)", 2),
        ("HCT([[0, 1]], c=1e20, seed=0)", 1),
    ],
)
def test_huge_thresholds_are_the_exact_least_count(construct, depth):
    """tau = min{T : SE(T) <= OE}, far beyond 2^53 where stepping by one never ended: a shallow tree."""
    opt = eval(construct)  # noqa: S307 - a literal from the parametrization
    drive(opt, noisy_garland(np.random.default_rng(0)), 300)
    assert opt.tree_depth == depth
    se, log_term = opt.uncertainty, opt._log_term
    for node in range(1, opt.size):
        tau, oe, variance = opt._tau[node], opt.oe(opt.partition.depth[node]), opt.variance(node)
        assert se(tau, variance, log_term) <= oe < se(tau - 1, variance, log_term)
    assert max(opt._tau) > 2**53


def test_a_resolution_of_zero_is_an_infinite_threshold():
    opt = HCT([[0, 1]], resolution=lambda h: 1.0 if h < 2 else 0.0, seed=0)
    drive(opt, noisy_garland(np.random.default_rng(0)), 500)
    deep = [node for node in range(opt.size) if opt.partition.depth[node] == 2]
    assert deep and all(opt._tau[node] == math.inf for node in deep) and opt.tree_depth == 2


def test_a_threshold_no_count_reaches_is_infinite():
    opt = HCT([[0, 1]], c=1e200)
    assert opt._tau[1] == math.inf and opt.uncertainty(2**1023, 0.0, opt._log_term) > opt.oe(1)
    opt.tell(opt.ask(), 0.5)
    assert opt.size == 3  # never expands, but runs


@pytest.mark.parametrize("quantifier", [Hoeffding(c=0.1), Bernstein(c=0.1), Bernstein(c=3.0, b=0.5)])
def test_least_count_is_exact_whatever_the_estimate(quantifier):
    """The bounded search ends on the least count from any starting estimate, however wrong."""
    rng = np.random.default_rng(0)
    for _ in range(40):
        oe = float(10 ** rng.uniform(-25, 0))
        variance, log_term = float(10 ** rng.uniform(-4, 0)), float(rng.uniform(1, 40))

        def se(n, v=variance, lt=log_term):
            return quantifier(n, v, lt)

        tau = quantifier.threshold(oe, variance, log_term)
        assert se(tau) <= oe and (tau == 1 or se(tau - 1) > oe)
        calls = []
        _least_count(lambda n, f=se, seen=calls: seen.append(n) or f(n), oe, tau - 0.5)
        assert tau > 2**53 or len(calls) == 2  # a right estimate (below 2^53) costs two evaluations
        for estimate in (0.0, 1.0, tau * 1e-9, tau * 3.7, tau * 1e12, math.inf, math.nan):
            assert _least_count(se, oe, estimate) == tau


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: VHCT([[0, 1]], c=1e200), r"c=1e\+200 with b=1.0 makes the uncertainty SE overflow.*c <= "),
        (lambda: HCT([[0, 1]], c=1e307), r"c=1e\+307 .*usable range for this b: 0 < c <= 2.3e\+306"),
        (lambda: Bernstein(variance_floor=1e306), r"variance_floor=1e\+306 .*usable range"),
        (lambda: VHCT([[0, 1]], nu=1e-320), r"nu=1e-320 with rho=0.5 gives c1 .*nu in \["),
        (lambda: VHCT([[0, 1]], nu=1e308), r"nu=1e\+308 with rho=0.5 gives c1"),
        (lambda: POO([[0, 1]], 10, nu_max=math.inf), "nu_max must be finite"),
    ],
)
def test_parameters_whose_arithmetic_overflows_are_rejected_naming_them(build, message):
    with pytest.raises(ValueError, match=message):
        build()


def test_a_tiny_delta_gives_a_finite_log_term_in_log_space():
    schedule = ConfidenceSchedule(delta=1e-320, c1=0.5)
    for t in (1, 5, 2**40):
        expected = math.log(schedule.t_plus(t)) - math.log(0.5) - math.log(1e-320)
        assert schedule.log_term(t) == pytest.approx(expected, rel=1e-12) and expected <= MAX_LOG_TERM
    opt = VHCT([[0, 1]], delta=1e-320, seed=0)
    drive(opt, noisy_garland(np.random.default_rng(0)), 50)
    assert opt.t == 50


@pytest.mark.parametrize("name", ALGORITHMS)
def test_a_rejected_huge_reward_changes_nothing_and_the_run_continues_identically(name):
    reference = make_optimizer(name, [[0.0, 1.0], [0.0, 1.0]], 400, seed=3)
    probed = make_optimizer(name, [[0.0, 1.0], [0.0, 1.0]], 400, seed=3)
    expected = drive(reference, noisy_garland(np.random.default_rng(9)), 400)
    reward = noisy_garland(np.random.default_rng(9))
    got = list(drive(probed, reward, 150))
    x = probed.ask()
    for bad in (1e160, -2 * REWARD_LIMIT):
        with pytest.raises(ValueError, match=r"reward .* is too large for .*nothing was recorded"):
            probed.tell(x, bad)
        assert probed.t == 150 and np.array_equal(probed.ask(), x)  # the same point is still pending
    probed.tell(x, reward(x))
    got.append(x)
    got += list(drive(probed, reward, 249))
    np.testing.assert_array_equal(np.array(got), expected)
    np.testing.assert_array_equal(probed.recommend(), reference.recommend())


@pytest.mark.parametrize("name", algorithms_of(OSC))
def test_rewards_at_the_reward_limit_never_overflow_later_updates(name):
    opt = make_optimizer(name, [[0.0, 1.0]], 200, seed=0)
    rng = np.random.default_rng(1)
    with pytest.warns(RewardRangeWarning):
        for _ in range(200):
            opt.tell(opt.ask(), float(rng.choice([-REWARD_LIMIT, REWARD_LIMIT])))
    pulled = [node for node in range(opt.size) if opt.count[node] > 0]
    assert max(opt.count) > 20 and all(math.isfinite(opt.upper_bound[node]) for node in pulled)
    assert all(math.isfinite(m2) for m2 in opt._m2)


def test_scaled_rewards_warn_once_and_stunt_the_tree():
    """Rewards scaled by 1e3 (noise 0.05 -> 50) break b = 1: one RewardRangeWarning, a shallow tree."""
    depths = {}
    for scale in (1.0, 1e3):
        opt = VHCT([[0.0, 1.0]], rho=0.75, seed=0)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            drive(opt, noisy_garland(np.random.default_rng(0), scale=scale), 3000)
        ours = [w for w in caught if issubclass(w.category, RewardRangeWarning)]
        assert len(ours) == (0 if scale == 1.0 else 1)
        if ours:
            assert "vary more than b=1.0 allows" in str(ours[0].message)
        depths[scale] = opt.tree_depth
    assert depths[1e3] < depths[1.0] - 5


def test_the_warning_says_what_the_docs_say_of_scaling():
    """Issue 51: the warning said "scale the rewards (see docs/library.md)" where the docs say scaling
    "is not a rule" (it helped on noisy Branin, hurt on the noisy camel). Now it says so, and names
    the docs' section, which exists::

        VHCT([[0, 1]], rho=0.75) told noisy Garland times 1000 -> one RewardRangeWarning
    """
    opt = VHCT([[0.0, 1.0]], rho=0.75, seed=0)
    with pytest.warns(RewardRangeWarning) as caught:
        drive(opt, noisy_garland(np.random.default_rng(0), scale=1e3), 300)
    message = str(caught[0].message)
    assert "so it is not a rule (docs/library.md, 'Scaling the values is not a rule')" in message
    assert "scale the rewards (see" not in message and "does not hold" in message
    docs = (REPO / "docs" / "library.md").read_text(encoding="utf-8")
    assert "\n**Scaling the values is not a rule.**" in docs


def test_a_wrapper_warns_once_for_all_its_instances():
    pct = PCT([[0.0, 1.0]], 2000, seed=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        drive(pct, noisy_garland(np.random.default_rng(0), scale=1e3), 2000)
    assert len([w for w in caught if issubclass(w.category, RewardRangeWarning)]) == 1
    assert len({id(gpo) for gpo in (pct.gpo, pct._previous)}) == 2  # several HCTs and GPOs ran


def test_noise_as_wide_as_b_never_warns():
    """The paper's high-noise setting, Uniform(-0.5, 0.5) with b = 1: within the assumption."""
    opt = VHCT([[0.0, 1.0]], seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RewardRangeWarning)
        drive(opt, noisy_garland(np.random.default_rng(0), noise=0.5), 2000)


def test_the_warning_comes_after_the_round_is_recorded():
    """Even with warnings turned into errors the round is complete: t counted, nothing pending."""
    opt = VHCT([[0.0, 1.0]], seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RewardRangeWarning)
        with pytest.raises(RewardRangeWarning):
            drive(opt, lambda x: float(np.random.default_rng(opt.t).choice([-5.0, 5.0])), 100)
    t = opt.t
    assert opt._pending is None and sum(opt.count) == t
    opt.tell(opt.ask(), 0.5)  # no further warning: once per optimizer
    assert opt.t == t + 1


def test_gpo_phases_are_bounded_by_the_budget():
    gpo = GPO([[0.0, 1.0]], 100, rho_max=1 - 1e-12)
    assert gpo.n_phases == 50 and gpo.phase_length == 1 and len(gpo.rhos) == 50


def test_poo_stops_adding_instances_at_its_horizon():
    poo = POO([[0.0, 1.0]], 500, rho_max=1 - 1e-9, seed=0)
    with pytest.warns(HorizonWarning, match="POO was built for horizon=500 rounds and is asked round 501"):
        drive(poo, noisy_garland(np.random.default_rng(0)), 600)
    assert all(n < 500 for n, _ in poo.doublings) and len(poo.instances) <= 2 * 500


@pytest.mark.parametrize("name", ["T-HOO", "POO"])
def test_optimizers_without_b_do_not_check_the_range(name):
    opt = make_optimizer(name, [[0.0, 1.0]], 500, seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RewardRangeWarning)
        drive(opt, noisy_garland(np.random.default_rng(0), scale=1e3), 500)
    assert opt.t == 500
