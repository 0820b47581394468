"""MNIST in official mode: the real training file of the offline mirror, the decoded-split cache, and
the data line the figure subtitle and the findings give (the training subset against 60,000)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from findings_run import made_up_run
from support import CONFIG_DIR, REPO, reseal, write_mnist_dir

from vhct.objectives.mnist import (
    MNIST_FILES,
    OFFICIAL_TEST_IMAGES,
    OFFICIAL_TRAIN_IMAGES,
    MnistMLP,
    data_text,
    load_split,
)
from vhct.pipeline import config as vc
from vhct.pipeline.data import mirror_dirs, verify_file
from vhct.pipeline.layout import AUDIT_JSON
from vhct.reporting import findings, ship
from vhct.reporting.render import mnist_subsets

#: a point of the domain that trains well: batch 10, learning rate 0.1, weight decay 1e-4
GOOD_SGD = [10.0, 0.1, 1e-4]
#: the Makefile's default mirror, next to the checkout (when VHCT_DATA_MIRROR is unset)
MAKEFILE_MIRROR = REPO.parent / "shared" / "data"


def official_mirror() -> tuple[Path, dict]:
    """The MNIST folder of the first mirror the pipeline would use that holds all four files (the
    config's ``data.mirror``, then ``$VHCT_DATA_MIRROR``, then the Makefile's ``../shared/data``),
    and the default config; skips the test, naming the places tried, when there is none."""
    config = vc.load([CONFIG_DIR / "config.yaml"])[0]
    candidates = [folder for folder, _ in mirror_dirs(config.data_mirror)] + [MAKEFILE_MIRROR]
    names = [name for split in ("train", "test") for name in MNIST_FILES[split]]
    for folder in candidates:
        if all((folder / "mnist" / name).is_file() for name in names):
            return folder / "mnist", config
    pytest.skip(
        "no offline data mirror with the four official MNIST files (tried "
        + ", ".join(str(f) for f in candidates)
        + "); set VHCT_DATA_MIRROR to one"
    )


def test_the_official_objective_trains_on_the_real_training_file_of_the_mirror():
    folder, config = official_mirror()
    # the mirror's file is the official one (its decompressed content), as the pipeline verifies it
    spec = config.data_spec(config.data.files["mnist-train-images"].path)
    verify_file(folder / "train-images-idx3-ubyte.gz", spec)
    images, labels = load_split(folder, "train")
    assert images.shape == (OFFICIAL_TRAIN_IMAGES, 784) and labels.shape == (OFFICIAL_TRAIN_IMAGES,)
    assert len(load_split(folder, "test")[0]) == OFFICIAL_TEST_IMAGES

    f = MnistMLP(folder, mode="official", n_train=200, n_valid=200)
    # the training subset is rows of the training file (not of the test file the test-split mode uses)
    train_rows = {row.tobytes() for row in images}
    assert all((np.rint(x * 255).astype(np.uint8)).tobytes() in train_rows for x in f.x_train.numpy())
    value = f(np.array(GOOD_SGD), seed=(0, 1))
    assert math.isfinite(value) and 0.0 <= value <= 1.0
    assert value > 0.2  # well above chance (0.1): the labels belong to the images
    again = MnistMLP(folder, mode="official", n_train=200, n_valid=200)
    assert again(np.array(GOOD_SGD), seed=(0, 1)) == value


def test_a_split_is_decoded_once_per_file_version(tmp_path):
    folder = write_mnist_dir(tmp_path / "mnist", n_train=30, n_test=40)
    first = load_split(folder, "train")
    assert load_split(folder, "train")[0] is first[0]  # cached: a job's seeds share the decoded images
    assert not first[0].flags.writeable  # so no objective can change another's data
    write_mnist_dir(tmp_path / "mnist", n_train=50, n_test=40, seed=1)  # the file replaced
    assert len(load_split(folder, "train")[0]) == 50


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        (
            {"mode": "official", "n_train": 10000, "n_valid": 10000},
            "official (10,000 of 60,000 training, 10,000 of 10,000 test images)",
        ),
        (
            {"mode": "official", "n_train": 60000, "n_valid": 10000},
            "official (60,000 of 60,000 training, 10,000 of 10,000 test images)",
        ),
        (
            {"mode": "test-split", "n_train": 2000, "n_valid": 1000},
            "test-split (2,000 training + 1,000 validation images of the test set)",
        ),
        # the objective's defaults where the config leaves a key out
        ({}, "official (2,000 of 60,000 training, 1,000 of 10,000 test images)"),
    ],
)
def test_the_data_line_gives_the_mode_and_the_subset(params, expected):
    assert data_text(params) == expected
    assert MnistMLP.data_text(params) == expected


def test_the_findings_list_an_official_subset_but_not_the_full_training_set():
    experiments = {
        "mnist": {
            "objective": "mnist",
            "objective_params": {"mode": "official", "n_train": 10000, "n_valid": 10000},
            "horizon": 100,
        },
        "mnist-full": {
            "objective": "mnist",
            "objective_params": {"mode": "official", "n_train": 60000, "n_valid": 10000},
            "horizon": 500,
        },
        "mnist-split": {"objective": "mnist", "objective_params": {"mode": "test-split"}, "horizon": 100},
        "landmine": {"objective": "landmine", "objective_params": {"field": 0}, "horizon": 500},
    }
    from vhct.pipeline.specs import ExperimentInfo

    typed = {
        name: ExperimentInfo(name=name, title=name, noise=0.05, seeds=[0], settings={}, **exp)
        for name, exp in experiments.items()
    }
    assert mnist_subsets(typed) == [
        {"name": "mnist", "data": data_text(experiments["mnist"]["objective_params"]), "horizon": 100}
    ]


def test_shipped_findings_state_the_official_subset(tmp_path):
    results, figures = made_up_run(tmp_path)
    docs = tmp_path / "docs"
    ship.ship(results, figures, docs)
    audit_path = docs / findings.DATA_DIR / AUDIT_JSON
    audit = json.loads(audit_path.read_text(encoding="utf-8"))
    audit["context"]["experiments"]["mnist"]["objective_params"] = {
        "mode": "official",
        "n_train": 10000,
        "n_valid": 10000,
    }
    audit_path.write_text(json.dumps(audit), encoding="utf-8")
    reseal(docs / findings.DATA_DIR)
    text = findings.render(docs)
    assert "**mnist trains on part of the official training images**" in text
    assert "official (10,000 of 60,000 training, 10,000 of 10,000 test images), n = 100" in text
    assert "test-split mode" not in text
