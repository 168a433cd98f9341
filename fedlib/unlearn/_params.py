"""The parameters of clustered federated unlearning, checked and rounded as the paper means them.

Liu, Jiang, Jiang, Guo, Zhao, Lam, "Guaranteeing Data Privacy in Federated Unlearning with Dynamic User
Participation" (IEEE TDSC 22(3), 2025), Sec. III: ``N`` clients in clusters of ``k``; at most the fractions
``γ`` of adversaries, ``δ`` of dropouts and ``ζ`` of unlearned clients in a cluster; the Shamir threshold rate
``ξ = t/k``; the security and correctness parameters ``σ`` and ``η`` in bits. A rate is taken as the decimal
typed, so that ``t = ⌈ξk⌉`` and ``q = ⌊ζk⌋`` are the integers the paper means.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Literal

import numpy as np

from fedlib._validation import check_scalar

#: ``ln 2``, the paper's conversion of a security parameter in bits to nats.
LN2 = math.log(2.0)

#: The two readings of the paper's formulas.
VARIANTS = ("printed", "corrected")

Variant = Literal["printed", "corrected"]


def _exact(x: float) -> Fraction:
    """The decimal a user typed (0.1 as 1/10, not as its binary neighbour), so that ⌈0.7·60⌉ is 42, not 43."""
    return Fraction(repr(float(x)))


def _ceil_times(rate: float, k: int) -> int:
    """``⌈rate·k⌉`` for the rate as typed, e.g. the Shamir threshold ``t = ⌈ξk⌉``."""
    return math.ceil(_exact(rate) * k)


def _floor_times(rate: float, k: int) -> int:
    """``⌊rate·k⌋`` for the rate as typed, e.g. the removal cap ``q = ⌊ζk⌋`` or the ``⌊δN⌋`` dropouts."""
    return math.floor(_exact(rate) * k)


def _check_rates(gamma, delta, zeta, xi) -> tuple[float, float, float, float]:
    """``γ, δ, ζ`` in ``[0, 1)`` and ``ξ`` in ``(0, 1]``, as floats (pass a valid dummy for a rate not used)."""
    gamma = check_scalar(gamma, "gamma (γ)", "real", min_val=0.0, max_val=1.0, include_max=False)
    delta = check_scalar(delta, "delta (δ)", "real", min_val=0.0, max_val=1.0, include_max=False)
    zeta = check_scalar(zeta, "zeta (ζ)", "real", min_val=0.0, max_val=1.0, include_max=False)
    xi = check_scalar(xi, "xi (ξ)", "real", min_val=0.0, max_val=1.0, include_min=False)
    return gamma, delta, zeta, xi


def _check_k(k) -> tuple[np.ndarray, bool]:
    """Cluster size(s) ``>= 1`` as a float array, and whether ``k`` was a scalar (for ``_out``)."""
    arr = np.asarray(k, dtype=np.float64)
    if arr.size and (not np.all(np.isfinite(arr)) or np.min(arr) < 1):
        raise ValueError(f"cluster sizes k must be finite and >= 1, got {k!r}.")
    return arr, arr.ndim == 0


def _out(values: np.ndarray, scalar: bool):
    """A float for a scalar argument, else the array: the results of the vectorised formulas."""
    return float(values) if scalar else values


def _check_sizes(cluster_sizes) -> list[int]:
    """Cluster sizes ``k_i >= 1`` as a non-empty list of Python integers."""
    sizes = [check_scalar(k, "cluster size", "int", min_val=1) for k in np.asarray(cluster_sizes).ravel().tolist()]
    if not sizes:
        raise ValueError("cluster_sizes must name at least one cluster.")
    return sizes


def _check_caps(caps, n_clusters: int, name: str) -> list[int]:
    """Per-cluster caps as Python integers: one per cluster, or a single value repeated."""
    values = np.asarray(caps).ravel().tolist()
    if len(values) == 1 and n_clusters > 1:
        values = values * n_clusters
    if len(values) != n_clusters:
        raise ValueError(f"{name} must hold one value per cluster ({n_clusters}) or a single value, got {len(values)}.")
    return [check_scalar(c, name, "int") for c in values]
