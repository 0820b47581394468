"""The box a run searches: every accepted form of ``domain`` read as a (d, 2) array, anything
ambiguous or non-numeric refused with a message quoting the accepted forms.

SciPy is never imported: a ``scipy.optimize.Bounds`` is recognised by its ``lb``/``ub``.
"""

from __future__ import annotations

import numpy as np

from vhct.optimizers.base import as_domain, is_number

#: the accepted forms of ``domain``, quoted by every error about it
BOUNDS_FORMS = (
    "domain must be one of: a list of (lo, hi) pairs, one per dimension ([[0, 1], [-5, 5]]); "
    "a numpy array of shape (d, 2), one row per dimension; or scipy.optimize.Bounds(lb, ub) "
    "(lb and ub arrays of length d)"
)


def as_bounds(bounds: object) -> np.ndarray:
    """The box as a float array of shape (d, 2), refusing anything ambiguous or non-numeric.

    Accepted: a sequence of ``(lo, hi)`` pairs (a list, or a tuple of more or fewer than two pairs),
    a numpy array of shape (d, 2), or anything with ``lb``/``ub`` (``scipy.optimize.Bounds``; SciPy
    is not imported). Refused: strings or bools as bounds, ``lo >= hi``, non-finite bounds, and the
    ``(lo_array, hi_array)`` form of two arrays (a 2-tuple of sequences, two numpy arrays, or a
    (2, d) table with d != 2), which could be read as two intervals.
    """
    if hasattr(bounds, "lb") and hasattr(bounds, "ub"):
        lb, ub = _numeric_array(bounds.lb, "lb"), _numeric_array(bounds.ub, "ub")
        if lb.ndim == 0 and ub.ndim == 0:
            raise ValueError(
                f"scipy.optimize.Bounds with scalar lb={lb.item()!r} and ub={ub.item()!r} does not say "
                f"the dimension: give lb and ub as arrays of length d. {BOUNDS_FORMS}"
            )
        try:
            lb, ub = np.broadcast_arrays(lb, ub)
        except ValueError:
            raise ValueError(
                f"scipy.optimize.Bounds lb {lb.tolist()} and ub {ub.tolist()} have different lengths. "
                f"{BOUNDS_FORMS}"
            ) from None
        if lb.ndim != 1:
            raise ValueError(
                f"scipy.optimize.Bounds lb and ub must be 1-D, got shape {lb.shape}. {BOUNDS_FORMS}"
            )
        box = np.stack([lb, ub], axis=1)
    else:
        box = _numeric_array(bounds, "domain")
        if box.ndim != 2 or box.shape[0] == 0:
            raise ValueError(f"domain {_show(bounds)} has shape {box.shape}. {BOUNDS_FORMS}")
        two_arrays = (
            isinstance(bounds, tuple | list)
            and len(bounds) == 2
            and (isinstance(bounds, tuple) or any(isinstance(item, np.ndarray) for item in bounds))
        )
        if box.shape[1] != 2 or two_arrays:
            raise ValueError(
                f"domain {_show(bounds)} looks like the (lo_array, hi_array) form of two arrays, which "
                f"could also be read as {box.shape[0]} (lo, hi) pairs: write "
                f"scipy.optimize.Bounds(lb, ub) for that form, or a list of pairs. {BOUNDS_FORMS}"
            )
    if not np.all(np.isfinite(box)):
        raise ValueError(f"domain bounds must be finite, got {box.tolist()}. {BOUNDS_FORMS}")
    empty = box[:, 0] >= box[:, 1]
    if np.any(empty):
        bad = int(np.argmax(empty))
        raise ValueError(
            f"domain dimension {bad} is empty or inverted: lo={float(box[bad, 0])!r} must be < "
            f"hi={float(box[bad, 1])!r}. {BOUNDS_FORMS}"
        )
    return as_domain(box)


def _show(bounds: object) -> str:
    text = repr(bounds)
    return text if len(text) <= 200 else text[:197] + "..."


def _numeric_array(value: object, name: str) -> np.ndarray:
    """``value`` as a float array if every entry is a real number (never a string or a bool)."""
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "iuf":
            raise ValueError(
                f"{name} must hold real numbers, got an array of dtype {value.dtype}. {BOUNDS_FORMS}"
            )
        return value.astype(float)
    try:
        raw = np.asarray(value, dtype=object)
    except ValueError:  # ragged nesting
        raise ValueError(f"{name} {_show(value)} is not a table of numbers. {BOUNDS_FORMS}") from None
    nested = (list, tuple, np.ndarray)  # rows of unequal length leave sequences as entries
    if any(isinstance(item, nested) and not _numeric_0d(item) for item in raw.flat):
        raise ValueError(
            f"{name} {_show(value)} is not a table of numbers (rows of unequal length?). {BOUNDS_FORMS}"
        )
    bad = [item for item in raw.flat if not (is_number(item) or _numeric_0d(item))]
    if bad:
        raise ValueError(
            f"{name} must hold real numbers (not strings or bools), got {bad[0]!r} in {_show(value)}. "
            f"{BOUNDS_FORMS}"
        )
    try:
        return raw.astype(float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} {_show(value)} is not a table of numbers. {BOUNDS_FORMS}") from None


def _numeric_0d(item: object) -> bool:
    return isinstance(item, np.ndarray) and item.ndim == 0 and item.dtype.kind in "iuf"
