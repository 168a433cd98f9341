"""ParGen (Alg. 2): the cluster size of clustered federated unlearning with SecAgg+ inside each cluster.

Liu, Jiang, Jiang, Guo, Zhao, Lam, "Guaranteeing Data Privacy in Federated
Unlearning with Dynamic User Participation" (IEEE TDSC 22(3), 2025) split the
``N`` clients at random into ``s = ⌊N/k⌋`` clusters (Alg. 1 lines 2-3), run SecAgg+
inside each one, and unlearn a client by retraining only its cluster. ParGen
(Alg. 2) picks the smallest cluster size ``k`` for which four requirements hold in
every cluster with probability ``1 - 2^-σ`` (or ``1 - 2^-η``):

- R1, Shamir security: fewer than ``t = ⌈ξk⌉`` adversaries (Lemma 1, Eq. (3));
- R2, Shamir correctness: at least ``t`` clients alive after dropouts and
  unlearning (Lemma 2, Eq. (4));
- R3, connectivity: the Harary masking graph minus adversaries, dropouts and
  unlearned clients stays connected (Lemma 3, Eq. (5));
- R4, unlearning capacity: at most ``ζk`` unlearned clients per cluster, which caps
  the number of requests ``τ_seq`` and ``τ_bat`` (Lemmas 4.1 and 4.2, Eqs. (7), (9)).

``variant="printed"`` evaluates the formulas as printed; ``variant="corrected"``
fixes Lemma 2's sign error (Eq. (4')), replaces Lemma 3 by a Harary degree that
meets its own union bound, and replaces Eqs. (7)/(9) by the exact capacity.
Probabilities that are meant to be tiny are computed exactly, as fractions of
Python integers, never as ``1 - float``.

The theory ParGen rests on has one module per concept in this package: the
lemma conditions in ``_lemmas``, the Harary masking graph in ``_harary``, the
exact probabilities of Requirements 1, 2 and 4 in ``_requirements``, the
unlearning capacity in ``_capacity``, the random clusterings of Alg. 1 in
``_clustering``, their Monte Carlo in ``_simulation`` and the retraining costs
of Remark 1 in ``_retraining_cost``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fedlib._validation import check_option, check_scalar
from fedlib.exceptions import InfeasibleParameters
from fedlib.unlearn._capacity import tau_batch_printed, tau_sequential_printed, unlearning_capacity_exact
from fedlib.unlearn._clustering import LEFTOVERS, assign_clusters, balanced_cluster_sizes
from fedlib.unlearn._harary import harary_degree
from fedlib.unlearn._lemmas import (
    _require_correctness_margin,
    f1_shamir_security,
    f2_shamir_correctness,
    f3_connectivity,
)
from fedlib.unlearn._params import VARIANTS, Variant, _ceil_times, _check_rates, _floor_times

#: Default upper end of the integer search ``min{k >= 1 : f(k) >= 0}``.
DEFAULT_K_MAX = 10**7


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


@dataclass(frozen=True)
class ParGenResult:
    """The output of ParGen (Liu et al. 2025, Alg. 2) with the intermediate quantities.

    Parameters
    ----------
    n_clients : int
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
        ``q = ⌊ζk⌋``, the most unlearned clients a cluster of ``k`` may lose.
    degree : int
        The Harary degree ``m`` (:func:`harary_degree`; ``>= k − 1`` means the complete graph).
    cluster_sizes : tuple of int
        Sizes after the ``N − sk`` leftovers are spread one per cluster
        (``leftovers="round_robin"``); empty when ``s = 0``.

    Examples
    --------
    >>> from fedlib.unlearn import pargen
    >>> r = pargen(200, gamma=0.1, delta=0.1, zeta=0.1, xi=0.7, sigma=40, eta=40)
    >>> (r.k1, r.k2, r.k3, r.k, r.n_clusters, r.tau_seq, r.tau_bat), r.cluster_sizes
    ((41, 6, 1, 41, 4, 40, None), (50, 50, 50, 50))
    """

    n_clients: int
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
        """``q_i = ⌊ζ k_i⌋`` for each of :attr:`cluster_sizes`: the most unlearned clients cluster ``i`` may lose."""
        return tuple(_floor_times(self.zeta, size) for size in self.cluster_sizes)

    @property
    def feasible(self) -> bool:
        """Whether at least one cluster of size ``k`` fits into ``N`` clients (Remark 6)."""
        return self.n_clusters >= 1

    @property
    def binding(self) -> str:
        """The lemma whose ``k`` is the largest (ties name the first): ``"Lemma 1"``, ``"Lemma 2"`` or ``"Lemma 3"``."""
        ks = {"Lemma 1": self.k1, "Lemma 2": self.k2, "Lemma 3": self.k3 if self.k3 is not None else 0}
        return max(ks, key=lambda name: ks[name])


def pargen(
    n_clients: int,
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
    n_clients : int
        ``N >= 1``.
    gamma : float
        ``γ``, largest fraction of adversarial clients, in ``[0, 1)``.
    delta : float
        ``δ``, largest fraction of dropout clients, in ``[0, 1)``.
    zeta : float
        ``ζ``, largest fraction of unlearned clients per cluster, in ``[0, 1)``.
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
    >>> from fedlib.unlearn import pargen
    >>> r = pargen(200, gamma=0.1, delta=0.1, zeta=0.1, xi=0.7, sigma=40, eta=40)
    >>> r.k, r.n_clusters, r.binding
    (41, 4, 'Lemma 1')
    >>> r = pargen(1000, gamma=0.1, delta=0.1, zeta=0.1, xi=0.45, sigma=40, eta=40, variant="corrected")
    >>> r.k, r.n_clusters, r.tau_seq, r.degree
    (122, 8, 12, 58)
    """
    n = check_scalar(n_clients, "n_clients (N)", "int", min_val=1)
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

    k1 = _smallest_k(lambda ks: f1_shamir_security(ks, n_clients=n, gamma=gamma, xi=xi, sigma=sigma), k_max, "Lemma 1")
    k2 = _smallest_k(
        lambda ks: f2_shamir_correctness(ks, n_clients=n, delta=delta, zeta=zeta, xi=xi, eta=eta, variant=variant),
        k_max,
        "Lemma 2" + (" (Eq. (4'))" if variant == "corrected" else ""),
    )
    p = gamma + delta + zeta
    common = dict(n_clients=n, gamma=gamma, delta=delta, zeta=zeta, xi=xi, sigma=sigma, eta=eta, variant=variant)
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
            n_clients=n,
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


#: ``LEFTOVERS`` and ``assign_clusters`` are re-exported for :mod:`fedlib.unlearn._clustered`.
__all__ = ["DEFAULT_K_MAX", "LEFTOVERS", "ParGenResult", "assign_clusters", "pargen"]
