"""Landmine detection: test AUC-ROC of an RBF-kernel SVM as a function of (C, gamma).

The paper's real-data task (its Experiment Details, following the Federated Bayesian
Optimization code): one landmine field of ``LandmineData.mat`` is split 50/50 into train
and test (stratified), an ``SVC(kernel="rbf", C, gamma)`` is trained and scored by the
test AUC-ROC. Scores come from ``decision_function`` (AUC only needs a ranking), which
keeps an evaluation deterministic: ``probability=True`` would run a randomized internal
cross-validation. The maximum is unknown; regret is measured against 1.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from vhct.extras import require

require(("scipy", "sklearn"), "real-data", "the landmine objective (vhct.objectives.landmine)")

import scipy.io  # noqa: E402
from sklearn.metrics import roc_auc_score  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402
from sklearn.svm import SVC  # noqa: E402

from vhct.objectives.base import Objective  # noqa: E402

#: search space of the paper, linear scale: C (L2 regularisation) then the RBF gamma
LANDMINE_DOMAIN = ((1e-4, 10.0), (1e-2, 10.0))
#: fraction of a field held out for testing (the paper's source: 50/50)
TEST_FRACTION = 0.5
#: the cell arrays a Landmine .mat file must hold
MAT_KEYS = ("feature", "label")


def load_landmine_field(data_path: Path | str, field: int) -> tuple[np.ndarray, np.ndarray]:
    """Features (n, d) and 0/1 labels (n,) of one field of ``LandmineData.mat``."""
    path = Path(data_path)
    if not path.is_file():
        raise ValueError(f"data_path {str(path)!r} is not a file (fetch the Landmine data first)")
    try:
        mat = scipy.io.loadmat(path)
    except Exception as exc:  # scipy raises many types (OSError, ValueError, IndexError, ...) on bad bytes
        raise ValueError(
            f"data_path {str(path)!r} cannot be read as a MATLAB file ({type(exc).__name__}: {exc}); it is "
            "truncated or corrupted: delete it and rerun the pipeline, which fetches it again"
        ) from exc
    for key in MAT_KEYS:
        if key not in mat:
            raise ValueError(f"data_path {str(path)!r} lacks the key {key!r} (expected keys {MAT_KEYS})")
    features, labels = mat["feature"].ravel(), mat["label"].ravel()
    if len(features) != len(labels):
        raise ValueError(f"data_path {str(path)!r}: {len(features)} feature cells, {len(labels)} label cells")
    if isinstance(field, bool) or not isinstance(field, int | np.integer) or not 0 <= field < len(features):
        raise ValueError(f"field must be an integer in [0, {len(features) - 1}], got {field!r}")
    x = np.asarray(features[field], dtype=float)
    y = np.asarray(labels[field]).ravel().astype(int)
    if x.ndim != 2 or x.shape[0] != y.shape[0]:
        raise ValueError(f"field {field}: features of shape {x.shape} do not match {y.shape[0]} labels")
    if set(np.unique(y)) != {0, 1}:
        raise ValueError(f"field {field}: labels must contain both 0 and 1, got {np.unique(y).tolist()}")
    return x, y


class LandmineSVM(Objective):
    """Test AUC-ROC of an RBF SVM on one landmine field, maximized over (C, gamma)."""

    name = "landmine"
    stochastic = False

    def __init__(self, data_path: Path | str, field: int = 0, split_seed: int = 0):
        super().__init__(LANDMINE_DOMAIN)
        if isinstance(split_seed, bool) or not isinstance(split_seed, int | np.integer) or split_seed < 0:
            raise ValueError(f"split_seed must be a non-negative integer, got {split_seed!r}")
        x, y = load_landmine_field(data_path, field)
        self.field = int(field)
        self.split_seed = int(split_seed)
        self.x_train, self.x_test, self.y_train, self.y_test = train_test_split(
            x, y, test_size=TEST_FRACTION, stratify=y, random_state=self.split_seed
        )

    def __call__(self, x: np.ndarray, seed: Sequence[int] | None = None) -> float:
        """Train ``SVC(C=x[0], gamma=x[1])`` and return its test AUC-ROC (deterministic: ``seed`` unused)."""
        c, gamma = self.check_point(x)
        model = SVC(kernel="rbf", C=float(c), gamma=float(gamma))
        model.fit(self.x_train, self.y_train)
        return float(roc_auc_score(self.y_test, model.decision_function(self.x_test)))
