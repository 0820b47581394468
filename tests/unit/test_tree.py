"""The OSC engine (VHCT, HCT), T-HOO, POO and PCT: invariants, protocol, argument checks."""

import math

import numpy as np
import pytest
from support import algorithms_of, drive, garland, hierarchical_algorithms, noisy

from vhct.optimizers.hoo import TruncatedHOO, truncation_depth
from vhct.optimizers.parallel import PCT, POO
from vhct.optimizers.registry import algorithm_params, make_optimizer
from vhct.optimizers.resolution import Polynomial
from vhct.optimizers.tree import HCT, OSC, VHCT, TreeSearch
from vhct.optimizers.uncertainty import Bernstein, ConfidenceSchedule, Hoeffding

#: the registry's tree searches (VHCT, HCT, T-HOO), and those with their portfolios (POO, PCT)
TREE_ALGORITHMS = algorithms_of(TreeSearch)
ALL_TREE_BASED = hierarchical_algorithms()


def bumpy(x):
    return float(np.sum(np.sin(5 * x) * (1 - np.abs(x))))


def noisy_bumpy(rng):
    """``bumpy`` plus Uniform(-0.1, 0.1) noise drawn from ``rng``."""
    return noisy(bumpy, rng, 0.1)


def check_b_invariants(opt):
    left = opt.partition.left
    for node in range(opt.size):
        u, b = opt.upper_bound[node], opt.b_value[node]
        assert b <= u
        child = left[node]
        if child < 0:
            assert b == u
        else:
            assert b == min(u, max(opt.b_value[child], opt.b_value[child + 1]))


def check_upper_bounds(opt):
    """U = mean + OE_h + SE for every pulled node, +inf for unpulled ones (exact, at the current round)."""
    for node in range(opt.size):
        if opt.count[node] == 0:
            assert math.isinf(opt.upper_bound[node])
        else:
            h = opt.partition.depth[node]
            expected = opt.mean[node] + opt.oe(h) + opt.se(node)
            assert opt.upper_bound[node] == pytest.approx(expected, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("name", TREE_ALGORITHMS)
def test_b_invariants_hold_after_random_sequences_of_rounds(name):
    rng = np.random.default_rng(42)
    for trial in range(4):
        dim = int(rng.integers(1, 4))
        opt = make_optimizer(name, [[-1.0, 1.0]] * dim, 3000, seed=trial, rho=float(rng.uniform(0.3, 0.9)))
        for _ in range(6):
            drive(opt, noisy_bumpy(rng), int(rng.integers(1, 400)))
            check_b_invariants(opt)
            if isinstance(opt, OSC):
                check_thresholds(opt)


def check_thresholds(opt):
    """After ask(), every tau is the least T with SE(T) <= OE_h at the coming round's log term."""
    opt.ask()
    for node in range(1, opt.size):
        h = opt.partition.depth[node]
        assert opt._tau[node] == opt.uncertainty.threshold(opt.oe(h), opt.variance(node), opt._log_term)
    opt.tell(opt.ask(), 0.0)


@pytest.mark.parametrize("name", algorithms_of(OSC))
def test_refresh_current_keeps_every_upper_bound_at_the_current_log_term(name):
    rng = np.random.default_rng(5)
    opt = make_optimizer(name, [[0.0, 1.0], [0.0, 1.0]], 3000, seed=1, rho=0.6, refresh="current")
    for rounds in (1, 2, 3, 30, 100, 200):
        drive(opt, noisy_bumpy(rng), rounds)
        opt.ask()  # brings the tree to the coming round
        check_upper_bounds(opt)
        x = opt.ask()
        opt.tell(x, bumpy(x))


@pytest.mark.parametrize("name", algorithms_of(OSC))
def test_refresh_paper_recomputes_every_upper_bound_at_the_rounds_t_equal_t_plus(name):
    """The complete VHCT's "if t = t+": all U at the start of rounds 2^k; between them only the
    pulled node's U moves (with the current log term), and every tau always uses the current one."""
    rng = np.random.default_rng(6)
    opt = make_optimizer(name, [[0.0, 1.0]], 3000, seed=2, rho=0.6)
    assert opt.refresh == "paper"
    changes: dict[int, set[int]] = {}
    for t in range(1, 300):
        before = list(opt.upper_bound)
        x = opt.ask()
        assert opt.t + 1 == t
        moved = {n for n, (u0, u1) in enumerate(zip(before, opt.upper_bound, strict=True)) if u0 != u1}
        changes[t] = moved
        if t == ConfidenceSchedule.t_plus(t):
            check_upper_bounds(opt)  # all exact right after the refresh
        opt.tell(x, float(rng.uniform(-0.05, 0.05)))
        h = opt.partition.depth[opt._last_pulled]
        expected = opt.mean[opt._last_pulled] + opt.oe(h) + opt.se(opt._last_pulled)
        assert opt.upper_bound[opt._last_pulled] == pytest.approx(expected, rel=1e-12)
        for node in range(1, opt.size):
            depth = opt.partition.depth[node]
            tau = opt.uncertainty.threshold(opt.oe(depth), opt.variance(node), opt._log_term)
            assert opt._tau[node] == tau
    # ask() moves U values only at the powers of two; at 2^k + 1 the log term changes but U stays
    assert {t for t, moved in changes.items() if moved} <= {1, 2, 4, 8, 16, 32, 64, 128, 256}
    assert changes[256] and not changes[257]
    current = make_optimizer(name, [[0.0, 1.0]], 3000, seed=2, rho=0.6, refresh="current")
    rng = np.random.default_rng(6)
    for t in range(1, 258):
        before = list(current.upper_bound)
        x = current.ask()
        if t in (256, 257):
            pairs = enumerate(zip(before, current.upper_bound, strict=True))
            changes[t] = {n for n, (u0, u1) in pairs if u0 != u1}
        current.tell(x, float(rng.uniform(-0.05, 0.05)))
    assert not changes[256] and changes[257]


def test_refresh_is_validated():
    with pytest.raises(ValueError, match="refresh must be one of"):
        make_optimizer("VHCT", [[0.0, 1.0]], 10, refresh="sometimes")


def test_osc_statistics_are_running_mean_and_population_variance():
    opt = VHCT([[0.0, 1.0]], rho=0.5, seed=0)
    rng = np.random.default_rng(1)
    rewards: dict[int, list[float]] = {}
    for _ in range(500):
        x = opt.ask()
        r = float(rng.normal(scale=0.2))  # within the range b = 1 assumes (no RewardRangeWarning)
        opt.tell(x, r)
        rewards.setdefault(opt._last_pulled, []).append(r)
    for node, rs in rewards.items():
        assert opt.count[node] == len(rs)
        assert opt.mean[node] == pytest.approx(np.mean(rs))
        assert opt.variance(node) == pytest.approx(np.var(rs))


def test_osc_expands_a_leaf_exactly_when_pulls_reach_the_threshold():
    opt = HCT([[0.0, 1.0]], rho=0.5, seed=0)
    rng = np.random.default_rng(3)
    for _ in range(300):
        x = opt.ask()
        node = opt._path[-1]
        was_leaf = opt.partition.is_leaf(node)
        opt.tell(x, float(rng.uniform()))
        if was_leaf:
            assert opt.partition.is_leaf(node) == (opt.count[node] < opt._tau[node])
    # the traversal path only passes nodes whose T >= tau, and stops at a leaf or a node below its threshold
    path = opt._descend()
    for node in path[1:-1]:
        assert opt.count[node] >= opt._tau[node]
    end = path[-1]
    assert opt.partition.is_leaf(end) or opt.count[end] < opt._tau[end]
    assert opt.count[0] == 0  # the root is never pulled


def test_traversal_report_describes_the_next_path():
    opt = VHCT([[0.0, 1.0]], rho=0.75, seed=0)
    drive(opt, noisy_bumpy(np.random.default_rng(0)), 700)
    report = opt.traversal_report()
    x = opt.ask()
    assert [row["depth"] for row in report] == list(range(len(report)))
    assert report[-1]["depth"] == opt.partition.depth[opt._path[-1]]
    np.testing.assert_array_equal(x, opt.partition.centre(opt._path[-1]))
    for row in report:
        assert row["resolution"] == pytest.approx(0.75 ** row["depth"])
        assert row["b_value"] <= row["upper_bound"]


def test_vhct_goes_deeper_than_hct_under_low_noise():
    depths = {}
    for name in ("VHCT", "HCT"):
        opt = make_optimizer(name, [[0.0, 1.0]], 3000, seed=0, rho=0.75)
        drive(opt, noisy(garland, np.random.default_rng(0), 0.05), 3000)
        depths[name] = opt.tree_depth
    assert depths["VHCT"] > depths["HCT"]


def test_polynomial_descriptor_runs_on_the_counterexample():
    def g(x):
        return 1.0 if x[0] == 0 else 1 + 1 / math.log(x[0])

    opt = VHCT([[0.0, 1 / math.e]], rho=0.75, resolution={"kind": "polynomial", "a": 2, "p": 1}, seed=0)
    assert isinstance(opt.resolution, Polynomial)
    drive(opt, noisy(g, np.random.default_rng(0), 0.05), 2000)
    check_b_invariants(opt)
    assert g(opt.recommend()) > 0.7


def test_custom_callable_resolution_and_quantifier():
    opt = OSC(
        [[0.0, 1.0]],
        resolution=lambda h: 1.0 / (h + 1),
        uncertainty=Hoeffding(c=0.2),
        schedule=ConfidenceSchedule(delta=0.05, c1=1.0),
        seed=0,
    )
    drive(opt, noisy_bumpy(np.random.default_rng(0)), 500)
    check_b_invariants(opt)
    with pytest.raises(ValueError, match="resolution"):
        OSC(
            [[0.0, 1.0]],
            resolution=lambda h: -1.0,
            uncertainty=Bernstein(),
            schedule=ConfidenceSchedule(),
        )


@pytest.mark.parametrize("name", ALL_TREE_BASED)
def test_same_seed_same_points_different_seed_different_points(name):
    def points(seed):
        opt = make_optimizer(name, [[0.0, 1.0], [-2.0, 2.0]], 500, seed=seed)
        return drive(opt, noisy_bumpy(np.random.default_rng(0)), 300), opt.recommend()

    a, rec_a = points(7)
    b, rec_b = points(7)
    c, _ = points(8)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(rec_a, rec_b)
    assert not np.array_equal(a, c)


@pytest.mark.parametrize("name", ALL_TREE_BASED)
def test_points_stay_in_the_domain(name):
    domain = np.array([[-3.0, -1.0], [10.0, 20.0]])
    opt = make_optimizer(name, domain, 400, seed=1)
    drive(opt, noisy_bumpy(np.random.default_rng(1)), 400)
    x = opt.recommend()
    assert np.all(x >= domain[:, 0]) and np.all(x <= domain[:, 1])


@pytest.mark.parametrize("name", ALL_TREE_BASED)
def test_protocol_errors(name):
    opt = make_optimizer(name, [[0.0, 1.0]], 100, seed=0)
    with pytest.raises(ValueError, match="without a pending ask"):
        opt.tell([0.5], 1.0)
    x = opt.ask()
    np.testing.assert_array_equal(opt.ask(), x)  # asking again returns the same pending point
    for bad in (float("nan"), float("inf"), "abc"):
        with pytest.raises(ValueError, match="reward"):
            opt.tell(x, bad)
    with pytest.raises(ValueError, match="pending point"):
        opt.tell(x + 0.1, 1.0)
    opt.tell(x, 1.0)
    assert opt.t == 1


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"domain": []}, "domain"),
        ({"domain": [[1.0, 0.0]]}, "inverted"),
        ({"domain": [[0.0, 0.0]]}, "empty or inverted"),
        ({"rho": 0.0}, "rho"),
        ({"rho": 1.0}, "rho"),
        ({"nu": 0.0}, "nu"),
        ({"c": -1.0}, "c must"),
        ({"delta": 0.0}, "delta"),
        ({"delta": 1.0}, "delta"),
        ({"b": 0.0}, "b must"),
        ({"split": "diagonal"}, "split"),
    ],
)
@pytest.mark.parametrize("factory", [VHCT, HCT])
def test_osc_argument_errors_name_the_argument(factory, kwargs, message):
    args = {"domain": [[0.0, 1.0]], **kwargs}
    with pytest.raises(ValueError, match=message):
        factory(**args)


def test_other_argument_errors():
    with pytest.raises(ValueError, match="rho"):
        TruncatedHOO([[0, 1]], 100, rho=1.5)
    with pytest.raises(ValueError, match="horizon"):
        TruncatedHOO([[0, 1]], 0)
    with pytest.raises(ValueError, match="rho_max"):
        POO([[0, 1]], 100, rho_max=1.0)
    with pytest.raises(ValueError, match="nu_max"):
        PCT([[0, 1]], nu_max=0)
    with pytest.raises(ValueError, match="unknown algorithm"):
        make_optimizer("SOO", [[0, 1]], 10)
    with pytest.raises(ValueError, match="does not accept"):
        make_optimizer("VHCT", [[0, 1]], 10, rho_max=0.9)
    assert {"rho", "nu", "c", "delta", "b", "resolution", "split"} <= algorithm_params("VHCT")
    assert algorithm_params("POO") == {"rho_max", "nu_max", "split", "truncation"}


@pytest.mark.parametrize(("truncation", "extra"), [("authors", 1), ("strict", 0)])
def test_truncated_hoo_depth_and_path_credit(truncation, extra):
    """Truncation "authors" splits leaves while depth <= H (reaching H + 1), "strict" while depth < H."""
    opt = TruncatedHOO([[0.0, 1.0]], 1000, rho=0.5, truncation=truncation, seed=0)
    assert (
        opt.truncation_depth
        == truncation_depth(1000, 1.0, 0.5)
        == math.ceil(0.5 * math.log(1000) / math.log(2))
    )
    assert opt.max_depth == opt.truncation_depth + extra
    drive(opt, noisy_bumpy(np.random.default_rng(0)), 1000)
    assert opt.tree_depth == opt.max_depth
    assert opt.count[0] == 1000  # every round credits the root
    for node in range(opt.size):
        child = opt.partition.left[node]
        if child >= 0 and opt.count[node] > 0:
            # a node's pulls are its own (it was a leaf once) plus its children's
            assert opt.count[node] in (
                opt.count[child] + opt.count[child + 1],
                opt.count[child] + opt.count[child + 1] + 1,
            )
    check_b_invariants(opt)


def test_t_hoo_truncations_differ_only_below_depth_h():
    """Same seed: identical rounds until the authors' tree first pulls a node at depth H + 1."""
    runs = {}
    for truncation in ("authors", "strict"):
        opt = TruncatedHOO([[0.0, 1.0]], 2000, rho=0.5, truncation=truncation, seed=0)
        rng = np.random.default_rng(1)
        depths, points = [], []
        for _ in range(2000):
            x = opt.ask()
            opt.tell(x, bumpy(x) + rng.uniform(-0.1, 0.1))
            depths.append(opt.pulled_depth)
            points.append(x[0])
        runs[truncation] = (opt, depths, points)
    (_, a_depths, a_points), (strict, s_depths, s_points) = runs["authors"], runs["strict"]
    h = strict.truncation_depth
    assert max(s_depths) == h and max(a_depths) == h + 1
    first_deep = a_depths.index(h + 1)
    assert a_points[:first_deep] == s_points[:first_deep]
    assert a_points[first_deep] != s_points[first_deep]


# ---------------------------------------------------------------- re-expansion (the authors' library)


def _wavy(x, rng):
    return float(np.sin(13 * x[0]) * np.cos(7 * x[1]) * 0.5 + 0.5 + rng.uniform(-0.05, 0.05))


def _run_points(factory, rounds, **kwargs):
    """The points of a deterministic 2-D run (seeded split and noise) and the optimizer after it."""
    opt = factory([[0.0, 1.0], [0.0, 1.0]], rho=0.75, seed=5, **kwargs)
    rng = np.random.default_rng(11)
    out = []
    for _ in range(rounds):
        x = opt.ask()
        out.append(x.copy())
        opt.tell(x, _wavy(x, rng))
    return np.array(out), opt


#: sha256 of the 1500 points (rounded to 12 decimals) of ``_run_points`` before ``reexpand`` existed
#: (commit 22de3f4): VHCT, HCT
POINTS_BEFORE_REEXPAND = {
    "VHCT": "ae0d2a192e70be1a7f3ffe15d4cfd1bdaae01ee84d10c4edc224ca07e9525fda",
    "HCT": "af496af3263766d32e7b46064d51291b2f277a7dc130d9599b2fe9b6c3583d1d",
}


@pytest.mark.parametrize("factory", [VHCT, HCT])
def test_reexpand_off_gives_the_points_of_before(factory):
    import hashlib

    points, _ = _run_points(factory, 1500, reexpand=False)
    digest = hashlib.sha256(np.round(points, 12).tobytes()).hexdigest()
    assert digest == POINTS_BEFORE_REEXPAND[factory.__name__]


@pytest.mark.parametrize("factory", [VHCT, HCT])
def test_reexpand_on_expands_an_internal_node_again_and_drops_its_subtree(factory):
    """As PyXAB 0.3.0 does: once the traversal stops at an internal node (tau grew past its count)
    and its count reaches tau, the node gets two fresh leaves; its old subtree is unreachable. Until
    the first such round the runs with and without re-expansion coincide."""
    on = factory([[0.0, 1.0], [0.0, 1.0]], rho=0.75, seed=5, reexpand=True)
    rng = np.random.default_rng(11)
    for _ in range(3000):
        x = on.ask()
        node = on._path[-1]
        old_left = on.partition.left[node]
        on.tell(x, _wavy(x, rng))
        if old_left >= 0 and on.partition.left[node] != old_left:
            break
    else:
        pytest.fail("no internal node was expanded again in 3000 rounds")
    new = on.partition.left[node]
    assert new > old_left and on.count[new] == on.count[new + 1] == 0
    assert on.b_value[new] == on.b_value[new + 1] == math.inf
    reachable, stack = set(), [0]
    while stack:
        n = stack.pop()
        reachable.add(n)
        if on.partition.left[n] >= 0:
            stack += [on.partition.left[n], on.partition.left[n] + 1]
    assert old_left not in reachable and old_left + 1 not in reachable
    check_b_invariants(on)
    # the same run without re-expansion: identical points up to round t, then it keeps the subtree
    t = on.t
    before_on, _ = _run_points(factory, t, reexpand=True)
    off_points, off = _run_points(factory, t, reexpand=False)
    assert np.array_equal(before_on, off_points)
    assert off.partition.left[node] == old_left


def test_reexpand_is_validated():
    with pytest.raises(ValueError, match="reexpand must be true or false"):
        VHCT([[0.0, 1.0]], reexpand="yes")
