"""Geometry of the binary hierarchical partition."""

import numpy as np
import pytest

from vhct.optimizers.partition import BoxPartition, midpoint


def _grow(partition: BoxPartition, rng: np.random.Generator, splits: int) -> None:
    for _ in range(splits):
        leaves = [k for k in range(len(partition)) if partition.is_leaf(k)]
        partition.split(int(rng.choice(leaves)))


@pytest.mark.parametrize("split", ["random", "longest"])
def test_children_halve_the_parent_and_tile_it(split):
    domain = [[-5.0, 5.0], [0.0, 1.0], [2.0, 3.0]]
    partition = BoxPartition(domain, split=split, seed=1)
    _grow(partition, np.random.default_rng(0), 60)
    for node in range(len(partition)):
        if partition.is_leaf(node):
            continue
        left = partition.left[node]
        right = left + 1
        lo, hi = partition.lower(node), partition.upper(node)
        # exactly one dimension is cut, at its midpoint
        cut = np.flatnonzero(partition.upper(left) != hi)
        assert cut.size == 1
        axis = cut[0]
        mid = 0.5 * (lo[axis] + hi[axis])
        assert partition.upper(left)[axis] == mid and partition.lower(right)[axis] == mid
        np.testing.assert_array_equal(partition.lower(left), lo)
        np.testing.assert_array_equal(partition.upper(right), hi)
        # volumes add up, the centre lies inside
        vol = np.prod(hi - lo)
        v_l = np.prod(partition.upper(left) - partition.lower(left))
        v_r = np.prod(partition.upper(right) - partition.lower(right))
        assert v_l == pytest.approx(vol / 2) and v_r == pytest.approx(vol / 2)
        # (h, i) -> (h+1, 2i-1), (h+1, 2i)
        h, i = partition.depth[node], partition.index[node]
        assert (partition.depth[left], partition.index[left]) == (h + 1, 2 * i - 1)
        assert (partition.depth[right], partition.index[right]) == (h + 1, 2 * i)
        assert partition.parent[left] == node and partition.parent[right] == node


def test_leaves_at_one_depth_tile_the_domain():
    partition = BoxPartition([[0.0, 1.0], [0.0, 2.0]], split="random", seed=3)
    frontier = [0]
    for _ in range(5):
        nxt = []
        for node in frontier:
            nxt.extend(partition.split(node))
        frontier = nxt
    total = sum(np.prod(partition.upper(k) - partition.lower(k)) for k in frontier)
    assert total == pytest.approx(2.0)
    centres = np.array([partition.centre(k) for k in frontier])
    assert np.unique(centres, axis=0).shape[0] == len(frontier)


def test_centre_is_cell_midpoint_and_root_is_domain_centre():
    partition = BoxPartition([[1.0, 3.0], [-2.0, 0.0]], split="longest")
    np.testing.assert_array_equal(partition.centre(0), [2.0, -1.0])
    left, right = partition.split(0)
    np.testing.assert_array_equal(partition.centre(left), [1.5, -1.0])
    np.testing.assert_array_equal(partition.centre(right), [2.5, -1.0])


def test_longest_split_is_deterministic_lowest_index_on_ties():
    partition = BoxPartition([[0.0, 1.0], [0.0, 1.0], [0.0, 4.0]], split="longest")
    left, _ = partition.split(0)  # longest is dim 2
    assert partition.upper(left)[2] == 2.0
    left2, _ = partition.split(left)  # now dims 0, 1, 2 have sides 1, 1, 2 -> dim 2 again
    assert partition.upper(left2)[2] == 1.0
    left3, _ = partition.split(left2)  # all sides 1: tie, lowest index 0
    assert partition.upper(left3)[0] == 0.5


def test_random_split_uses_every_dimension_and_is_seeded():
    def axes(seed):
        p = BoxPartition([[0.0, 1.0]] * 3, split="random", seed=seed)
        node, out = 0, []
        for _ in range(60):
            left, _ = p.split(node)
            out.append(int(np.flatnonzero(p.upper(left) != p.upper(node))[0]))
            node = left
        return out

    assert axes(5) == axes(5)
    assert axes(5) != axes(6)
    assert set(axes(5)) == {0, 1, 2}


def test_storage_grows_beyond_initial_capacity():
    partition = BoxPartition([[0.0, 1.0]], seed=0)
    node = 0
    for _ in range(400):
        node, _ = partition.split(node)
    assert len(partition) == 801
    assert partition.depth[node] == 400
    assert partition.lower(node)[0] == 0.0


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="split"):
        BoxPartition([[0, 1]], split="widest")
    with pytest.raises(ValueError, match="inverted"):
        BoxPartition([[1, 0]])
    with pytest.raises(ValueError, match="already split"):
        p = BoxPartition([[0, 1]])
        p.split(0)
        p.split(0)


def test_midpoints_near_the_float_maximum_are_finite_and_inside():
    big = np.finfo(float).max
    for domain in ([[-big, big]], [[big / 2, big]], [[-big, big], [0.0, 1.0]]):
        for split in ("random", "longest"):
            part = BoxPartition(domain, split=split, seed=0)
            leaves = [0]
            for _ in range(40):
                leaves += list(part.split(leaves.pop(0)))
            for node in range(len(part)):
                c = part.centre(node)
                assert np.all(np.isfinite(c))
                assert np.all(part.lower(node) < c) and np.all(c < part.upper(node))
    assert midpoint(-big, big) == 0.0 and midpoint(big, big) == big


def test_midpoint_is_bit_identical_to_the_plain_formula_where_the_sum_is_finite():
    rng = np.random.default_rng(0)
    lo = rng.uniform(-1e6, 1e6, 10_000) * 10.0 ** rng.integers(-300, 300, 10_000)
    hi = lo + np.abs(rng.normal(size=10_000)) * 10.0 ** rng.integers(-300, 300, 10_000)
    plain = 0.5 * (lo + hi)
    finite = np.isfinite(plain)
    assert finite.mean() > 0.9
    for a, b in zip(lo[finite], hi[finite], strict=True):
        assert midpoint(a, b).tobytes() == (0.5 * (a + b)).tobytes()
    # the overflow-safe formula agrees too wherever the sum is finite and no subnormal is involved
    normal = finite & (np.minimum(np.abs(lo), np.abs(hi)) > 1e-290)
    np.testing.assert_array_equal((0.5 * lo + 0.5 * hi)[normal], plain[normal])
