"""Monte Carlo of Requirements 1-4 over random clusterings (Liu et al., TDSC 2025, Sec. III and Alg. 1).

Each trial clusters the clients as Alg. 1 does and draws random adversaries, dropouts and unlearned clients;
the failure rates come with Clopper-Pearson intervals. Requirement 3 (connectivity of the masking graph),
which has no exact formula here, is simulated too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from scipy.stats import beta

from fedlib._optional import import_optional
from fedlib._random import check_random_state
from fedlib._typing import SeedLike
from fedlib._validation import check_option, check_scalar
from fedlib.unlearn._clustering import LEFTOVERS, Leftovers, _layout_batches
from fedlib.unlearn._harary import _long_runs
from fedlib.unlearn._params import _ceil_times, _check_rates, _floor_times
from fedlib.unlearn._requirements import _requirement_caps

if TYPE_CHECKING:
    import pandas as pd


def _clopper_pearson(failures: int, trials: int, confidence: float) -> tuple[float, float]:
    """The Clopper-Pearson interval of a failure rate at level ``confidence``."""
    alpha = 1 - confidence
    low = 0.0 if failures == 0 else float(beta.ppf(alpha / 2, failures, trials - failures + 1))
    high = 1.0 if failures == trials else float(beta.ppf(1 - alpha / 2, failures + 1, trials - failures))
    return low, high


#: Role codes of the Monte Carlo: an honest client who stays, an adversary, a dropout, an unlearned client.
_HONEST, _ADVERSARY, _DROPOUT, _UNLEARNED, _EMPTY = 0, 1, 2, 3, -1


def simulate_requirements(
    n_clients: int,
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

    Each trial clusters the ``N`` clients as Alg. 1 does (:func:`assign_clusters`)
    and draws disjoint uniformly random sets of ``⌊γN⌋`` adversaries, ``⌊δN⌋``
    dropouts and ``τ`` unlearned (honest) clients. A cluster of ``k_i`` clients has
    the threshold ``t_i = ⌈ξ k_i⌉``, the cap ``q_i = ⌊ζ k_i⌋`` and a Harary masking
    graph ``H(k_i, m)`` on a uniformly random circle. In some cluster,

    - R1 fails when ``t_i`` or more members are adversaries;
    - R2 fails when more than ``k_i − t_i − q_i`` members drop out (Lemma 2's
      event: fewer than ``t_i`` would remain if the cluster also lost ``q_i``
      unlearned clients); "R2 (realised Q)" fails when fewer than ``t_i`` members
      remain outside ``D ∪ Q``;
    - R3 fails when the honest members outside ``D ∪ Q`` are not connected
      (:func:`harary_connected`);
    - R4 fails when more than ``q_i`` members are unlearned.

    Parameters
    ----------
    n_clients : int
        ``N``, the clients of each trial.
    k : int
        Designed cluster size, ``<= N``: ``⌊N/k⌋`` clusters.
    gamma : float
        ``γ``; each trial draws ``⌊γN⌋`` adversaries.
    delta : float
        ``δ``; each trial draws ``⌊δN⌋`` dropouts.
    zeta : float
        ``ζ``, giving each cluster the cap ``q_i = ⌊ζ k_i⌋``.
    xi : float
        ``ξ``, giving each cluster the threshold ``t_i = ⌈ξ k_i⌉``.
    tau : int
        Number of unlearned clients ``τ``.
    degree : int
        Harary degree ``m``, even (a degree ``>= k_i − 1`` is the complete graph).
    n_trials : int
        Number of random clusterings.
    leftovers : {"random", "round_robin"}, default="random"
        Placement of the ``N − sk`` leftover clients (Alg. 1 line 3).
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
        If the sets do not fit into ``N`` clients, ``k > N``, the degree is odd, or
        another argument is out of range.

    Examples
    --------
    >>> from fedlib.unlearn import simulate_requirements
    >>> table = simulate_requirements(200, 41, gamma=0.1, delta=0.1, zeta=0.1, xi=0.7, tau=5, degree=4,
    ...                               n_trials=200, random_state=0)
    >>> int(table.loc["R1", "failures"]), bool(table.loc["R3", "rate"] > 0.5)
    (0, True)
    """
    n = check_scalar(n_clients, "n_clients (N)", "int", min_val=1)
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
        raise ValueError(f"⌊γN⌋ + ⌊δN⌋ + τ = {n_adv + n_drop + tau} clients exceed N = {n}.")
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
    for labels, slots, sizes in _layout_batches(rng, n_trials, n, k, leftovers, batch):
        size = len(labels)
        circle = np.full((size, s, width), _EMPTY, dtype=np.int8)
        circle[np.arange(size)[:, None], labels, slots] = roles
        count = {role: (circle == role).sum(axis=-1) for role in (_ADVERSARY, _DROPOUT, _UNLEARNED)}
        members = {
            "R1": count[_ADVERSARY],
            "R2": count[_DROPOUT],
            "R2 (realised Q)": count[_DROPOUT] + count[_UNLEARNED],
            "R4": count[_UNLEARNED],
        }
        most = _requirement_caps(sizes, thresholds[sizes], caps[sizes])
        events = {name: (members[name] > most[name]).any(axis=1) for name in most}
        removed = circle != _HONEST
        survivors = sizes - (removed & (circle != _EMPTY)).sum(axis=-1)
        if complete:
            events["R3"] = np.zeros(size, dtype=bool)
        else:
            split = (_long_runs(removed, sizes, m // 2) >= 2) & (survivors >= 2) & (m < sizes - 1)
            events["R3"] = split.any(axis=1)
        events["R1 ∨ R3 ∨ R4"] = events["R1"] | events["R3"] | events["R4"]
        for name, flags in events.items():
            failures[name] += int(flags.sum())
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
