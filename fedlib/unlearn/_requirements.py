"""Exact probabilities that Requirements 1, 2 and 4 fail on a random clustering (Liu et al., TDSC 2025, Sec. III).

The adversaries, the dropouts and the unlearned clients are uniformly random sets, as in the proofs of Lemmas 1,
2 and 4; a requirement fails when one of these sets puts more than a cap into some cluster. The probability
of that is the multivariate hypergeometric tail, computed exactly with integer polynomials
(:func:`overflow_probability`), beside the paper's union bound (:func:`requirement_failure_probabilities`).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from fractions import Fraction

import flint
import numpy as np
import numpy.typing as npt
from scipy.stats import hypergeom

from fedlib._validation import check_scalar
from fedlib.unlearn._params import _ceil_times, _check_caps, _check_rates, _check_sizes, _floor_times


def _within_caps_coefficients(sizes: list[int], caps: list[int], degree: int) -> list[int]:
    """Coefficients ``c_0..c_degree`` of ``Π_i Σ_{j <= cap_i} C(k_i, j) x^j`` (exact integers).

    ``c_n`` counts the ``n``-subsets of the clients that put at most ``cap_i`` clients into
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
    """Exact probability that a uniformly random ``n_drawn``-subset of clients puts more than ``caps[i]`` in a cluster.

    With ``N = Σ k_i`` clients and ``c`` the coefficient of ``x^{n_drawn}`` in
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
        The exact probability, a ratio of Python integers (never rounded).

    Raises
    ------
    ValueError
        If ``n_drawn`` exceeds ``N`` or the sizes and caps do not match.

    Examples
    --------
    >>> from fedlib.unlearn import overflow_probability
    >>> overflow_probability([2, 2], 1, 2)  # both drawn clients in the same cluster: 2 of the 6 pairs
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

    The set ``Q`` of unlearned clients is a uniformly random ``τ``-subset of the
    ``N`` clients in the sequential setting (each request is a random remaining
    client) and in the batch setting alike, so both settings carry this same risk.

    Parameters
    ----------
    cluster_sizes : array-like of int
        ``k_i``, one per cluster.
    caps : int or array-like of int
        ``q_i = ⌊ζ k_i⌋``, the largest number of unlearned clients per cluster.
    tau : int
        Number of requests ``τ``.

    Returns
    -------
    fractions.Fraction
        ``Pr[R4 fails]``, exactly.

    Raises
    ------
    ValueError
        If ``τ > N``, or the caps are neither one value nor one per cluster.

    Examples
    --------
    >>> from fedlib.unlearn import r4_failure_probability
    >>> r4_failure_probability([50] * 4, 5, 5)  # five requests cannot exceed a cap of five
    Fraction(0, 1)
    >>> float(r4_failure_probability([50] * 4, 5, 6))  # all six in one cluster
    0.000771312456642661
    """
    return overflow_probability(cluster_sizes, caps, tau)


def _log2_fraction(x: Fraction) -> float:
    """``log2 x`` of an exact fraction (``-inf`` for 0), accurate however small ``x`` is."""
    if x == 0:
        return -math.inf
    return math.log2(x.numerator) - math.log2(x.denominator)


def _requirement_caps(
    sizes: npt.ArrayLike, thresholds: npt.ArrayLike, removal_caps: npt.ArrayLike
) -> dict[str, np.ndarray]:
    """The most members of its random set a cluster may hold before a requirement fails, elementwise.

    With ``k_i`` clients, threshold ``t_i`` and removal cap ``q_i``: R1 admits ``t_i − 1`` adversaries;
    R2 admits ``k_i − t_i − q_i`` dropouts (Lemma 2's event: the cluster may also lose ``q_i``
    unlearned clients); "R2 (realised Q)" admits ``k_i − t_i`` dropouts and unlearned clients together;
    R4 admits ``q_i`` unlearned clients. The exact probabilities and the Monte Carlo share these caps.

    Parameters
    ----------
    sizes, thresholds, removal_caps : array-like of int
        ``k_i``, ``t_i = ⌈ξ k_i⌉`` and ``q_i = ⌊ζ k_i⌋``, of one shape.

    Returns
    -------
    dict of str to ndarray of int64
        Keys ``"R1"``, ``"R2"``, ``"R2 (realised Q)"``, ``"R4"``; each cap of the shape of ``sizes``.
    """
    sizes, thresholds, removal_caps = (np.asarray(a, dtype=np.int64) for a in (sizes, thresholds, removal_caps))
    return {
        "R1": thresholds - 1,
        "R2": sizes - thresholds - removal_caps,
        "R2 (realised Q)": sizes - thresholds,
        "R4": removal_caps,
    }


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
    >>> from fedlib.unlearn import requirement_failure_probabilities
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

    The adversaries ``A`` (``⌊γN⌋`` clients), the dropouts ``D`` (``⌊δN⌋``) and the
    unlearned clients ``Q`` (``τ``) are uniformly random sets, as in the proofs of
    Lemmas 1, 2 and 4. A cluster of ``k_i`` clients has the Shamir threshold
    ``t_i = ⌈ξ k_i⌉`` and the removal cap ``q_i = ⌊ζ k_i⌋``.

    - R1 fails when some cluster holds ``t_i`` or more adversaries.
    - R2 fails when some cluster keeps fewer than ``t_i`` clients after its dropouts
      and ``q_i`` unlearned clients: more than ``k_i − t_i − q_i`` dropouts. This is
      Lemma 2's event, the worst case over every ``Q`` that Requirement 4 admits.
    - "R2 (realised Q)": Requirement 2 for the ``τ`` random unlearned clients
      themselves; ``D ∪ Q`` is a uniformly random set of ``⌊δN⌋ + τ`` clients, and R2
      fails when more than ``k_i − t_i`` of them fall into some cluster.
    - R4 fails when some cluster holds more than ``q_i`` of the ``τ`` unlearned clients.

    Parameters
    ----------
    cluster_sizes : array-like of int
        ``k_i``, one per cluster.
    gamma : float
        ``γ``: ``⌊γN⌋`` adversaries (R1).
    delta : float
        ``δ``: ``⌊δN⌋`` dropouts (R2).
    zeta : float
        ``ζ``: the removal caps ``q_i`` (R2, R4).
    xi : float
        ``ξ``: the thresholds ``t_i`` (R1, R2).
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
    >>> from fedlib.unlearn import requirement_failure_probabilities
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
    drawn = {"R1": _floor_times(gamma, n), "R2": n_drop, "R2 (realised Q)": n_drop + tau, "R4": tau}
    risks = {}
    for name, most in _requirement_caps(sizes, thresholds, removal_caps).items():
        n_drawn, caps = drawn[name], most.tolist()
        union = sum(1.0 if c < 0 else float(hypergeom.sf(c, n, n_drawn, k)) for k, c in zip(sizes, caps, strict=True))
        risks[name] = RequirementRisk(name, overflow_probability(sizes, caps, n_drawn), union, n_drawn, tuple(caps))
    return risks
