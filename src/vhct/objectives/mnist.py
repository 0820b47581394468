"""MNIST: validation accuracy of a 784-64-10 ReLU network trained by SGD, over SGD's hyper-parameters.

The paper's second real-data task: tune the mini-batch size in [1, 100] (rounded to an
integer), the learning rate in [1e-6, 1] and the weight decay in [1e-6, 0.5] of plain SGD
on a two-layer feed-forward network, and return the accuracy on held-out images.

Two data modes: ``official`` trains on (a subset of) the training split and validates on
the official test split, as the paper does; ``test-split`` draws disjoint training and
validation subsets from the official test split, for machines that only have those files
(results from that mode must say so). Subsets are drawn once, from ``subset_seed``. Each
evaluation draws its initialisation and shuffling from a torch generator seeded by the
``seed`` it is given, so equal seeds give equal values and no global RNG is touched.
"""

from __future__ import annotations

import functools
import gzip
import math
import struct
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from vhct.extras import require

require(("torch",), "real-data", "the MNIST objective (vhct.objectives.mnist)")

import torch  # noqa: E402

from vhct.objectives.base import Objective  # noqa: E402

#: search space of the paper: batch size, learning rate, weight decay
MNIST_DOMAIN = ((1.0, 100.0), (1e-6, 1.0), (1e-6, 0.5))
#: the splits each data mode reads from ``data_dir`` (file names: ``MNIST_FILES``). Both are literals:
#: the pipeline's pre-check reads them from this source, without importing torch, to require each
#: file a run reads among the experiment's verified data files (vhct.pipeline.config.checks)
MODE_SPLITS = {"official": ("test", "train"), "test-split": ("test",)}
MODES = tuple(MODE_SPLITS)
#: images in the official training and test splits
OFFICIAL_TRAIN_IMAGES = 60_000
OFFICIAL_TEST_IMAGES = 10_000
#: file names of the official IDX files (gzip), by split
MNIST_FILES = {
    "train": ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"),
    "test": ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"),
}
IMAGE_MAGIC = 2051
LABEL_MAGIC = 2049
IMAGE_HEADER = ">IIII"
LABEL_HEADER = ">II"
N_CLASSES = 10
HIDDEN_UNITS = 64
PIXEL_MAX = 255.0
#: defaults sized for a CPU time budget (the pipeline config sets its own)
DEFAULT_N_TRAIN = 2000
DEFAULT_N_VALID = 1000
DEFAULT_EPOCHS = 1
#: seed entropy used when an evaluation is given no seed
DEFAULT_EVAL_SEED = 0


class IdxFormatError(ValueError):
    """A file is not a well-formed MNIST IDX file."""


def _read_gz(path: Path) -> bytes:
    try:
        with gzip.open(path, "rb") as fh:
            return fh.read()
    except FileNotFoundError:
        raise
    except (EOFError, OSError, zlib.error) as exc:
        raise IdxFormatError(
            f"{path}: not a complete, valid gzip file ({exc}); delete it and rerun the pipeline, "
            "which fetches it again"
        ) from exc


def _read_idx(
    path: Path, header_format: str, magic_expected: int, kind: str
) -> tuple[tuple[int, ...], np.ndarray]:
    """Dimensions and uint8 payload of a gzip IDX file; checks header length, magic number and size."""
    raw = _read_gz(path)
    header = struct.calcsize(header_format)
    if len(raw) < header:
        raise IdxFormatError(f"{path}: {len(raw)} bytes, shorter than the {kind} header")
    magic, *dims = struct.unpack_from(header_format, raw)
    if magic != magic_expected:
        raise IdxFormatError(f"{path}: magic number {magic}, expected {magic_expected} ({kind})")
    expected = header + int(np.prod(dims))
    if len(raw) != expected:
        raise IdxFormatError(f"{path}: {len(raw)} bytes, expected {expected} for {dims[0]} items ({kind})")
    return tuple(dims), np.frombuffer(raw, dtype=np.uint8, offset=header)


def read_idx_images(path: Path | str) -> np.ndarray:
    """Images of a gzip IDX3 file as uint8 of shape (n, rows * cols); checks magic number and size."""
    (n, rows, cols), pixels = _read_idx(Path(path), IMAGE_HEADER, IMAGE_MAGIC, "IDX3 images")
    return pixels.reshape(n, rows * cols)


def read_idx_labels(path: Path | str) -> np.ndarray:
    """Labels of a gzip IDX1 file as uint8 of shape (n,); checks magic number, size and range 0-9."""
    _, labels = _read_idx(Path(path), LABEL_HEADER, LABEL_MAGIC, "IDX1 labels")
    if labels.size and labels.max() >= N_CLASSES:
        raise IdxFormatError(f"{path}: label {int(labels.max())} outside 0..{N_CLASSES - 1}")
    return labels


def _file_key(path: Path) -> tuple[str, int, int]:
    """Identity of a file's content for the cache: resolved path, size and modification time."""
    stat = path.stat()
    return str(path.resolve()), stat.st_size, stat.st_mtime_ns


@functools.lru_cache(maxsize=len(MNIST_FILES))
def _decoded_split(
    split: str, images_key: tuple[str, int, int], labels_key: tuple[str, int, int]
) -> tuple[np.ndarray, np.ndarray]:
    images, labels = read_idx_images(images_key[0]), read_idx_labels(labels_key[0])
    if len(images) != len(labels):
        folder = Path(images_key[0]).parent
        raise IdxFormatError(f"{folder}: {len(images)} images, {len(labels)} labels in the {split} split")
    return images, labels


def load_split(data_dir: Path, split: str) -> tuple[np.ndarray, np.ndarray]:
    """Images and labels of the ``train`` or ``test`` split in ``data_dir`` (read-only arrays).

    Decoded once per process and file version (path, size, modification time): a run job of
    several seeds builds the objective once per seed, and decompressing the 60,000 training
    images takes about 0.3 s each time.
    """
    image_name, label_name = MNIST_FILES[split]
    for name in (image_name, label_name):
        if not (data_dir / name).is_file():
            raise ValueError(f"data_dir {str(data_dir)!r} lacks {name} (fetch the MNIST data first)")
    return _decoded_split(split, _file_key(data_dir / image_name), _file_key(data_dir / label_name))


def _check_count(name: str, value: int, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def torch_generator(seed: Sequence[int] | int | None) -> torch.Generator:
    """A torch generator seeded from ``seed`` (e.g. (run seed, round)) through a numpy SeedSequence."""
    if seed is None:
        seed = DEFAULT_EVAL_SEED
    try:
        entropy = [int(s) for s in seed] if isinstance(seed, Sequence) else seed
        state = np.random.SeedSequence(entropy).generate_state(1, dtype=np.uint64)[0]
    except (TypeError, ValueError) as exc:
        raise ValueError(f"seed must be a non-negative int or a sequence of them, got {seed!r}") from exc
    return torch.Generator().manual_seed(int(state))


def data_text(objective_params: Mapping[str, object]) -> str:
    """The data of an MNIST experiment in a few words, for a figure's subtitle ("data: ...") and the findings.

    From its ``objective_params`` (the objective's defaults for keys it leaves out): an
    ``official`` run gives its training subset against the 60,000 official training images,
    a ``test-split`` run says that it trains and validates on parts of the official test set.
    """
    mode = objective_params.get("mode", "official")
    n_train = int(objective_params.get("n_train", DEFAULT_N_TRAIN))
    n_valid = int(objective_params.get("n_valid", DEFAULT_N_VALID))
    if mode == "test-split":
        return f"test-split ({n_train:,} training + {n_valid:,} validation images of the test set)"
    return (
        f"official ({n_train:,} of {OFFICIAL_TRAIN_IMAGES:,} training, "
        f"{n_valid:,} of {OFFICIAL_TEST_IMAGES:,} test images)"
    )


class MnistMLP(Objective):
    """Validation accuracy of a 784-64-10 ReLU network after SGD with (batch size, lr, weight decay)."""

    name = "mnist"
    stochastic = True
    #: the data line of a figure or of the findings, from an experiment's ``objective_params``
    data_text = staticmethod(data_text)

    def __init__(
        self,
        data_dir: Path | str,
        mode: str = "official",
        n_train: int = DEFAULT_N_TRAIN,
        n_valid: int = DEFAULT_N_VALID,
        epochs: int = DEFAULT_EPOCHS,
        threads: int = 1,
        subset_seed: int = 0,
    ):
        super().__init__(MNIST_DOMAIN)
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        self.mode = mode
        self.n_train = _check_count("n_train", n_train)
        self.n_valid = _check_count("n_valid", n_valid)
        self.epochs = _check_count("epochs", epochs)
        self.threads = _check_count("threads", threads)
        self.subset_seed = _check_count("subset_seed", subset_seed, minimum=0)
        data_dir = Path(data_dir)
        rng = np.random.default_rng(self.subset_seed)
        splits = {split: load_split(data_dir, split) for split in MODE_SPLITS[mode]}
        test_x, test_y = splits["test"]
        if mode == "official":
            train_x, train_y = splits["train"]
            if self.n_train > len(train_x):
                raise ValueError(f"n_train={self.n_train} exceeds the {len(train_x)} training images")
            if self.n_valid > len(test_x):
                raise ValueError(f"n_valid={self.n_valid} exceeds the {len(test_x)} test images")
            train_idx = rng.choice(len(train_x), self.n_train, replace=False)
            valid_idx = rng.choice(len(test_x), self.n_valid, replace=False)
        else:
            if self.n_train + self.n_valid > len(test_x):
                raise ValueError(
                    f"n_train + n_valid = {self.n_train + self.n_valid} exceeds the {len(test_x)} "
                    "test images that mode 'test-split' divides"
                )
            train_x, train_y = test_x, test_y
            order = rng.permutation(len(test_x))
            train_idx, valid_idx = order[: self.n_train], order[self.n_train : self.n_train + self.n_valid]
        self.x_train = torch.from_numpy(train_x[train_idx].astype(np.float32) / PIXEL_MAX)
        self.y_train = torch.from_numpy(train_y[train_idx].astype(np.int64))
        self.onehot_train = torch.nn.functional.one_hot(self.y_train, N_CLASSES).float()
        self.x_valid = torch.from_numpy(test_x[valid_idx].astype(np.float32) / PIXEL_MAX)
        self.y_valid = torch.from_numpy(test_y[valid_idx].astype(np.int64))
        self.n_inputs = self.x_train.shape[1]

    def hyperparameters(self, x: np.ndarray | Sequence[float]) -> tuple[int, float, float]:
        """(batch size, learning rate, weight decay) of a point; the batch size is rounded."""
        batch, lr, decay = self.check_point(x)
        return int(round(batch)), float(lr), float(decay)

    def _init_params(self, gen: torch.Generator) -> list[torch.Tensor]:
        """[w1, b1, w2, b2] drawn like torch's default ``nn.Linear`` init, from ``gen``."""
        params = []
        for fan_in, fan_out in ((self.n_inputs, HIDDEN_UNITS), (HIDDEN_UNITS, N_CLASSES)):
            bound = 1.0 / math.sqrt(fan_in)
            for shape in ((fan_out, fan_in), (fan_out,)):
                params.append(torch.empty(shape).uniform_(-bound, bound, generator=gen))
        return params

    def __call__(self, x: np.ndarray, seed: Sequence[int] | int | None = None) -> float:
        """Train with SGD at ``x`` (seeded by ``seed``) and return the validation accuracy in [0, 1]."""
        batch, lr, decay = self.hyperparameters(x)
        torch.set_num_threads(self.threads)
        gen = torch_generator(seed)
        with torch.no_grad():
            params = self._init_params(gen)
            for _ in range(self.epochs):
                order = torch.randperm(self.n_train, generator=gen)
                sgd_epoch(params, self.x_train[order], self.onehot_train[order], batch, lr, decay)
            predicted = logits(params, self.x_valid).argmax(dim=1)
        return float((predicted == self.y_valid).double().mean())


def logits(params: Sequence[torch.Tensor], x: torch.Tensor) -> torch.Tensor:
    """Output scores of the network ``x -> relu(x w1' + b1) w2' + b2``."""
    w1, b1, w2, b2 = params
    return torch.addmm(b2, torch.relu(torch.addmm(b1, x, w1.t())), w2.t())


def sgd_epoch(
    params: Sequence[torch.Tensor],
    xs: torch.Tensor,
    onehot: torch.Tensor,
    batch: int,
    lr: float,
    decay: float,
) -> None:
    """One pass of plain SGD with weight decay on the mean cross-entropy, updating ``params`` in place.

    Same update as ``torch.optim.SGD(lr=lr, weight_decay=decay)`` after autograd
    (``p <- p - lr * (grad + decay * p)``), with the two-layer gradients written out by
    hand: per-step autograd and optimizer overhead would dominate at batch size 1.
    """
    w1, b1, w2, b2 = params
    shrink = 1.0 - lr * decay
    for start in range(0, len(xs), batch):
        x, target = xs[start : start + batch], onehot[start : start + batch]
        pre = torch.addmm(b1, x, w1.t())
        hidden = torch.relu(pre)
        d_out = torch.softmax(torch.addmm(b2, hidden, w2.t()), dim=1).sub_(target)
        d_hidden = torch.mm(d_out, w2).mul_(pre > 0)
        step = -lr / len(x)
        w2.addmm_(d_out.t(), hidden, beta=shrink, alpha=step)
        b2.mul_(shrink).add_(d_out.sum(dim=0), alpha=step)
        w1.addmm_(d_hidden.t(), x, beta=shrink, alpha=step)
        b1.mul_(shrink).add_(d_hidden.sum(dim=0), alpha=step)
