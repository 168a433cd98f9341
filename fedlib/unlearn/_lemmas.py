"""Lemmas 1-3 of Liu et al. (TDSC 2025): the conditions ``f_j(k) >= 0`` on the cluster size ``k`` (Alg. 2 lines 1-3).

- Lemma 1, Eq. (3): at most ``t − 1`` adversaries in every cluster (Requirement 1, Shamir security);
- Lemma 2, Eq. (4) as printed or corrected to Eq. (4'): at least ``t`` clients left in every cluster after its
  dropouts and unlearned clients (Requirement 2, Shamir correctness);
- Lemma 3, Eq. (5) as printed or as its proof derives it: the masking graph stays connected (Requirement 3).

With :func:`balanced_threshold_rate`, the threshold rate ``ξ`` that Lemmas 1 and 2 (corrected) trade equally.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np

from fedlib._validation import check_option, check_scalar
from fedlib.exceptions import InfeasibleParameters
from fedlib.unlearn._params import LN2, VARIANTS, Variant, _check_k, _check_rates, _out


def f1_shamir_security(k, *, n_clients: int, gamma: float, xi: float, sigma: float):
    """Lemma 1, Eq. (3): ``f1(k) = 2(γ² + ξ² − 2ξγ)k + ln k − ln N − σ ln 2``.

    ``f1(k) >= 0`` makes the union bound ``(N/k)·exp(−2(t − γk)²/k)`` on the
    probability that some cluster holds ``t = ξk`` or more adversaries at most
    ``2^-σ`` (Liu et al. 2025, Lemma 1; the Hoeffding tail of Sec. II-C). The
    algebra is correct: ``γ² + ξ² − 2ξγ = (ξ − γ)²``.

    Parameters
    ----------
    k : float or array-like of float
        Cluster size(s) to test, ``>= 1``.
    n_clients : int
        ``N``, the number of clients.
    gamma : float
        ``γ``, the largest fraction of adversarial clients.
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
    >>> from fedlib.unlearn import f1_shamir_security
    >>> round(f1_shamir_security(41, n_clients=200, gamma=0.1, xi=0.7, sigma=40), 3)
    0.209
    """
    arr, scalar = _check_k(k)
    n = check_scalar(n_clients, "n_clients (N)", "int", min_val=1)
    gamma, _, _, xi = _check_rates(gamma, 0.0, 0.0, xi)
    sigma = check_scalar(sigma, "sigma (σ)", "real", min_val=0.0)
    values = 2 * (gamma**2 + xi**2 - 2 * xi * gamma) * arr + (np.log(arr) - math.log(n) - sigma * LN2)
    return _out(values, scalar)


def f2_shamir_correctness(
    k, *, n_clients: int, delta: float, zeta: float, xi: float, eta: float, variant: Variant = "printed"
):
    """Lemma 2: Eq. (4) as printed, or the corrected Eq. (4') ``2(1 − δ − ξ − ζ)²k + ln(k/N) − η ln 2``.

    Requirement 2 fails in a cluster when more than ``k − t − q`` of its clients
    drop out (``t = ξk``, ``q = ζk`` unlearned), so the Hoeffding deviation is
    ``w = 1 − ξ − ζ − δ`` and the union bound over ``N/k`` clusters gives Eq. (4').
    The printed Eq. (4),
    ``2((1−δ)² + ξ² − 2(ξ+ζ)δ + 2ξ + 2ζ)k + ln k − ln N − η ln 2``, squares
    ``δk − k − t − q`` instead (a sign error) and drops the terms ``2ξζ + ζ²``;
    it is satisfied by far too small clusters.

    Parameters
    ----------
    k : float or array-like of float
        Cluster size(s) ``>= 1`` at which to evaluate Eq. (4) or (4').
    n_clients : int
        ``N``; the union bound runs over ``N/k`` clusters.
    delta : float
        ``δ``, the largest fraction of dropout clients.
    zeta : float
        ``ζ = q/k``, the largest fraction of unlearned clients in a cluster.
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
        ``t`` clients may remain in every cluster, whatever ``k``.
    ValueError
        If a ``k`` is below 1 or a parameter is out of range.

    Examples
    --------
    >>> from fedlib.unlearn import f2_shamir_correctness
    >>> f2_shamir_correctness(6, n_clients=200, delta=0.1, zeta=0.1, xi=0.7, eta=40) >= 0
    True
    >>> f2_shamir_correctness(200, n_clients=200, delta=0.1, zeta=0.1, xi=0.7, eta=40, variant="corrected") >= 0
    False
    """
    arr, scalar = _check_k(k)
    n = check_scalar(n_clients, "n_clients (N)", "int", min_val=1)
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
        Cluster size(s) ``>= 1``; the Harary degree is ``m = ln k``.
    gamma : float
        ``γ``, adversaries, removed from the masking graph.
    delta : float
        ``δ``, dropouts, removed as well.
    zeta : float
        ``ζ``, unlearned clients, removed as well.
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
    >>> from fedlib.unlearn import f3_connectivity
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


def balanced_threshold_rate(gamma: float, delta: float, zeta: float) -> float:
    """The threshold rate ``ξ* = (1 − δ − ζ + γ)/2`` that gives Lemma 1 and corrected Lemma 2 equal margins.

    Lemma 1 needs ``ξ − γ > 0`` and Eq. (4') needs ``1 − δ − ξ − ζ > 0``; the cluster
    size each requires falls with the square of its margin, so for ``σ = η`` the
    smallest ``k`` that meets both is reached where the margins are equal.

    Parameters
    ----------
    gamma : float
        ``γ``: Lemma 1's margin is ``ξ − γ``.
    delta : float
        ``δ``: Eq. (4')'s margin is ``1 − δ − ξ − ζ``.
    zeta : float
        ``ζ``, in the same margin.

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
    >>> from fedlib.unlearn import balanced_threshold_rate
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
            f"ξ + ζ + δ = {xi + zeta + delta:g} >= 1: after δ dropouts and ζ unlearned clients a cluster keeps at "
            f"most a fraction 1 − δ − ζ = {1 - delta - zeta:g} of its clients, fewer than the Shamir threshold "
            f"ξ = {xi:g} (Lemma 2, corrected: requires ξ + ζ + δ < 1)."
        )
