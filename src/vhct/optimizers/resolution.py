"""Resolution descriptors OE_h (the paper's Definition 1 and condition GLS).

``OE_h`` bounds how far the function may drop below ``f*`` inside the optimal cell at
depth ``h``; the OSC engine only needs ``resolution(h)`` for integer ``h >= 0``.
Descriptors are plain callables ``depth -> float``; any callable a user passes works.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .base import check_open_unit, check_positive

Resolution = Callable[[int], float]


@dataclass(frozen=True)
class Exponential:
    """``OE_h = nu * rho**h``: the local smoothness of Grill et al. (HCT, VHCT)."""

    nu: float = 1.0
    rho: float = 0.5

    def __post_init__(self) -> None:
        object.__setattr__(self, "nu", check_positive("nu", self.nu))
        object.__setattr__(self, "rho", check_open_unit("rho", self.rho))

    def __call__(self, depth: int) -> float:
        return self.nu * self.rho**depth


@dataclass(frozen=True)
class Polynomial:
    """``OE_h = min(cap, a / h**p)``; the paper's ``phi(h) = 2/h`` is ``a=2, p=1``.

    GLS asks for ``phi: N -> (0, 1]``: the value is capped at ``cap`` (default 1, which is
    no restriction for objectives whose range spans at most 1, such as the
    counterexample on [0, 1/e]). ``a/h**p`` is undefined at the root: ``h = 0`` takes the
    value of ``h = 1``. The OSC engine never pulls the root, so this only matters to
    users who evaluate the descriptor there.
    """

    a: float = 2.0
    p: float = 1.0
    cap: float = 1.0

    def __post_init__(self) -> None:
        for name in ("a", "p", "cap"):
            object.__setattr__(self, name, check_positive(name, getattr(self, name)))

    def __call__(self, depth: int) -> float:
        return min(self.cap, self.a / max(depth, 1) ** self.p)


@dataclass(frozen=True)
class Logarithmic:
    """``OE_h = 1 / (log h + 1)`` (natural log); ``h = 0`` takes the value of ``h = 1``, i.e. 1."""

    def __call__(self, depth: int) -> float:
        return 1.0 / (math.log(max(depth, 1)) + 1.0)


RESOLUTION_KINDS: dict[str, type] = {
    "exponential": Exponential,
    "polynomial": Polynomial,
    "logarithmic": Logarithmic,
}


def make_resolution(spec: Resolution | Mapping[str, Any] | None, *, nu: float, rho: float) -> Resolution:
    """Build a descriptor from a config mapping ``{kind: ..., **params}``, a callable, or None.

    None and ``{kind: exponential}`` without parameters give ``nu * rho**h`` with the
    optimizer's own ``nu`` and ``rho``.
    """
    if spec is None:
        return Exponential(nu=nu, rho=rho)
    if callable(spec):
        return spec
    if not isinstance(spec, Mapping) or "kind" not in spec:
        raise ValueError(f"resolution must be a callable or a mapping with a 'kind', got {spec!r}")
    params = {k: v for k, v in spec.items() if k != "kind"}
    kind = spec["kind"]
    if kind not in RESOLUTION_KINDS:
        raise ValueError(f"resolution.kind must be one of {sorted(RESOLUTION_KINDS)}, got {kind!r}")
    if kind == "exponential":
        params = {"nu": nu, "rho": rho, **params}
    try:
        return RESOLUTION_KINDS[kind](**params)
    except TypeError as exc:
        raise ValueError(f"resolution ({kind}): bad parameters {params!r}: {exc}") from exc
    except ValueError as exc:  # a value out of its range, said with the key it is under
        raise ValueError(f"resolution ({kind}): {exc}") from exc
