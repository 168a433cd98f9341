"""ParGen and the theory of clustered federated unlearning with SecAgg+ inside each cluster.

Liu, Jiang, Jiang, Guo, Zhao, Lam, "Guaranteeing Data Privacy in Federated
Unlearning with Dynamic User Participation" (IEEE TDSC 22(3), 2025) split the
``N`` users at random into ``s = ⌊N/k⌋`` clusters (Alg. 1 lines 2-3), run SecAgg+
inside each one, and unlearn a user by retraining only its cluster. ParGen
(Alg. 2) picks the smallest cluster size ``k`` for which four requirements hold in
every cluster with probability ``1 - 2^-σ`` (or ``1 - 2^-η``):

- R1, Shamir security: fewer than ``t = ⌈ξk⌉`` adversaries (Lemma 1, Eq. (3));
- R2, Shamir correctness: at least ``t`` users alive after dropouts and
  unlearning (Lemma 2, Eq. (4));
- R3, connectivity: the Harary masking graph minus adversaries, dropouts and
  unlearned users stays connected (Lemma 3, Eq. (5));
- R4, unlearning capacity: at most ``ζk`` unlearned users per cluster, which caps
  the number of requests ``τ_seq`` and ``τ_bat`` (Lemmas 4.1 and 4.2, Eqs. (7), (9)).

``variant="printed"`` evaluates the formulas as printed; ``variant="corrected"``
fixes Lemma 2's sign error (Eq. (4')), replaces Lemma 3 by a Harary degree that
meets its own union bound, and replaces Eqs. (7)/(9) by the exact capacity.
Probabilities that are meant to be tiny are computed exactly, as fractions of
Python integers, never as ``1 - float``.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Literal

import flint
import numpy as np
from scipy.stats import beta, hypergeom

from fedlib._optional import import_optional
from fedlib._typing import SeedLike
from fedlib._validation import check_option, check_random_state, check_scalar
from fedlib.exceptions import InfeasibleParameters

if TYPE_CHECKING:
    import pandas as pd

#: ``ln 2``, the paper's conversion of a security parameter in bits to nats.
LN2 = math.log(2.0)

#: The two readings of the paper's formulas.
VARIANTS = ("printed", "corrected")

#: How Alg. 1 line 3 places the ``N - sk`` leftover users.
LEFTOVERS = ("random", "round_robin")

#: Default upper end of the integer search ``min{k >= 1 : f(k) >= 0}``.
DEFAULT_K_MAX = 10**7

Variant = Literal["printed", "corrected"]
Leftovers = Literal["random", "round_robin"]


# ---------------------------------------------------------------------------------------------------------------------
# validation helpers


def _exact(x: float) -> Fraction:
    """The decimal a user typed (0.1 as 1/10, not as its binary neighbour), so that ⌈0.7·60⌉ is 42, not 43."""
    return Fraction(repr(float(x)))


def _ceil_times(rate: float, k: int) -> int:
    return math.ceil(_exact(rate) * k)


def _floor_times(rate: float, k: int) -> int:
    return math.floor(_exact(rate) * k)


def _check_rates(gamma, delta, zeta, xi) -> tuple[float, float, float, float]:
    gamma = check_scalar(gamma, "gamma (γ)", "real", min_val=0.0, max_val=1.0, include_max=False)
    delta = check_scalar(delta, "delta (δ)", "real", min_val=0.0, max_val=1.0, include_max=False)
    zeta = check_scalar(zeta, "zeta (ζ)", "real", min_val=0.0, max_val=1.0, include_max=False)
    xi = check_scalar(xi, "xi (ξ)", "real", min_val=0.0, max_val=1.0, include_min=False)
    return gamma, delta, zeta, xi


def _check_k(k) -> tuple[np.ndarray, bool]:
    arr = np.asarray(k, dtype=np.float64)
    if arr.size and (not np.all(np.isfinite(arr)) or np.min(arr) < 1):
        raise ValueError(f"cluster sizes k must be finite and >= 1, got {k!r}.")
    return arr, arr.ndim == 0


def _out(values: np.ndarray, scalar: bool):
    return float(values) if scalar else values


def _check_sizes(cluster_sizes) -> list[int]:
    sizes = [check_scalar(k, "cluster size", "int", min_val=1) for k in np.asarray(cluster_sizes).ravel().tolist()]
    if not sizes:
        raise ValueError("cluster_sizes must name at least one cluster.")
    return sizes


def _check_caps(caps, n_clusters: int, name: str) -> list[int]:
    values = np.asarray(caps).ravel().tolist()
    if len(values) == 1 and n_clusters > 1:
        values = values * n_clusters
    if len(values) != n_clusters:
        raise ValueError(f"{name} must hold one value per cluster ({n_clusters}) or a single value, got {len(values)}.")
    return [check_scalar(c, name, "int") for c in values]


# ---------------------------------------------------------------------------------------------------------------------
# Lemmas 1-3: the conditions on k


def f1_shamir_security(k, *, n_users: int, gamma: float, xi: float, sigma: float):
    """Lemma 1, Eq. (3): ``f1(k) = 2(γ² + ξ² − 2ξγ)k + ln k − ln N − σ ln 2``.

    ``f1(k) >= 0`` makes the union bound ``(N/k)·exp(−2(t − γk)²/k)`` on the
    probability that some cluster holds ``t = ξk`` or more adversaries at most
    ``2^-σ`` (Liu et al. 2025, Lemma 1; the Hoeffding tail of Sec. II-C). The
    algebra is correct: ``γ² + ξ² − 2ξγ = (ξ − γ)²``.

    Parameters
    ----------
    k : float or array-like of float
        Cluster size(s), ``>= 1``.
    n_users : int
        ``N``.
    gamma : float
        ``γ``, the largest fraction of adversarial users.
    xi : float
        ``ξ = t/k``, the Shamir threshold rate.
    sigma : float
        ``σ``, the statistical security parameter in bits.

    Returns
    -------
    float or ndarray
        ``f1(k)``, of the shape of ``k``.

    Raises
    ------
    ValueError
        If a ``k`` is below 1 or a parameter is out of range.

    Examples
    --------
    >>> round(f1_shamir_security(41, n_users=200, gamma=0.1, xi=0.7, sigma=40), 3)
    0.209
    """
    arr, scalar = _check_k(k)
    n = check_scalar(n_users, "n_users (N)", "int", min_val=1)
    gamma, _, _, xi = _check_rates(gamma, 0.0, 0.0, xi)
    sigma = check_scalar(sigma, "sigma (σ)", "real", min_val=0.0)
    values = 2 * (gamma**2 + xi**2 - 2 * xi * gamma) * arr + (np.log(arr) - math.log(n) - sigma * LN2)
    return _out(values, scalar)


def f2_shamir_correctness(
    k, *, n_users: int, delta: float, zeta: float, xi: float, eta: float, variant: Variant = "printed"
):
    """Lemma 2: Eq. (4) as printed, or the corrected Eq. (4') ``2(1 − δ − ξ − ζ)²k + ln(k/N) − η ln 2``.

    Requirement 2 fails in a cluster when more than ``k − t − q`` of its users
    drop out (``t = ξk``, ``q = ζk`` unlearned), so the Hoeffding deviation is
    ``w = 1 − ξ − ζ − δ`` and the union bound over ``N/k`` clusters gives Eq. (4').
    The printed Eq. (4),
    ``2((1−δ)² + ξ² − 2(ξ+ζ)δ + 2ξ + 2ζ)k + ln k − ln N − η ln 2``, squares
    ``δk − k − t − q`` instead (a sign error) and drops the terms ``2ξζ + ζ²``;
    it is satisfied by far too small clusters.

    Parameters
    ----------
    k : float or array-like of float
        Cluster size(s), ``>= 1``.
    n_users : int
        ``N``.
    delta : float
        ``δ``, the largest fraction of dropout users.
    zeta : float
        ``ζ = q/k``, the largest fraction of unlearned users in a cluster.
    xi : float
        ``ξ = t/k``.
    eta : float
        ``η``, the correctness parameter in bits.
    variant : {"printed", "corrected"}, default="printed"
        Eq. (4) or Eq. (4').

    Returns
    -------
    float or ndarray
        ``f2(k)``, of the shape of ``k``.

    Raises
    ------
    InfeasibleParameters
        For ``variant="corrected"`` when ``ξ + ζ + δ >= 1``: then fewer than
        ``t`` users may remain in every cluster, whatever ``k``.
    ValueError
        If a ``k`` is below 1 or a parameter is out of range.

    Examples
    --------
    >>> f2_shamir_correctness(6, n_users=200, delta=0.1, zeta=0.1, xi=0.7, eta=40) >= 0
    True
    >>> f2_shamir_correctness(200, n_users=200, delta=0.1, zeta=0.1, xi=0.7, eta=40, variant="corrected") >= 0
    False
    """
    arr, scalar = _check_k(k)
    n = check_scalar(n_users, "n_users (N)", "int", min_val=1)
    _, delta, zeta, xi = _check_rates(0.0, delta, zeta, xi)
    eta = check_scalar(eta, "eta (η)", "real", min_val=0.0)
    check_option(variant, "variant", VARIANTS)
    tail = np.log(arr) - math.log(n) - eta * LN2
    if variant == "printed":
        slope = 2 * ((1 - delta) ** 2 + xi**2 - 2 * (xi + zeta) * delta + 2 * xi + 2 * zeta)
    else:
        _require_correctness_margin(delta, zeta, xi)
        slope = 2 * (1 - delta - xi - zeta) ** 2
    return _out(slope * arr + tail, scalar)


def f3_connectivity(
    k, *, gamma: float, delta: float, zeta: float, sigma: float, variant: Literal["printed", "derived"] = "printed"
):
    """Lemma 3: Eq. (5) as printed, or the condition its own proof derives.

    The proof bounds the probability that the Harary graph ``H(k, m)`` falls
    apart by ``k·p^{m/2}`` with ``p = γ + δ + ζ`` and sets ``m = ln k``. Requiring
    ``k·p^{(ln k)/2} <= 2^-σ`` is ``−(ln k·(1 + ½ ln p) + σ ln 2) >= 0``
    (``variant="derived"``), which no ``k >= 1`` meets once ``p >= e^{-2}``. The
    printed Eq. (5), ``−ln k · ln(k p) + 2σ ln 2 >= 0``, is a different
    inequality: it holds for all *small* ``k``, so ``min{k : f3(k) >= 0} = 1`` and
    Lemma 3 never constrains ``k``.

    Parameters
    ----------
    k : float or array-like of float
        Cluster size(s), ``>= 1``.
    gamma : float
        ``γ``.
    delta : float
        ``δ``.
    zeta : float
        ``ζ``.
    sigma : float
        ``σ`` in bits.
    variant : {"printed", "derived"}, default="printed"
        Eq. (5), or the inequality the proof's bound actually gives.

    Returns
    -------
    float or ndarray
        ``f3(k)``, of the shape of ``k``.

    Raises
    ------
    ValueError
        If ``p = γ + δ + ζ`` is not in ``(0, 1)``, a ``k`` is below 1 or a
        parameter is out of range.

    Examples
    --------
    >>> f3_connectivity(1, gamma=0.1, delta=0.1, zeta=0.1, sigma=40) > 0
    True
    >>> f3_connectivity(60, gamma=0.1, delta=0.1, zeta=0.1, sigma=40, variant="derived") < 0
    True
    """
    arr, scalar = _check_k(k)
    gamma, delta, zeta, _ = _check_rates(gamma, delta, zeta, 1.0)
    sigma = check_scalar(sigma, "sigma (σ)", "real", min_val=0.0)
    check_option(variant, "variant", ("printed", "derived"))
    p = gamma + delta + zeta
    if not 0 < p < 1:
        raise ValueError(f"Lemma 3 needs 0 < p = γ + δ + ζ < 1, got p = {p!r}.")
    if variant == "printed":
        values = -np.log(arr) * np.log(arr * p) + 2 * sigma * LN2
    else:
        values = -(np.log(arr) * (1 + 0.5 * math.log(p)) + sigma * LN2)
    return _out(values, scalar)


def harary_degree(k: int, p: float, sigma: float, variant: Variant = "printed", *, n_clusters: int = 1) -> int:
    """The Harary degree ``m`` of SecAgg+ inside a cluster of ``k`` users (Liu et al. 2025, Lemma 3).

    ``"printed"``: ``m = ln k`` "as same to the setting in SecAgg+", rounded to
    the nearest even number (at least 2). ``"corrected"``: the smallest even
    ``m`` with ``n_clusters · k · p^{m/2} <= 2^-σ``, i.e.
    ``m = 2⌈(σ ln 2 + ln(n_clusters·k)) / (−ln p)⌉``: Lemma 3's union bound over
    the ``k`` circle positions of each of the ``n_clusters`` clusters (Requirement 3
    quantifies over all clusters; ``n_clusters=1`` is the per-cluster bound of the
    paper). A degree ``>= k − 1`` means the complete graph, i.e. plain SecAgg; the
    result is then capped at the smallest even number ``>= k − 1``.

    Parameters
    ----------
    k : int
        Cluster size, ``>= 1``.
    p : float
        Fraction of the cluster that is removed (adversarial, dropped or
        unlearned), ``γ + δ + ζ`` in the paper; in ``[0, 1)``. Unused by ``"printed"``.
    sigma : float
        ``σ`` in bits.
    variant : {"printed", "corrected"}, default="printed"
        ``m = ln k``, or the degree that meets the union bound.
    n_clusters : int, default=1
        Clusters the union bound runs over (``"corrected"`` only).

    Returns
    -------
    int
        An even degree ``m >= 2`` (``>= k − 1`` meaning the complete graph).

    Raises
    ------
    ValueError
        If ``p`` is not in ``[0, 1)`` or another argument is out of range.

    Examples
    --------
    >>> harary_degree(60, 0.3, 40)
    4
    >>> harary_degree(60, 0.3, 40, "corrected")
    54
    >>> harary_degree(20, 0.3, 40, "corrected")  # the complete graph
    20
    """
    k = check_scalar(k, "k", "int", min_val=1)
    p = check_scalar(p, "p", "real", min_val=0.0, max_val=1.0, include_max=False)
    sigma = check_scalar(sigma, "sigma (σ)", "real", min_val=0.0)
    n_clusters = check_scalar(n_clusters, "n_clusters", "int", min_val=1)
    check_option(variant, "variant", VARIANTS)
    if variant == "printed":
        m = max(2, 2 * round(math.log(k) / 2))
    elif p == 0:
        m = 2
    else:
        m = max(2, 2 * math.ceil((sigma * LN2 + math.log(n_clusters * k)) / -math.log(p)))
    complete = (k - 1) + (k - 1) % 2
    return int(min(m, max(complete, 2)))


def balanced_threshold_rate(gamma: float, delta: float, zeta: float) -> float:
    """The threshold rate ``ξ* = (1 − δ − ζ + γ)/2`` that gives Lemma 1 and corrected Lemma 2 equal margins.

    Lemma 1 needs ``ξ − γ > 0`` and Eq. (4') needs ``1 − δ − ξ − ζ > 0``; the cluster
    size each requires falls with the square of its margin, so for ``σ = η`` the
    smallest ``k`` that meets both is reached where the margins are equal.

    Parameters
    ----------
    gamma : float
        ``γ``.
    delta : float
        ``δ``.
    zeta : float
        ``ζ``.

    Returns
    -------
    float
        ``ξ*``.

    Raises
    ------
    InfeasibleParameters
        If ``γ + δ + ζ >= 1``: no threshold rate leaves both margins positive.

    Examples
    --------
    >>> balanced_threshold_rate(0.1, 0.1, 0.1)
    0.45
    """
    gamma, delta, zeta, _ = _check_rates(gamma, delta, zeta, 1.0)
    if gamma + delta + zeta >= 1:
        raise InfeasibleParameters(f"γ + δ + ζ = {gamma + delta + zeta:g} >= 1: no ξ with γ < ξ < 1 − δ − ζ exists.")
    return round((1 - delta - zeta + gamma) / 2, 12)


def _require_correctness_margin(delta: float, zeta: float, xi: float) -> None:
    if xi + zeta + delta >= 1:
        raise InfeasibleParameters(
            f"ξ + ζ + δ = {xi + zeta + delta:g} >= 1: after δ dropouts and ζ unlearned users a cluster keeps at "
            f"most a fraction 1 − δ − ζ = {1 - delta - zeta:g} of its users, fewer than the Shamir threshold "
            f"ξ = {xi:g} (Lemma 2, corrected: requires ξ + ζ + δ < 1)."
        )


def _smallest_k(f, k_max: int, what: str) -> int:
    """``min{k >= 1 : f(k) >= 0}`` by a vectorised scan over growing blocks of integers."""
    lo, size = 1, 1024
    while lo <= k_max:
        hi = min(k_max, lo + size - 1)
        ks = np.arange(lo, hi + 1, dtype=np.float64)
        hits = np.flatnonzero(np.asarray(f(ks)) >= 0)
        if hits.size:
            return lo + int(hits[0])
        lo, size = hi + 1, 2 * size
    raise InfeasibleParameters(f"no cluster size k <= k_max = {k_max} satisfies {what}.")


# ---------------------------------------------------------------------------------------------------------------------
# Lemmas 4.1 and 4.2 as printed


def tau_sequential_printed(n_users: int, k: int, sigma: float) -> int:
    """Alg. 2 line 5 (Lemma 4.1, Eq. (7)): ``τ_seq = ⌊sqrt(N³ σ ln 2 / (2k³))⌋``.

    This is the paper's sequential capacity. Its proof bounds a binomial CDF from
    above where a lower bound is needed, so the value does not bound the risk:
    it grows with ``σ`` and ignores ``ζ``.

    Parameters
    ----------
    n_users : int
        ``N``.
    k : int
        Cluster size.
    sigma : float
        ``σ`` in bits.

    Returns
    -------
    int
        ``τ_seq``.

    Raises
    ------
    ValueError
        If an argument is out of range.

    Examples
    --------
    >>> tau_sequential_printed(200, 41, 40)
    40
    """
    n = check_scalar(n_users, "n_users (N)", "int", min_val=1)
    k = check_scalar(k, "k", "int", min_val=1)
    sigma = check_scalar(sigma, "sigma (σ)", "real", min_val=0.0)
    return math.floor(math.sqrt(n**3 * sigma * LN2 / (2 * k**3)))


def tau_batch_printed(n_users: int, k: int, zeta: float, sigma: float) -> int | None:
    """Alg. 2 line 6: ``τ_bat = ⌊N²ζ² / (N²/k² − 2σ ln 2 + 2 ln(N/k))⌋``, or None when the denominator is ``<= 0``.

    Lemma 4.2 states its precondition ``N²/k² − 2σ ln 2 + 2 ln(N/k) > 0``; below it
    (fewer than about 7.3 clusters at ``σ = 40``) line 6 is undefined or negative.
    Line 6 does not solve Eq. (9) either.

    Parameters
    ----------
    n_users : int
        ``N``.
    k : int
        Cluster size.
    zeta : float
        ``ζ``.
    sigma : float
        ``σ`` in bits.

    Returns
    -------
    int or None
        ``τ_bat``, or None when line 6 is undefined.

    Raises
    ------
    ValueError
        If an argument is out of range.

    Examples
    --------
    >>> tau_batch_printed(1000, 43, 0.1, 40), tau_batch_printed(200, 41, 0.1, 40) is None
    (20, True)
    """
    n = check_scalar(n_users, "n_users (N)", "int", min_val=1)
    k = check_scalar(k, "k", "int", min_val=1)
    _, _, zeta, _ = _check_rates(0.0, 0.0, zeta, 1.0)
    sigma = check_scalar(sigma, "sigma (σ)", "real", min_val=0.0)
    denominator = n**2 / k**2 - 2 * sigma * LN2 + 2 * math.log(n / k)
    if denominator <= 0:
        return None
    return math.floor(n**2 * zeta**2 / denominator)


def f_batch_capacity(
    tau, *, n_users: int, k: int, zeta: float, sigma: float, variant: Literal["printed", "substituted"] = "printed"
):
    """Lemma 4.2, Eq. (9) as printed, or with the proof's exponent substituted correctly.

    The proof's per-cluster exponent is ``2s²(q − τ/s)² / (τ(s − 1))`` with
    ``s = N/k`` and ``q = ζk``; since ``s(q − τ/s) = Nζ − τ``, the union bound gives
    ``2k(Nζ − τ)² / (τ(N − k)) + ln k − ln N − σ ln 2 >= 0`` (``"substituted"``).
    The printed Eq. (9) has ``(Nζ − τk)²/(kτ(N − k))`` and becomes *easier* to meet
    as ``τ`` grows. Neither is a valid tail bound (Hoeffding's exponent for a
    Binomial(τ, 1/s) count is smaller by a factor ``s²/(s − 1)``).

    Parameters
    ----------
    tau : float or array-like of float
        Number(s) of requests, ``> 0``.
    n_users : int
        ``N``.
    k : int
        Cluster size, ``< N``.
    zeta : float
        ``ζ``.
    sigma : float
        ``σ`` in bits.
    variant : {"printed", "substituted"}, default="printed"
        Eq. (9), or the proof's exponent with ``s = N/k``, ``q = ζk`` substituted.

    Returns
    -------
    float or ndarray
        The left-hand side of Eq. (9), of the shape of ``tau``.

    Raises
    ------
    ValueError
        If a ``tau`` is not positive or ``k >= N``.

    Examples
    --------
    >>> round(f_batch_capacity(1, n_users=1000, k=43, zeta=0.1, sigma=40), 2)
    -30.71
    """
    arr = np.asarray(tau, dtype=np.float64)
    if arr.size and (not np.all(np.isfinite(arr)) or np.min(arr) <= 0):
        raise ValueError(f"tau must be finite and > 0, got {tau!r}.")
    n = check_scalar(n_users, "n_users (N)", "int", min_val=2)
    k = check_scalar(k, "k", "int", min_val=1, max_val=n - 1)
    _, _, zeta, _ = _check_rates(0.0, 0.0, zeta, 1.0)
    sigma = check_scalar(sigma, "sigma (σ)", "real", min_val=0.0)
    check_option(variant, "variant", ("printed", "substituted"))
    tail = math.log(k) - math.log(n) - sigma * LN2
    if variant == "printed":
        values = 2 * (n * zeta - arr * k) ** 2 / (k * arr * (n - k)) + tail
    else:
        values = 2 * k * (n * zeta - arr) ** 2 / (arr * (n - k)) + tail
    return _out(values, arr.ndim == 0)


# ---------------------------------------------------------------------------------------------------------------------
# exact probabilities over random clusterings


def _within_caps_coefficients(sizes: list[int], caps: list[int], degree: int) -> list[int]:
    """Coefficients ``c_0..c_degree`` of ``Π_i Σ_{j <= cap_i} C(k_i, j) x^j`` (exact integers).

    ``c_n`` counts the ``n``-subsets of the users that put at most ``cap_i`` users into
    every cluster ``i``. Clusters of equal size and cap share one factor, raised to
    their number by FLINT's truncated power.
    """
    result = flint.fmpz_poly([1])
    for (size, cap), count in Counter(zip(sizes, caps, strict=True)).items():
        top = min(cap, size, degree)
        if top < 0:
            return [0] * (degree + 1)
        factor = flint.fmpz_poly([math.comb(size, j) for j in range(top + 1)])
        result = result.mul_low(factor.pow_trunc(count, degree + 1), degree + 1)
    coefficients = [int(c) for c in result.coeffs()]
    return coefficients + [0] * (degree + 1 - len(coefficients))


def overflow_probability(cluster_sizes, caps, n_drawn: int) -> Fraction:
    """Exact probability that a uniformly random ``n_drawn``-subset of users puts more than ``caps[i]`` in a cluster.

    With ``N = Σ k_i`` users and ``c`` the coefficient of ``x^{n_drawn}`` in
    ``Π_i Σ_{j <= cap_i} C(k_i, j) x^j`` (the subsets that respect every cap), the
    probability is ``(C(N, n_drawn) − c) / C(N, n_drawn)``: the multivariate
    hypergeometric law, exactly, with no independence or union bound. It is the
    failure probability of Requirement 4 (caps ``⌊ζk_i⌋``, ``n_drawn = τ``), of
    Requirement 1 (caps ``t_i − 1``, ``n_drawn = |A|``) and of Requirement 2
    (caps ``k_i − t_i − q_i``, ``n_drawn = |D|``) of Liu et al. (2025).

    Parameters
    ----------
    cluster_sizes : array-like of int
        ``k_i >= 1``, one per cluster.
    caps : int or array-like of int
        The largest allowed count per cluster (one value, or one per cluster); a
        negative cap can never be met.
    n_drawn : int
        Size of the random subset, ``0 <= n_drawn <= N``.

    Returns
    -------
    fractions.Fraction
        The exact probability.

    Raises
    ------
    ValueError
        If ``n_drawn`` exceeds ``N`` or the sizes and caps do not match.

    Examples
    --------
    >>> overflow_probability([2, 2], 1, 2)  # both drawn users in the same cluster: 2 of the 6 pairs
    Fraction(1, 3)
    """
    sizes = _check_sizes(cluster_sizes)
    caps = _check_caps(caps, len(sizes), "caps")
    n = sum(sizes)
    n_drawn = check_scalar(n_drawn, "n_drawn", "int", min_val=0, max_val=n)
    total = math.comb(n, n_drawn)
    within = _within_caps_coefficients(sizes, caps, n_drawn)[n_drawn]
    return Fraction(total - within, total)


def r4_failure_probability(cluster_sizes, caps, tau: int) -> Fraction:
    """Exact ``Pr[R4 fails]``: some cluster loses more than its cap to ``τ`` uniformly random requests (Requirement 4).

    The set ``Q`` of unlearned users is a uniformly random ``τ``-subset of the
    ``N`` users in the sequential setting (each request is a random remaining
    user) and in the batch setting alike, so both settings carry this same risk.

    Parameters
    ----------
    cluster_sizes : array-like of int
        ``k_i``, one per cluster.
    caps : int or array-like of int
        ``q_i = ⌊ζ k_i⌋``, the largest number of unlearned users per cluster.
    tau : int
        Number of requests ``τ``.

    Returns
    -------
    fractions.Fraction
        The exact probability.

    Raises
    ------
    ValueError
        If ``tau`` exceeds ``N`` or the sizes and caps do not match.

    Examples
    --------
    >>> r4_failure_probability([50] * 4, 5, 5)  # five requests cannot exceed a cap of five
    Fraction(0, 1)
    >>> float(r4_failure_probability([50] * 4, 5, 6))  # all six in one cluster
    0.000771312456642661
    """
    return overflow_probability(cluster_sizes, caps, tau)


def _log2_fraction(x: Fraction) -> float:
    if x == 0:
        return -math.inf
    return math.log2(x.numerator) - math.log2(x.denominator)


def _at_most_two_to_minus(x: Fraction, sigma: float) -> bool:
    """``x <= 2^-σ``, exactly for integral ``σ``, to double precision of ``log2`` otherwise."""
    if float(sigma).is_integer():
        return x <= Fraction(1, 2 ** int(sigma))
    return _log2_fraction(x) <= -sigma


def unlearning_capacity_exact(cluster_sizes, caps, sigma: float) -> int:
    """The largest ``τ`` with ``Pr[R4 fails] <= 2^-σ`` for uniformly random requests, computed exactly.

    ``Pr[R4 fails]`` (:func:`r4_failure_probability`) does not decrease with ``τ``
    (a random ``(τ+1)``-subset contains a random ``τ``-subset), so the capacity is
    the last ``τ`` before the exact failure probability first exceeds ``2^-σ``. This
    replaces Lemmas 4.1 and 4.2 (Eqs. (7), (9) and Alg. 2 lines 5-6), whose bounds
    run in the wrong direction; it holds for the sequential and the batch
    setting alike.

    Parameters
    ----------
    cluster_sizes : array-like of int
        ``k_i``, one per cluster.
    caps : int or array-like of int
        ``q_i = ⌊ζ k_i⌋``, one value or one per cluster.
    sigma : float
        ``σ`` in bits.

    Returns
    -------
    int
        The capacity ``τ`` (at least 0; at most ``Σ q_i``).

    Raises
    ------
    ValueError
        If the sizes and caps do not match or ``σ`` is negative.

    Examples
    --------
    >>> unlearning_capacity_exact([50] * 4, 5, 40)
    5
    """
    sizes = _check_sizes(cluster_sizes)
    caps = _check_caps(caps, len(sizes), "caps")
    if min(caps) < 0:
        raise ValueError(f"caps must be >= 0 (a negative cap fails even without requests), got {min(caps)}.")
    caps = [min(c, k) for c, k in zip(caps, sizes, strict=True)]
    sigma = check_scalar(sigma, "sigma (σ)", "real", min_val=0.0)
    n = sum(sizes)
    most = sum(max(c, 0) for c in caps)  # beyond this some cap is always exceeded
    degree = min(most, 64)
    while True:
        coefficients = _within_caps_coefficients(sizes, caps, degree)
        for tau in range(degree + 1):
            total = math.comb(n, tau)
            if not _at_most_two_to_minus(Fraction(total - coefficients[tau], total), sigma):
                return tau - 1
        if degree >= most:
            return most
        degree = min(most, 2 * degree)


@dataclass(frozen=True)
class RequirementRisk:
    """The probability that one requirement fails on a random clustering, exactly and by a union bound.

    Parameters
    ----------
    requirement : str
        ``"R1"``, ``"R2"``, ``"R2 (realised Q)"`` or ``"R4"`` (Liu et al. 2025, Requirements 1, 2 and 4).
    exact : fractions.Fraction
        The exact probability (multivariate hypergeometric).
    union_bound : float
        ``Σ_i Pr[cluster i fails]``, each term an exact hypergeometric tail
        (``scipy.stats.hypergeom.sf``): the paper's Boole step without its Hoeffding step.
    n_drawn : int
        Size of the random set: ``|A|``, ``|D|``, ``|D| + τ`` or ``τ``.
    caps : tuple of int
        The largest admissible count per cluster.

    Examples
    --------
    >>> risk = requirement_failure_probabilities([50] * 4, gamma=0.1, delta=0.1, zeta=0.1, xi=0.7)["R1"]
    >>> risk.exact, risk.caps[0]
    (Fraction(0, 1), 34)
    """

    requirement: str
    exact: Fraction
    union_bound: float
    n_drawn: int
    caps: tuple[int, ...]

    @property
    def log2_exact(self) -> float:
        """``log2`` of the exact probability (``-inf`` for 0), accurate however small the probability."""
        return _log2_fraction(self.exact)


def requirement_failure_probabilities(
    cluster_sizes, *, gamma: float, delta: float, zeta: float, xi: float, tau: int = 0
) -> dict[str, RequirementRisk]:
    """Exact failure probabilities of Requirements 1, 2 and 4 for given cluster sizes (Liu et al. 2025, Sec. III).

    The adversaries ``A`` (``⌊γN⌋`` users), the dropouts ``D`` (``⌊δN⌋``) and the
    unlearned users ``Q`` (``τ``) are uniformly random sets, as in the proofs of
    Lemmas 1, 2 and 4. A cluster of ``k_i`` users has the Shamir threshold
    ``t_i = ⌈ξ k_i⌉`` and the removal cap ``q_i = ⌊ζ k_i⌋``.

    - R1 fails when some cluster holds ``t_i`` or more adversaries.
    - R2 fails when some cluster keeps fewer than ``t_i`` users after its dropouts
      and ``q_i`` unlearned users: more than ``k_i − t_i − q_i`` dropouts. This is
      Lemma 2's event, the worst case over every ``Q`` that Requirement 4 admits.
    - "R2 (realised Q)": Requirement 2 for the ``τ`` random unlearned users
      themselves; ``D ∪ Q`` is a uniformly random set of ``⌊δN⌋ + τ`` users, and R2
      fails when more than ``k_i − t_i`` of them fall into some cluster.
    - R4 fails when some cluster holds more than ``q_i`` of the ``τ`` unlearned users.

    Parameters
    ----------
    cluster_sizes : array-like of int
        ``k_i``, one per cluster.
    gamma : float
        ``γ``.
    delta : float
        ``δ``.
    zeta : float
        ``ζ``.
    xi : float
        ``ξ``.
    tau : int, default=0
        Number of unlearning requests, for R4.

    Returns
    -------
    dict of str to RequirementRisk
        Keys ``"R1"``, ``"R2"``, ``"R2 (realised Q)"``, ``"R4"``.

    Raises
    ------
    ValueError
        If a parameter is out of range or ``τ > N``.

    Examples
    --------
    >>> risks = requirement_failure_probabilities([50] * 4, gamma=0.1, delta=0.1, zeta=0.1, xi=0.7)
    >>> round(risks["R2"].union_bound, 5)
    0.00956
    """
    sizes = _check_sizes(cluster_sizes)
    gamma, delta, zeta, xi = _check_rates(gamma, delta, zeta, xi)
    n = sum(sizes)
    n_drop = _floor_times(delta, n)
    tau = check_scalar(tau, "tau (τ)", "int", min_val=0, max_val=n - n_drop)
    thresholds = [_ceil_times(xi, k) for k in sizes]
    removal_caps = [_floor_times(zeta, k) for k in sizes]
    specs = {
        "R1": (_floor_times(gamma, n), [t - 1 for t in thresholds]),
        "R2": (n_drop, [k - t - q for k, t, q in zip(sizes, thresholds, removal_caps, strict=True)]),
        "R2 (realised Q)": (n_drop + tau, [k - t for k, t in zip(sizes, thresholds, strict=True)]),
        "R4": (tau, removal_caps),
    }
    risks = {}
    for name, (n_drawn, caps) in specs.items():
        union = sum(1.0 if c < 0 else float(hypergeom.sf(c, n, n_drawn, k)) for k, c in zip(sizes, caps, strict=True))
        risks[name] = RequirementRisk(name, overflow_probability(sizes, caps, n_drawn), union, n_drawn, tuple(caps))
    return risks


# ---------------------------------------------------------------------------------------------------------------------
# ParGen


@dataclass(frozen=True)
class ParGenResult:
    """The output of ParGen (Liu et al. 2025, Alg. 2) with the intermediate quantities.

    Parameters
    ----------
    n_users : int
        ``N``.
    gamma : float
        ``γ``.
    delta : float
        ``δ``.
    zeta : float
        ``ζ``.
    xi : float
        ``ξ``.
    sigma : float
        ``σ``.
    eta : float
        ``η``.
    variant : {"printed", "corrected"}
        Which formulas produced the result.
    k1 : int
        ``min{k : f1(k) >= 0}`` (Alg. 2 line 1, Lemma 1).
    k2 : int
        ``min{k : f2(k) >= 0}`` (line 2; Eq. (4) or the corrected Eq. (4')).
    k3 : int or None
        ``min{k : f3(k) >= 0}`` (line 3, Eq. (5)); None for ``"corrected"``,
        where Requirement 3 is met by the Harary degree instead.
    k : int
        ``max(k1, k2, k3)`` (line 4), the designed cluster size.
    n_clusters : int
        ``s = ⌊N/k⌋`` (line 4); 0 when ``k > N`` (Remark 6, printed variant only).
    tau_seq : int or None
        Sequential capacity: Eq. (7) (line 5) when printed, the exact capacity
        when corrected; None when there is no cluster (or the exact capacity was
        not asked for).
    tau_bat : int or None
        Batch capacity: line 6 when printed (None when its denominator is
        ``<= 0``), the exact capacity when corrected.
    threshold : int
        ``t = ⌈ξk⌉``.
    removal_cap : int
        ``q = ⌊ζk⌋``, the most unlearned users a cluster of ``k`` may lose.
    degree : int
        The Harary degree ``m`` (:func:`harary_degree`; ``>= k − 1`` means the complete graph).
    cluster_sizes : tuple of int
        Sizes after the ``N − sk`` leftovers are spread one per cluster
        (``leftovers="round_robin"``); empty when ``s = 0``.

    Examples
    --------
    >>> r = pargen(200, gamma=0.1, delta=0.1, zeta=0.1, xi=0.7, sigma=40, eta=40)
    >>> (r.k1, r.k2, r.k3, r.k, r.n_clusters, r.tau_seq, r.tau_bat), r.cluster_sizes
    ((41, 6, 1, 41, 4, 40, None), (50, 50, 50, 50))
    """

    n_users: int
    gamma: float
    delta: float
    zeta: float
    xi: float
    sigma: float
    eta: float
    variant: str
    k1: int
    k2: int
    k3: int | None
    k: int
    n_clusters: int
    tau_seq: int | None
    tau_bat: int | None
    threshold: int
    removal_cap: int
    degree: int
    cluster_sizes: tuple[int, ...]

    @property
    def cluster_thresholds(self) -> tuple[int, ...]:
        """``t_i = ⌈ξ k_i⌉`` for each of :attr:`cluster_sizes`."""
        return tuple(_ceil_times(self.xi, size) for size in self.cluster_sizes)

    @property
    def cluster_caps(self) -> tuple[int, ...]:
        """``q_i = ⌊ζ k_i⌋`` for each of :attr:`cluster_sizes`: the most unlearned users cluster ``i`` may lose."""
        return tuple(_floor_times(self.zeta, size) for size in self.cluster_sizes)

    @property
    def feasible(self) -> bool:
        """Whether at least one cluster of size ``k`` fits into ``N`` users (Remark 6)."""
        return self.n_clusters >= 1

    @property
    def binding(self) -> str:
        """The lemma whose ``k`` is the largest (ties name the first): ``"Lemma 1"``, ``"Lemma 2"`` or ``"Lemma 3"``."""
        ks = {"Lemma 1": self.k1, "Lemma 2": self.k2, "Lemma 3": self.k3 if self.k3 is not None else 0}
        return max(ks, key=lambda name: ks[name])


def balanced_cluster_sizes(n_users: int, k: int) -> tuple[int, ...]:
    """Cluster sizes when the ``N − sk`` leftover users go one per cluster (round robin), largest first.

    Parameters
    ----------
    n_users : int
        ``N``.
    k : int
        Designed cluster size, ``1 <= k <= N``.

    Returns
    -------
    tuple of int
        ``s = ⌊N/k⌋`` sizes that sum to ``N``. More than ``s`` leftovers give
        some clusters several extra users.

    Raises
    ------
    InfeasibleParameters
        If ``k > N`` (no cluster fits, Remark 6).

    Examples
    --------
    >>> balanced_cluster_sizes(500, 42)
    (46, 46, 46, 46, 46, 45, 45, 45, 45, 45, 45)
    """
    n = check_scalar(n_users, "n_users (N)", "int", min_val=1)
    k = check_scalar(k, "k", "int", min_val=1)
    if k > n:
        raise InfeasibleParameters(f"cluster size k = {k} exceeds the N = {n} users: no cluster fits (Remark 6).")
    s = n // k
    base, extra = divmod(n, s)
    return tuple([base + 1] * extra + [base] * (s - extra))


def pargen(
    n_users: int,
    *,
    gamma: float,
    delta: float,
    zeta: float,
    xi: float,
    sigma: float,
    eta: float,
    variant: Variant = "printed",
    k_max: int | None = None,
    exact_capacity: bool = True,
) -> ParGenResult:
    """ParGen (Liu et al. 2025, Alg. 2): the smallest cluster size meeting Lemmas 1-3, and the unlearning capacities.

    Lines 1-3 are integer searches ``k_j = min{k >= 1 : f_j(k) >= 0}`` (so
    Alg. 2's ceilings and the proof's "floor" do not matter), line 4 takes
    ``k = max(k1, k2, k3)`` and ``s = ⌊N/k⌋``.

    ``variant="printed"`` follows the paper literally: Eqs. (3), (4), (5), then
    ``τ_seq`` from Eq. (7) and ``τ_bat`` from line 6, under the lemmas' side
    conditions ``ξ > γ``, ``ξ > δ``, ``ξ > ζ``. When ``k > N`` it returns ``s = 0``
    and no capacities (Remark 6). ``variant="corrected"`` uses Eq. (4')
    (requiring ``ξ + ζ + δ < 1``), drops Eq. (5) and sets the Harary degree so
    that Lemma 3's union bound over all clusters is ``<= 2^-σ``, and replaces
    ``τ_seq`` and ``τ_bat`` by :func:`unlearning_capacity_exact` for the
    round-robin cluster sizes; it raises when no cluster fits.

    Parameters
    ----------
    n_users : int
        ``N >= 1``.
    gamma : float
        ``γ``, largest fraction of adversarial users, in ``[0, 1)``.
    delta : float
        ``δ``, largest fraction of dropout users, in ``[0, 1)``.
    zeta : float
        ``ζ``, largest fraction of unlearned users per cluster, in ``[0, 1)``.
    xi : float
        ``ξ = t/k``, the Shamir threshold rate, in ``(0, 1]``.
    sigma : float
        ``σ``, statistical security parameter in bits.
    eta : float
        ``η``, correctness parameter in bits.
    variant : {"printed", "corrected"}, default="printed"
        The paper's formulas, or the corrected ones.
    k_max : int or None, default=None
        Upper end of the integer searches (``10**7`` when None).
    exact_capacity : bool, default=True
        ``"corrected"`` only: compute the exact capacity; False leaves ``τ_seq``
        and ``τ_bat`` None (for feasibility scans over many ``N``).

    Returns
    -------
    ParGenResult
        ``k``, ``s``, ``τ_seq``, ``τ_bat`` and the intermediate quantities.

    Raises
    ------
    InfeasibleParameters
        Printed: if ``ξ <= γ``, ``ξ <= δ`` or ``ξ <= ζ`` (the lemmas' stated
        conditions). Corrected: if ``ξ <= γ`` (Lemma 1), ``ξ + ζ + δ >= 1``
        (Lemma 2), or the smallest admissible ``k`` exceeds ``N`` (Remark 6).
        Both: if no ``k <= k_max`` satisfies a lemma.
    ValueError
        If a parameter is out of range.

    Examples
    --------
    >>> r = pargen(200, gamma=0.1, delta=0.1, zeta=0.1, xi=0.7, sigma=40, eta=40)
    >>> r.k, r.n_clusters, r.binding
    (41, 4, 'Lemma 1')
    >>> r = pargen(1000, gamma=0.1, delta=0.1, zeta=0.1, xi=0.45, sigma=40, eta=40, variant="corrected")
    >>> r.k, r.n_clusters, r.tau_seq, r.degree
    (122, 8, 12, 58)
    """
    n = check_scalar(n_users, "n_users (N)", "int", min_val=1)
    gamma, delta, zeta, xi = _check_rates(gamma, delta, zeta, xi)
    sigma = check_scalar(sigma, "sigma (σ)", "real", min_val=0.0)
    eta = check_scalar(eta, "eta (η)", "real", min_val=0.0)
    check_option(variant, "variant", VARIANTS)
    k_max = DEFAULT_K_MAX if k_max is None else check_scalar(k_max, "k_max", "int", min_val=1)
    if xi <= gamma:
        raise InfeasibleParameters(
            f"ξ = {xi:g} <= γ = {gamma:g}: a cluster may hold a fraction γ of adversaries, as many as the Shamir "
            "threshold, whatever k (Lemma 1 requires ξ > γ)."
        )
    if variant == "printed":
        for name, value in (("δ", delta), ("ζ", zeta)):
            if xi <= value:
                raise InfeasibleParameters(f"ξ = {xi:g} <= {name} = {value:g}: Lemma 2 as printed requires ξ > {name}.")
    else:
        _require_correctness_margin(delta, zeta, xi)

    k1 = _smallest_k(lambda ks: f1_shamir_security(ks, n_users=n, gamma=gamma, xi=xi, sigma=sigma), k_max, "Lemma 1")
    k2 = _smallest_k(
        lambda ks: f2_shamir_correctness(ks, n_users=n, delta=delta, zeta=zeta, xi=xi, eta=eta, variant=variant),
        k_max,
        "Lemma 2" + (" (Eq. (4'))" if variant == "corrected" else ""),
    )
    p = gamma + delta + zeta
    common = dict(n_users=n, gamma=gamma, delta=delta, zeta=zeta, xi=xi, sigma=sigma, eta=eta, variant=variant)
    if variant == "printed":
        if p == 0:  # nobody is removed: Requirement 3 holds for every k (Eq. (5) would take ln 0)
            k3 = 1
        else:
            k3 = _smallest_k(
                lambda ks: f3_connectivity(ks, gamma=gamma, delta=delta, zeta=zeta, sigma=sigma), k_max, "Lemma 3"
            )
        k = max(k1, k2, k3)
        s = n // k
        sizes = balanced_cluster_sizes(n, k) if s else ()
        return ParGenResult(
            **common,
            k1=k1,
            k2=k2,
            k3=k3,
            k=k,
            n_clusters=s,
            tau_seq=tau_sequential_printed(n, k, sigma) if s else None,
            tau_bat=tau_batch_printed(n, k, zeta, sigma) if s else None,
            threshold=_ceil_times(xi, k),
            removal_cap=_floor_times(zeta, k),
            degree=harary_degree(k, p, sigma, "printed"),
            cluster_sizes=sizes,
        )
    k = max(k1, k2)
    if k > n:
        binding = "Lemma 1" if k1 >= k2 else "Lemma 2 (Eq. (4'))"
        raise InfeasibleParameters(
            f"the smallest cluster size meeting {binding} is k = {k} > N = {n}: no cluster fits (Remark 6); "
            f"k1 = {k1}, k2 = {k2}.",
            k1=k1,
            k2=k2,
            k=k,
            n_users=n,
        )
    s = n // k
    sizes = balanced_cluster_sizes(n, k)
    capacity = (
        unlearning_capacity_exact(sizes, [_floor_times(zeta, size) for size in sizes], sigma)
        if exact_capacity
        else None
    )
    return ParGenResult(
        **common,
        k1=k1,
        k2=k2,
        k3=None,
        k=k,
        n_clusters=s,
        tau_seq=capacity,
        tau_bat=capacity,
        threshold=_ceil_times(xi, k),
        removal_cap=_floor_times(zeta, k),
        degree=harary_degree(max(sizes), p, sigma, "corrected", n_clusters=s),
        cluster_sizes=sizes,
    )


# ---------------------------------------------------------------------------------------------------------------------
# clustering (Alg. 1 lines 2-3), vectorised over trials


def _cluster_layout(
    rng: np.random.Generator, n_trials: int, n_users: int, k: int, leftovers: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Random clusterings of users ``0..N-1``: cluster label and slot on the cluster's circle, per trial.

    Alg. 1: a random permutation fills ``s`` clusters of ``k`` (line 2); the
    ``N − sk`` leftovers go to independent uniform clusters, or round robin over
    a random order of the clusters (line 3). The slot orders a cluster's members
    (the first ``k`` in permutation order, then its leftovers), which is a
    uniformly random order: the Harary circle of Lemma 3.

    Returns ``labels`` and ``slots`` of shape (n_trials, N) and ``sizes`` of shape (n_trials, s).
    """
    s = n_users // k
    r = n_users - s * k
    user_at = rng.permuted(np.tile(np.arange(n_users), (n_trials, 1)), axis=1)
    block = np.arange(s * k)
    pos_labels = np.empty((n_trials, n_users), dtype=np.int64)
    pos_slots = np.empty((n_trials, n_users), dtype=np.int64)
    pos_labels[:, : s * k] = block // k
    pos_slots[:, : s * k] = block % k
    if r:
        if leftovers == "random":
            extra = rng.integers(0, s, size=(n_trials, r))
        else:
            order = rng.permuted(np.tile(np.arange(s), (n_trials, 1)), axis=1)
            extra = order[:, np.arange(r) % s]
        onehot = extra[:, :, None] == np.arange(s)[None, None, :]
        rank = np.take_along_axis(np.cumsum(onehot, axis=1), extra[:, :, None], axis=2)[:, :, 0] - 1
        pos_labels[:, s * k :] = extra
        pos_slots[:, s * k :] = k + rank
    rows = np.arange(n_trials)[:, None]
    labels = np.empty_like(pos_labels)
    slots = np.empty_like(pos_slots)
    labels[rows, user_at] = pos_labels
    slots[rows, user_at] = pos_slots
    sizes = np.full((n_trials, s), k, dtype=np.int64)
    if r:
        sizes += (pos_labels[:, s * k :, None] == np.arange(s)[None, None, :]).sum(axis=1)
    return labels, slots, sizes


def assign_clusters(
    n_users: int, k: int, *, leftovers: Leftovers = "random", random_state: SeedLike = None
) -> list[np.ndarray]:
    """Split users ``0..N-1`` into ``s = ⌊N/k⌋`` random clusters (Liu et al. 2025, Alg. 1 lines 2-3).

    A uniformly random permutation fills ``s`` clusters of ``k`` users; the
    ``N − sk`` leftover users then join clusters either independently and
    uniformly at random (``"random"``, the paper's line 3, which can give one
    cluster several extra users) or round robin over a random order of the
    clusters (``"round_robin"``, sizes differ by at most one when ``N − sk < s``).

    Parameters
    ----------
    n_users : int
        ``N >= 1``.
    k : int
        Designed cluster size, ``1 <= k <= N``.
    leftovers : {"random", "round_robin"}, default="random"
        How the leftover users are placed.
    random_state : int, numpy.random.Generator or None, default=None
        Draws the permutation and the placement; an int gives the same clusters every time.

    Returns
    -------
    list of ndarray of int64
        ``s`` arrays of sorted user ids that partition ``range(N)``.

    Raises
    ------
    InfeasibleParameters
        If ``k > N``: no cluster fits (Remark 6).

    Examples
    --------
    >>> clusters = assign_clusters(10, 3, leftovers="round_robin", random_state=0)
    >>> sorted(len(c) for c in clusters), sorted(int(u) for c in clusters for u in c) == list(range(10))
    ([3, 3, 4], True)
    """
    n = check_scalar(n_users, "n_users (N)", "int", min_val=1)
    k = check_scalar(k, "k", "int", min_val=1)
    check_option(leftovers, "leftovers", LEFTOVERS)
    if k > n:
        raise InfeasibleParameters(f"cluster size k = {k} exceeds the N = {n} users: no cluster fits (Remark 6).")
    rng = check_random_state(random_state)
    labels, _, _ = _cluster_layout(rng, 1, n, k, leftovers)
    return [np.flatnonzero(labels[0] == c) for c in range(n // k)]


# ---------------------------------------------------------------------------------------------------------------------
# connectivity of a Harary graph with removed vertices


def harary_connected(removed, degree: int) -> np.ndarray:
    """Whether ``H(k, m)`` stays connected after removing vertices, from their places on the circle (Lemma 3).

    For even ``m < k − 1`` a vertex is joined to the ``m/2`` nearest vertices on
    either side of the circle, so two survivors are adjacent iff their circular
    distance is at most ``m/2``. The survivors are therefore connected iff at most
    one circular run of removed vertices has length ``>= m/2``. Fewer than two
    survivors count as connected, and so does a degree ``>= k − 1`` (the complete graph).

    Parameters
    ----------
    removed : array-like of bool of shape (..., k)
        ``removed[..., j]``: whether the vertex at circle position ``j`` is removed.
    degree : int
        The Harary degree ``m``: even, or ``>= k − 1``.

    Returns
    -------
    ndarray of bool of shape (...)
        True where the surviving vertices form one component.

    Raises
    ------
    ValueError
        If ``degree`` is odd and below ``k − 1`` (the opposite-vertex edges of odd
        ``m`` are not covered by the circular-run argument).

    Examples
    --------
    >>> harary_connected([[0, 1, 0, 1, 0, 0], [0, 1, 1, 0, 1, 1]], 2).tolist()  # a ring of six
    [False, False]
    >>> harary_connected([0, 1, 1, 0, 0, 0], 4).item()
    True
    """
    flags = np.asarray(removed, dtype=bool)
    if flags.ndim < 1:
        raise ValueError("removed must have a circle axis.")
    k = flags.shape[-1]
    m = check_scalar(degree, "degree (m)", "int", min_val=1)
    if m >= k - 1:
        return np.ones(flags.shape[:-1], dtype=bool)
    if m % 2:
        raise ValueError(f"degree m = {m} is odd and below k − 1 = {k - 1}: the circular-run test needs an even m.")
    return _long_runs(flags, np.full(flags.shape[:-1], k), m // 2) <= 1


def _long_runs(removed: np.ndarray, lengths: np.ndarray, run: int) -> np.ndarray:
    """Number of maximal circular runs of removed vertices of length ``>= run``, per circle.

    ``removed`` has shape (..., W); circle ``c`` uses its first ``lengths[c]`` entries.
    A circle with no survivor has no maximal run (and is reported as 0).
    """
    width = removed.shape[-1]
    j = np.arange(2 * width)
    lengths = np.maximum(lengths, 1)[..., None]
    doubled = np.take_along_axis(removed, j % lengths, axis=-1).astype(np.int32)
    csum = np.concatenate([np.zeros((*doubled.shape[:-1], 1), dtype=np.int32), np.cumsum(doubled, axis=-1)], axis=-1)
    start = np.arange(width)
    window = csum[..., start + run] - csum[..., start] == run  # positions start..start+run-1 all removed
    previous = np.take_along_axis(removed, (start - 1) % lengths, axis=-1)
    begins = window & ~previous & (start < lengths)
    return begins.sum(axis=-1)


# ---------------------------------------------------------------------------------------------------------------------
# Monte Carlo of Requirements 1-4


def _clopper_pearson(failures: int, trials: int, confidence: float) -> tuple[float, float]:
    alpha = 1 - confidence
    low = 0.0 if failures == 0 else float(beta.ppf(alpha / 2, failures, trials - failures + 1))
    high = 1.0 if failures == trials else float(beta.ppf(1 - alpha / 2, failures + 1, trials - failures))
    return low, high


#: Role codes of the Monte Carlo: an honest user who stays, an adversary, a dropout, an unlearned user.
_HONEST, _ADVERSARY, _DROPOUT, _UNLEARNED, _EMPTY = 0, 1, 2, 3, -1


def simulate_requirements(
    n_users: int,
    k: int,
    *,
    gamma: float,
    delta: float,
    zeta: float,
    xi: float,
    tau: int,
    degree: int,
    n_trials: int,
    leftovers: Leftovers = "random",
    confidence: float = 0.95,
    random_state: SeedLike = None,
) -> pd.DataFrame:
    """Monte Carlo failure rates of Requirements 1-4 over random clusterings (Liu et al. 2025, Sec. III).

    Each trial clusters the ``N`` users as Alg. 1 does (:func:`assign_clusters`)
    and draws disjoint uniformly random sets of ``⌊γN⌋`` adversaries, ``⌊δN⌋``
    dropouts and ``τ`` unlearned (honest) users. A cluster of ``k_i`` users has
    the threshold ``t_i = ⌈ξ k_i⌉``, the cap ``q_i = ⌊ζ k_i⌋`` and a Harary masking
    graph ``H(k_i, m)`` on a uniformly random circle. In some cluster,

    - R1 fails when ``t_i`` or more members are adversaries;
    - R2 fails when more than ``k_i − t_i − q_i`` members drop out (Lemma 2's
      event: fewer than ``t_i`` would remain if the cluster also lost ``q_i``
      unlearned users); "R2 (realised Q)" fails when fewer than ``t_i`` members
      remain outside ``D ∪ Q``;
    - R3 fails when the honest members outside ``D ∪ Q`` are not connected
      (:func:`harary_connected`);
    - R4 fails when more than ``q_i`` members are unlearned.

    Parameters
    ----------
    n_users : int
        ``N``.
    k : int
        Designed cluster size, ``<= N``.
    gamma : float
        ``γ``.
    delta : float
        ``δ``.
    zeta : float
        ``ζ``.
    xi : float
        ``ξ``.
    tau : int
        Number of unlearned users ``τ``.
    degree : int
        Harary degree ``m``, even (a degree ``>= k_i − 1`` is the complete graph).
    n_trials : int
        Number of random clusterings.
    leftovers : {"random", "round_robin"}, default="random"
        Placement of the ``N − sk`` leftover users (Alg. 1 line 3).
    confidence : float, default=0.95
        Level of the Clopper-Pearson intervals.
    random_state : int, numpy.random.Generator or None, default=None
        Draws the clusterings and the circles.

    Returns
    -------
    pandas.DataFrame
        Indexed by ``"R1"``, ``"R2"``, ``"R2 (realised Q)"``, ``"R3"``, ``"R4"`` and ``"R1 ∨ R3 ∨ R4"``
        (the event bounded by Definition 1, item 1), with columns ``failures``,
        ``trials``, ``rate``, ``ci_low``, ``ci_high``.

    Raises
    ------
    ValueError
        If the sets do not fit into ``N`` users, ``k > N``, the degree is odd, or
        another argument is out of range.

    Examples
    --------
    >>> table = simulate_requirements(200, 41, gamma=0.1, delta=0.1, zeta=0.1, xi=0.7, tau=5, degree=4,
    ...                               n_trials=200, random_state=0)
    >>> int(table.loc["R1", "failures"]), bool(table.loc["R3", "rate"] > 0.5)
    (0, True)
    """
    n = check_scalar(n_users, "n_users (N)", "int", min_val=1)
    k = check_scalar(k, "k", "int", min_val=1, max_val=n)
    gamma, delta, zeta, xi = _check_rates(gamma, delta, zeta, xi)
    tau = check_scalar(tau, "tau (τ)", "int", min_val=0)
    m = check_scalar(degree, "degree (m)", "int", min_val=2)
    if m % 2:
        raise ValueError(f"degree m = {m} must be even (the Harary graphs of Lemma 3); use m >= k_i − 1 for SecAgg.")
    n_trials = check_scalar(n_trials, "n_trials", "int", min_val=1)
    check_option(leftovers, "leftovers", LEFTOVERS)
    confidence = check_scalar(confidence, "confidence", "real", min_val=0.0, max_val=1.0, include_min=False)
    rng = check_random_state(random_state)
    n_adv, n_drop = _floor_times(gamma, n), _floor_times(delta, n)
    if n_adv + n_drop + tau > n:
        raise ValueError(f"⌊γN⌋ + ⌊δN⌋ + τ = {n_adv + n_drop + tau} users exceed N = {n}.")
    roles = np.full(n, _HONEST, dtype=np.int8)
    roles[:n_adv] = _ADVERSARY
    roles[n_adv : n_adv + n_drop] = _DROPOUT
    roles[n_adv + n_drop : n_adv + n_drop + tau] = _UNLEARNED
    s = n // k
    width = n - (s - 1) * k  # the largest possible cluster
    thresholds = np.array([_ceil_times(xi, size) for size in range(width + 1)])
    caps = np.array([_floor_times(zeta, size) for size in range(width + 1)])
    failures = dict.fromkeys(("R1", "R2", "R2 (realised Q)", "R3", "R4", "R1 ∨ R3 ∨ R4"), 0)
    batch = max(1, min(n_trials, 1_000_000 // max(s * width, n)))
    complete = m >= width - 1  # every cluster is a complete graph: R3 cannot fail
    done = 0
    while done < n_trials:
        size = min(batch, n_trials - done)
        labels, slots, sizes = _cluster_layout(rng, size, n, k, leftovers)
        circle = np.full((size, s, width), _EMPTY, dtype=np.int8)
        circle[np.arange(size)[:, None], labels, slots] = roles
        count = {role: (circle == role).sum(axis=-1) for role in (_ADVERSARY, _DROPOUT, _UNLEARNED)}
        t = thresholds[sizes]
        r1 = (count[_ADVERSARY] >= t).any(axis=1)
        q = caps[sizes]
        r2 = (count[_DROPOUT] > sizes - t - q).any(axis=1)
        r2_realised = (sizes - count[_DROPOUT] - count[_UNLEARNED] < t).any(axis=1)
        r4 = (count[_UNLEARNED] > q).any(axis=1)
        removed = circle != _HONEST
        survivors = sizes - (removed & (circle != _EMPTY)).sum(axis=-1)
        if complete:
            r3 = np.zeros(size, dtype=bool)
        else:
            split = (_long_runs(removed, sizes, m // 2) >= 2) & (survivors >= 2) & (m < sizes - 1)
            r3 = split.any(axis=1)
        events = {"R1": r1, "R2": r2, "R2 (realised Q)": r2_realised, "R3": r3, "R4": r4, "R1 ∨ R3 ∨ R4": r1 | r3 | r4}
        for name, flags in events.items():
            failures[name] += int(flags.sum())
        done += size
    rows = {}
    for name, count_failed in failures.items():
        low, high = _clopper_pearson(count_failed, n_trials, confidence)
        rows[name] = {
            "failures": count_failed,
            "trials": n_trials,
            "rate": count_failed / n_trials,
            "ci_low": low,
            "ci_high": high,
        }
    pd = import_optional("pandas", "data", feature="simulate_requirements")
    return pd.DataFrame.from_dict(rows, orient="index")


# ---------------------------------------------------------------------------------------------------------------------
# Remark 1: users retrained


def expected_retrained_sequential(
    n_users: int,
    k: int,
    tau,
    *,
    formula: Literal["printed", "post_removal", "pre_removal"] = "printed",
    requests: Literal["clusters", "users"] = "clusters",
):
    """Expected number of users retrained by ``τ`` sequential requests (Liu et al. 2025, Remark 1).

    With ``s = N/k`` equal clusters, request ``j`` retrains its cluster, which has
    lost ``e_j`` of its users to earlier requests on average. In the paper's model
    (``requests="clusters"``) every request hits a uniformly random cluster, so
    ``e_j = (j−1)k/N``; for ``τ`` distinct uniformly random users
    (``requests="users"``) another user of the same cluster was hit with probability
    ``(k−1)/(N−1)``, so ``e_j = (j−1)(k−1)/(N−1)``. Summing ``k − e_j`` over the
    requests,

    - ``"pre_removal"``: ``τk − τ(τ−1)k/(2N)`` (clusters), counting the cluster
      before the requested user leaves (the paper's prose: "the initial unlearning
      request leads to the retraining of k users");
    - ``"post_removal"``: ``τ(k−1) − τ(τ−1)k/(2N)`` (clusters), counting only the
      users who retrain;
    - ``"printed"``: Remark 1's closed form ``(2N + 1 − τ²)k/(2N) − τ``, which is
      neither (it can be negative); paper's model only.

    Parameters
    ----------
    n_users : int
        ``N``.
    k : int
        Cluster size.
    tau : int or array-like of int
        Number(s) of requests ``τ >= 0``.
    formula : {"printed", "post_removal", "pre_removal"}, default="printed"
        Which expression to evaluate.
    requests : {"clusters", "users"}, default="clusters"
        The paper's model, or distinct uniformly random users.

    Returns
    -------
    float or ndarray
        The expectation, of the shape of ``tau``.

    Raises
    ------
    ValueError
        If an argument is out of range, or for the printed form with ``requests="users"``.

    Examples
    --------
    >>> round(expected_retrained_sequential(1000, 50, 20), 3)
    20.025
    >>> expected_retrained_sequential(1000, 50, 20, formula="post_removal")
    970.5
    >>> round(expected_retrained_sequential(1000, 50, 20, formula="post_removal", requests="users"), 3)
    970.681
    """
    n = check_scalar(n_users, "n_users (N)", "int", min_val=1)
    k = check_scalar(k, "k", "int", min_val=1, max_val=n)
    check_option(formula, "formula", ("printed", "post_removal", "pre_removal"))
    check_option(requests, "requests", ("clusters", "users"))
    arr = np.asarray(tau, dtype=np.float64)
    if arr.size and (np.min(arr) < 0 or np.max(arr) > n):
        raise ValueError(f"tau must lie in [0, N = {n}], got {tau!r}.")
    if formula == "printed":
        if requests != "clusters":
            raise ValueError("Remark 1's printed E_seq belongs to the paper's model: use requests='clusters'.")
        values = (2 * n + 1 - arr**2) * k / (2 * n) - arr
    else:
        same = k / n if requests == "clusters" else (k - 1) / max(n - 1, 1)
        values = arr * (k if formula == "pre_removal" else k - 1) - arr * (arr - 1) / 2 * same
    return _out(values, arr.ndim == 0)


def expected_retrained_batch(n_users: int, k: int, tau, *, requests: Literal["clusters", "users"] = "clusters"):
    """Expected number of users retrained by one batch of ``τ`` requests (Liu et al. 2025, Remark 1).

    Every cluster hit by the batch retrains once, without its unlearned users:
    ``E_bat = N − N·Pr[a cluster is missed] − τ`` for ``s = N/k`` equal clusters.
    ``"clusters"``: Remark 1's ``N − N(1 − k/N)^τ − τ``, the paper's model in which
    each request hits a cluster with probability ``k/N`` independently (correct in
    that model). ``"users"``: ``τ`` distinct uniformly random users, for which a
    cluster is missed with probability ``C(N−k, τ)/C(N, τ)``.

    Parameters
    ----------
    n_users : int
        ``N``.
    k : int
        Cluster size.
    tau : int or array-like of int
        Batch size(s) ``τ >= 0``.
    requests : {"clusters", "users"}, default="clusters"
        The paper's model, or distinct uniformly random users.

    Returns
    -------
    float or ndarray
        The expectation, of the shape of ``tau``.

    Raises
    ------
    ValueError
        If an argument is out of range.

    Examples
    --------
    >>> round(expected_retrained_batch(1000, 50, 20), 2)
    621.51
    >>> round(expected_retrained_batch(1000, 50, 20, requests="users"), 2)
    625.13
    """
    n = check_scalar(n_users, "n_users (N)", "int", min_val=1)
    k = check_scalar(k, "k", "int", min_val=1, max_val=n)
    check_option(requests, "requests", ("clusters", "users"))
    arr = np.asarray(tau, dtype=np.float64)
    if arr.size and (np.min(arr) < 0 or np.max(arr) > n):
        raise ValueError(f"tau must lie in [0, N = {n}], got {tau!r}.")
    if requests == "clusters":
        values = n - n * (1 - k / n) ** arr - arr
    else:
        missed = np.array([float(Fraction(math.comb(n - k, int(t)), math.comb(n, int(t)))) for t in arr.ravel()])
        values = n - n * missed.reshape(arr.shape) - arr
    return _out(values, arr.ndim == 0)


def expected_retrained(cluster_sizes, n_requests: int, mode: str) -> float:
    """Expected users retrained by ``τ`` distinct uniformly random requests, for the actual cluster sizes.

    Remark 1 of Liu et al. (2025) assumes ``s`` equal clusters of ``k``; with the
    leftovers the sizes ``k_i`` differ. With ``K_2 = Σ k_i² / N`` (the size of
    the cluster of a random user, on average):

    - batch: every hit cluster retrains once without its unlearned users,
      ``Σ_i k_i (1 − C(N − k_i, τ)/C(N, τ)) − τ``;
    - sequential: request ``j`` retrains its cluster without the requested user
      and the ``(j − 1)(K_2 − 1)/(N − 1)`` earlier requests that fell in it on
      average, ``τ(K_2 − 1) − τ(τ − 1)(K_2 − 1)/(2(N − 1))``.

    With one cluster of all ``N`` users these are ``N − τ`` and ``τ(N − 1) − τ(τ − 1)/2``.

    Parameters
    ----------
    cluster_sizes : array-like of int
        ``k_i``.
    n_requests : int
        ``τ``.
    mode : {"sequential", "batch"}
        How requests are handled.

    Returns
    -------
    float
        The expectation.

    Examples
    --------
    >>> expected_retrained([10], 3, "batch"), expected_retrained([10], 3, "sequential")
    (7.0, 24.0)
    """
    check_option(mode, "mode", ("sequential", "batch"))
    sizes = np.asarray(cluster_sizes, dtype=np.int64)
    n, tau = int(sizes.sum()), int(n_requests)
    if mode == "batch":
        missed = [math.comb(n - int(k), tau) / math.comb(n, tau) for k in sizes]
        return float(sum(int(k) * (1.0 - m) for k, m in zip(sizes, missed, strict=True)) - tau)
    k2 = float((sizes.astype(float) ** 2).sum() / n)
    return tau * (k2 - 1) - tau * (tau - 1) * (k2 - 1) / (2 * (n - 1))


def simulate_retraining(
    n_users: int,
    k: int,
    tau: int,
    *,
    n_trials: int,
    leftovers: Leftovers = "random",
    random_state: SeedLike = None,
) -> pd.DataFrame:
    """Users retrained by ``τ`` requests for distinct uniformly random users, per random clustering (Remark 1).

    Each trial clusters the users as Alg. 1 does and draws ``τ`` distinct users in
    request order. Sequentially, request ``j`` retrains its cluster as it is then
    (``"sequential, pre-removal"`` counts the requested user, ``"sequential,
    post-removal"`` does not); in one batch, every hit cluster retrains once
    without its unlearned users (``"batch"``).

    Parameters
    ----------
    n_users : int
        ``N``.
    k : int
        Designed cluster size, ``<= N``.
    tau : int
        Number of requests, ``<= N``.
    n_trials : int
        Number of random clusterings and request sequences.
    leftovers : {"random", "round_robin"}, default="random"
        Placement of the leftover users (Alg. 1 line 3).
    random_state : int, numpy.random.Generator or None, default=None
        Draws the clusterings and requests.

    Returns
    -------
    pandas.DataFrame
        One row per trial, columns ``"sequential, pre-removal"``,
        ``"sequential, post-removal"`` and ``"batch"``.

    Raises
    ------
    ValueError
        If an argument is out of range.

    Examples
    --------
    >>> sim = simulate_retraining(100, 10, 1, n_trials=50, random_state=0)
    >>> sim.mean().tolist()
    [10.0, 9.0, 9.0]
    """
    n = check_scalar(n_users, "n_users (N)", "int", min_val=1)
    k = check_scalar(k, "k", "int", min_val=1, max_val=n)
    tau = check_scalar(tau, "tau (τ)", "int", min_val=0, max_val=n)
    n_trials = check_scalar(n_trials, "n_trials", "int", min_val=1)
    check_option(leftovers, "leftovers", LEFTOVERS)
    rng = check_random_state(random_state)
    s = n // k
    batch = max(1, min(n_trials, 1_000_000 // (n + s * tau + 1)))
    pre, batch_total = [], []
    done = 0
    while done < n_trials:
        size = min(batch, n_trials - done)
        labels, _, sizes = _cluster_layout(rng, size, n, k, leftovers)
        hit = labels[:, :tau]  # users 0..τ-1 are requested in this order: the labels are random
        order = np.argsort(hit, axis=1, kind="stable")
        ordered = np.take_along_axis(hit, order, axis=1)
        first = np.zeros_like(ordered)
        if tau:
            new_group = np.ones_like(ordered, dtype=bool)
            new_group[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
            index = np.broadcast_to(np.arange(tau), ordered.shape)
            first = np.maximum.accumulate(np.where(new_group, index, 0), axis=1)
        earlier = np.empty_like(ordered)
        np.put_along_axis(earlier, order, np.arange(tau)[None, :] - first, axis=1)
        own = np.take_along_axis(sizes, hit, axis=1)
        pre.append((own - earlier).sum(axis=1))
        touched = np.zeros_like(sizes, dtype=bool)
        np.put_along_axis(touched, hit, True, axis=1)
        batch_total.append((sizes * touched).sum(axis=1) - tau)
        done += size
    pre_all = np.concatenate(pre).astype(np.float64)
    pd = import_optional("pandas", "data", feature="simulate_retraining")
    return pd.DataFrame(
        {
            "sequential, pre-removal": pre_all,
            "sequential, post-removal": pre_all - tau,
            "batch": np.concatenate(batch_total).astype(np.float64),
        }
    )


__all__ = [
    "DEFAULT_K_MAX",
    "LN2",
    "InfeasibleParameters",
    "ParGenResult",
    "RequirementRisk",
    "assign_clusters",
    "balanced_cluster_sizes",
    "balanced_threshold_rate",
    "expected_retrained_batch",
    "expected_retrained_sequential",
    "f1_shamir_security",
    "f2_shamir_correctness",
    "f3_connectivity",
    "f_batch_capacity",
    "harary_connected",
    "harary_degree",
    "overflow_probability",
    "pargen",
    "r4_failure_probability",
    "requirement_failure_probabilities",
    "simulate_requirements",
    "simulate_retraining",
    "tau_batch_printed",
    "tau_sequential_printed",
    "unlearning_capacity_exact",
]
