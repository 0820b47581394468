"""The Landmine SVM and MNIST network objectives on small generated files with the real formats."""

from __future__ import annotations

import gzip

import numpy as np
import pytest
import scipy.io
import torch
from support import (
    idx_images_bytes,
    idx_labels_bytes,
    synthetic_digits,
    write_landmine_mat,
    write_mnist_dir,
)

from vhct.objectives.landmine import LANDMINE_DOMAIN, LandmineSVM
from vhct.objectives.mnist import (
    MNIST_DOMAIN,
    IdxFormatError,
    MnistMLP,
    logits,
    read_idx_images,
    read_idx_labels,
    sgd_epoch,
)

GOOD_SGD = [10.0, 0.1, 1e-4]


# ---------------------------------------------------------------- Landmine


@pytest.fixture(scope="module")
def landmine_mat(tmp_path_factory):
    return write_landmine_mat(tmp_path_factory.mktemp("landmine") / "LandmineData.mat")


def test_landmine_values_deterministic_and_point_dependent(landmine_mat):
    f = LandmineSVM(landmine_mat, field=1)
    assert f.name == "landmine" and not f.stochastic
    np.testing.assert_array_equal(f.domain, np.array(LANDMINE_DOMAIN))
    assert f.f_star is None and f.regret_reference == 1.0
    points = [[c, g] for c in (1e-4, 0.5, 10.0) for g in (1e-2, 1.0, 10.0)]
    values = [f(np.array(p)) for p in points]
    assert all(0.0 <= v <= 1.0 for v in values)
    assert len(set(values)) > 1
    assert max(values) > 0.6  # the fixture's positives are separable in part
    assert [f(np.array(p), seed=(3, 7)) for p in points] == values


def test_landmine_split_is_stratified_half_and_seeded(landmine_mat):
    f = LandmineSVM(landmine_mat, field=0, split_seed=0)
    g = LandmineSVM(landmine_mat, field=0, split_seed=0)
    h = LandmineSVM(landmine_mat, field=0, split_seed=1)
    assert len(f.y_train) == len(f.y_test)
    assert abs(int(f.y_train.sum()) - int(f.y_test.sum())) <= 1
    np.testing.assert_array_equal(f.x_train, g.x_train)
    assert not np.array_equal(f.x_train, h.x_train)


def test_landmine_fields_differ(landmine_mat):
    assert LandmineSVM(landmine_mat, field=0)([1.0, 1.0]) != LandmineSVM(landmine_mat, field=2)([1.0, 1.0])


@pytest.mark.parametrize("field", [-1, 3, 1.0, "0", True])
def test_landmine_bad_field_named(landmine_mat, field):
    with pytest.raises(ValueError, match="field"):
        LandmineSVM(landmine_mat, field=field)


def test_landmine_bad_inputs_named(landmine_mat, tmp_path):
    with pytest.raises(ValueError, match="data_path"):
        LandmineSVM(tmp_path / "absent.mat")
    broken = tmp_path / "broken.mat"
    scipy.io.savemat(broken, {"feature": scipy.io.loadmat(landmine_mat)["feature"]})
    with pytest.raises(ValueError, match="'label'"):
        LandmineSVM(broken)
    with pytest.raises(ValueError, match="split_seed"):
        LandmineSVM(landmine_mat, split_seed=-1)
    f = LandmineSVM(landmine_mat)
    for bad in ([20.0, 1.0], [1.0, 0.0], [1.0], [np.nan, 1.0]):
        with pytest.raises(ValueError, match="x"):
            f(np.array(bad))


# ---------------------------------------------------------------- MNIST files


def test_idx_round_trip(tmp_path):
    images, labels = synthetic_digits(7, np.random.default_rng(1))
    (tmp_path / "i.gz").write_bytes(gzip.compress(idx_images_bytes(images)))
    (tmp_path / "l.gz").write_bytes(gzip.compress(idx_labels_bytes(labels)))
    np.testing.assert_array_equal(read_idx_images(tmp_path / "i.gz"), images.reshape(7, -1))
    np.testing.assert_array_equal(read_idx_labels(tmp_path / "l.gz"), labels)


def test_malformed_idx_rejected(tmp_path):
    images, labels = synthetic_digits(5, np.random.default_rng(2))
    cases = {
        "magic.gz": (gzip.compress(idx_images_bytes(images, magic=2049)), read_idx_images, "magic"),
        "short.gz": (gzip.compress(idx_images_bytes(images)[:-784]), read_idx_images, "expected"),
        "cut.gz": (gzip.compress(idx_images_bytes(images))[:-30], read_idx_images, "gzip"),
        "lmagic.gz": (gzip.compress(idx_labels_bytes(labels, magic=2051)), read_idx_labels, "magic"),
        "lrange.gz": (gzip.compress(idx_labels_bytes(np.array([1, 12]))), read_idx_labels, "label 12"),
        "header.gz": (gzip.compress(b"\x00\x00"), read_idx_labels, "header"),
    }
    for name, (data, reader, message) in cases.items():
        (tmp_path / name).write_bytes(data)
        with pytest.raises(IdxFormatError, match=message):
            reader(tmp_path / name)


# ---------------------------------------------------------------- MNIST objective


@pytest.fixture(scope="module")
def mnist_dir(tmp_path_factory):
    return write_mnist_dir(tmp_path_factory.mktemp("mnist"), n_train=120, n_test=150)


def small(mnist_dir, **kw) -> MnistMLP:
    args = {"mode": "test-split", "n_train": 80, "n_valid": 60, "epochs": 2} | kw
    return MnistMLP(mnist_dir, **args)


def test_mnist_same_seed_same_value_and_values_vary(mnist_dir):
    f = small(mnist_dir)
    assert f.name == "mnist" and f.stochastic and f.mode == "test-split"
    np.testing.assert_array_equal(f.domain, np.array(MNIST_DOMAIN))
    assert f.f_star is None and f.regret_reference == 1.0
    good = f(np.array(GOOD_SGD), seed=(0, 1))
    assert 0.0 <= good <= 1.0
    assert f(np.array(GOOD_SGD), seed=(0, 1)) == good
    assert small(mnist_dir)(np.array(GOOD_SGD), seed=(0, 1)) == good
    by_seed = {f(np.array([50.0, 0.05, 1e-4]), seed=(0, r)) for r in range(4)}  # not yet converged
    assert len(by_seed) > 1
    frozen = f(np.array([100.0, 1e-6, 1e-6]), seed=(0, 1))  # barely moves from its random init
    assert 0.0 <= frozen <= 1.0 and good > frozen
    assert good > 0.5  # the fixture's class bands are learnable


def test_mnist_leaves_global_rng_alone(mnist_dir):
    f = small(mnist_dir, threads=1)
    torch_state, np_state = torch.get_rng_state(), np.random.get_state()[1].copy()  # noqa: NPY002
    f(np.array(GOOD_SGD), seed=(5, 5))
    assert torch.equal(torch.get_rng_state(), torch_state)
    np.testing.assert_array_equal(np.random.get_state()[1], np_state)  # noqa: NPY002
    assert torch.get_num_threads() == 1


def test_mnist_test_split_subsets_disjoint_and_seeded(mnist_dir):
    f = small(mnist_dir)
    train = {row.tobytes() for row in f.x_train.numpy()}
    valid = {row.tobytes() for row in f.x_valid.numpy()}
    assert len(train) == 80 and len(valid) == 60 and not train & valid
    assert torch.equal(small(mnist_dir).x_valid, f.x_valid)
    assert not torch.equal(small(mnist_dir, subset_seed=1).x_valid, f.x_valid)
    assert float(f.x_train.min()) >= 0.0 and float(f.x_train.max()) <= 1.0
    assert f.x_train.dtype == torch.float32


def test_mnist_official_mode_trains_on_train_split(mnist_dir):
    f = MnistMLP(mnist_dir, mode="official", n_train=120, n_valid=150, epochs=1)
    train = read_idx_images(mnist_dir / "train-images-idx3-ubyte.gz").astype(np.float32) / 255
    test = read_idx_images(mnist_dir / "t10k-images-idx3-ubyte.gz").astype(np.float32) / 255
    assert sorted(map(bytes, f.x_train.numpy())) == sorted(map(bytes, train))
    assert sorted(map(bytes, f.x_valid.numpy())) == sorted(map(bytes, test))
    assert 0.0 <= f(np.array(GOOD_SGD), seed=(1, 2)) <= 1.0


def test_mnist_batch_size_rounded(mnist_dir):
    f = small(mnist_dir)
    assert f.hyperparameters(np.array([1.4, 0.5, 0.1])) == (1, 0.5, 0.1)
    assert f.hyperparameters(np.array([99.6, 1e-6, 0.5]))[0] == 100


def test_manual_sgd_matches_autograd_and_torch_sgd():
    gen = torch.Generator().manual_seed(3)
    xs = torch.rand(30, 784, generator=gen)
    ys = torch.randint(0, 10, (30,), generator=gen)
    start = [torch.randn(s, generator=gen) * 0.05 for s in ((64, 784), (64,), (10, 64), (10,))]
    for batch, lr, decay in ((1, 0.1, 1e-3), (7, 0.5, 0.3)):
        ours = [p.clone() for p in start]
        with torch.no_grad():
            sgd_epoch(ours, xs, torch.nn.functional.one_hot(ys, 10).float(), batch, lr, decay)
        ref = [p.clone().requires_grad_() for p in start]
        opt = torch.optim.SGD(ref, lr=lr, weight_decay=decay)
        for s in range(0, len(xs), batch):
            opt.zero_grad()
            torch.nn.functional.cross_entropy(logits(ref, xs[s : s + batch]), ys[s : s + batch]).backward()
            opt.step()
        for a, b in zip(ours, ref, strict=True):
            torch.testing.assert_close(a, b.detach(), atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize(
    ("kw", "named"),
    [
        ({"mode": "train"}, "mode"),
        ({"n_train": 100}, "n_train"),  # 100 + 60 > 150 test images
        ({"n_valid": 0}, "n_valid"),
        ({"epochs": 0}, "epochs"),
        ({"threads": 0}, "threads"),
        ({"subset_seed": -1}, "subset_seed"),
        ({"mode": "official", "n_train": 121}, "n_train"),
        ({"mode": "official", "n_valid": 151}, "n_valid"),
    ],
)
def test_mnist_bad_arguments_named(mnist_dir, kw, named):
    with pytest.raises(ValueError, match=named):
        small(mnist_dir, **kw)


def test_mnist_missing_files_and_bad_points(mnist_dir, tmp_path):
    only_test = tmp_path / "only_test"
    only_test.mkdir()
    for name in ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"):
        (only_test / name).write_bytes((mnist_dir / name).read_bytes())
    assert small(only_test).mode == "test-split"
    with pytest.raises(ValueError, match="train-images-idx3-ubyte.gz"):
        small(only_test, mode="official")
    with pytest.raises(ValueError, match="data_dir"):
        small(tmp_path / "nowhere")
    f = small(mnist_dir)
    for bad in ([0.0, 0.1, 0.1], [10.0, 2.0, 0.1], [10.0, 0.1], [10.0, np.inf, 0.1]):
        with pytest.raises(ValueError, match="x"):
            f(np.array(bad))
    with pytest.raises(ValueError, match="seed"):
        f(np.array(GOOD_SGD), seed=(-1, 2))
