"""The unlearning capacity: how many requests Requirement 4 admits (Liu et al., TDSC 2025, Lemmas 4.1 and 4.2).

As printed: ``τ_seq`` of Eq. (7) (Alg. 2 line 5), ``τ_bat`` of Alg. 2 line 6 and the condition of Eq. (9).
Corrected: :func:`unlearning_capacity_exact`, the largest number of uniformly random requests for which the
exact probability that some cluster loses more than ``⌊ζk_i⌋`` clients is at most ``2^-σ``.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Literal

import numpy as np

from fedlib._validation import check_option, check_scalar
from fedlib.unlearn._params import LN2, _check_caps, _check_rates, _check_sizes, _out
from fedlib.unlearn._requirements import _log2_fraction, _within_caps_coefficients


def tau_sequential_printed(n_clients: int, k: int, sigma: float) -> int:
    """Alg. 2 line 5 (Lemma 4.1, Eq. (7)): ``τ_seq = ⌊sqrt(N³ σ ln 2 / (2k³))⌋``.

    This is the paper's sequential capacity. Its proof bounds a binomial CDF from
    above where a lower bound is needed, so the value does not bound the risk:
    it grows with ``σ`` and ignores ``ζ``.

    Parameters
    ----------
    n_clients : int
        ``N``, the number of clients.
    k : int
        The cluster size of Alg. 2 line 4.
    sigma : float
        ``σ`` in bits (the larger, the *larger* ``τ_seq``).

    Returns
    -------
    int
        ``τ_seq``.

    Raises
    ------
    ValueError
        If ``N`` or ``k`` is below 1, or ``σ`` is negative.

    Examples
    --------
    >>> from fedlib.unlearn import tau_sequential_printed
    >>> tau_sequential_printed(200, 41, 40)
    40
    """
    n = check_scalar(n_clients, "n_clients (N)", "int", min_val=1)
    k = check_scalar(k, "k", "int", min_val=1)
    sigma = check_scalar(sigma, "sigma (σ)", "real", min_val=0.0)
    return math.floor(math.sqrt(n**3 * sigma * LN2 / (2 * k**3)))


def tau_batch_printed(n_clients: int, k: int, zeta: float, sigma: float) -> int | None:
    """Alg. 2 line 6: ``τ_bat = ⌊N²ζ² / (N²/k² − 2σ ln 2 + 2 ln(N/k))⌋``, or None when the denominator is ``<= 0``.

    Lemma 4.2 states its precondition ``N²/k² − 2σ ln 2 + 2 ln(N/k) > 0``; below it
    (fewer than about 7.3 clusters at ``σ = 40``) line 6 is undefined or negative.
    Line 6 does not solve Eq. (9) either.

    Parameters
    ----------
    n_clients : int
        ``N`` clients, ``N/k`` clusters.
    k : int
        Cluster size from Alg. 2 line 4.
    zeta : float
        ``ζ``, the fraction of a cluster that may be unlearned.
    sigma : float
        ``σ``, security in bits.

    Returns
    -------
    int or None
        ``τ_bat``, or None when line 6 is undefined.

    Raises
    ------
    ValueError
        If ``N`` or ``k`` is below 1, ``ζ`` is not in ``[0, 1)`` or ``σ < 0``.

    Examples
    --------
    >>> from fedlib.unlearn import tau_batch_printed
    >>> tau_batch_printed(1000, 43, 0.1, 40), tau_batch_printed(200, 41, 0.1, 40) is None
    (20, True)
    """
    n = check_scalar(n_clients, "n_clients (N)", "int", min_val=1)
    k = check_scalar(k, "k", "int", min_val=1)
    _, _, zeta, _ = _check_rates(0.0, 0.0, zeta, 1.0)
    sigma = check_scalar(sigma, "sigma (σ)", "real", min_val=0.0)
    denominator = n**2 / k**2 - 2 * sigma * LN2 + 2 * math.log(n / k)
    if denominator <= 0:
        return None
    return math.floor(n**2 * zeta**2 / denominator)


def f_batch_capacity(
    tau, *, n_clients: int, k: int, zeta: float, sigma: float, variant: Literal["printed", "substituted"] = "printed"
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
    n_clients : int
        ``N >= 2``.
    k : int
        Cluster size, ``< N``.
    zeta : float
        ``ζ``, so that a cluster may lose ``q = ζk`` clients.
    sigma : float
        ``σ``: the bound is to be at most ``2^-σ``.
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
    >>> from fedlib.unlearn import f_batch_capacity
    >>> round(f_batch_capacity(1, n_clients=1000, k=43, zeta=0.1, sigma=40), 2)
    -30.71
    """
    arr = np.asarray(tau, dtype=np.float64)
    if arr.size and (not np.all(np.isfinite(arr)) or np.min(arr) <= 0):
        raise ValueError(f"tau must be finite and > 0, got {tau!r}.")
    n = check_scalar(n_clients, "n_clients (N)", "int", min_val=2)
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
    >>> from fedlib.unlearn import unlearning_capacity_exact
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
