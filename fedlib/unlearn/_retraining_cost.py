"""How many clients retrain for ``τ`` unlearning requests (Liu et al., TDSC 2025, Remark 1).

Sequential requests retrain the requested client's cluster once per request; a batch retrains every hit
cluster once. :func:`expected_retrained_sequential` and :func:`expected_retrained_batch` evaluate Remark 1
for equal clusters (as printed, or corrected), :func:`expected_retrained` for actual cluster sizes, and
:func:`simulate_retraining` counts the retrained clients over random clusterings.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import TYPE_CHECKING, Literal

import numpy as np
import numpy.typing as npt

from fedlib._optional import import_optional
from fedlib._random import check_random_state
from fedlib._typing import SeedLike
from fedlib._validation import check_option, check_scalar
from fedlib.unlearn._clustering import LEFTOVERS, Leftovers, _layout_batches
from fedlib.unlearn._params import _out

if TYPE_CHECKING:
    import pandas as pd


def _check_tau(tau: npt.ArrayLike, n_clients: int) -> np.ndarray:
    """``τ`` as a float array, checked to lie in ``[0, N]`` (Remark 1's numbers of requests)."""
    arr = np.asarray(tau, dtype=np.float64)
    if arr.size and (np.min(arr) < 0 or np.max(arr) > n_clients):
        raise ValueError(f"tau must lie in [0, N = {n_clients}], got {tau!r}.")
    return arr


def expected_retrained_sequential(
    n_clients: int,
    k: int,
    tau,
    *,
    formula: Literal["printed", "post_removal", "pre_removal"] = "printed",
    requests: Literal["clusters", "clients"] = "clusters",
):
    """Expected number of clients retrained by ``τ`` sequential requests (Liu et al. 2025, Remark 1).

    With ``s = N/k`` equal clusters, request ``j`` retrains its cluster, which has
    lost ``e_j`` of its clients to earlier requests on average. In the paper's model
    (``requests="clusters"``) every request hits a uniformly random cluster, so
    ``e_j = (j−1)k/N``; for ``τ`` distinct uniformly random clients
    (``requests="clients"``) another client of the same cluster was hit with probability
    ``(k−1)/(N−1)``, so ``e_j = (j−1)(k−1)/(N−1)``. Summing ``k − e_j`` over the
    requests,

    - ``"pre_removal"``: ``τk − τ(τ−1)k/(2N)`` (clusters), counting the cluster
      before the requested client leaves (the paper's prose: "the initial unlearning
      request leads to the retraining of k users");
    - ``"post_removal"``: ``τ(k−1) − τ(τ−1)k/(2N)`` (clusters), counting only the
      clients who retrain;
    - ``"printed"``: Remark 1's closed form ``(2N + 1 − τ²)k/(2N) − τ``, which is
      neither (it can be negative); paper's model only.

    Parameters
    ----------
    n_clients : int
        ``N``, the number of clients.
    k : int
        Size of each of the ``N/k`` clusters, ``<= N``.
    tau : int or array-like of int
        Number(s) of requests ``τ``, in ``[0, N]``.
    formula : {"printed", "post_removal", "pre_removal"}, default="printed"
        Which expression to evaluate.
    requests : {"clusters", "clients"}, default="clusters"
        Each request hits a uniformly random cluster (the paper), or requests are distinct random clients.

    Returns
    -------
    float or ndarray
        ``E_seq``, of the shape of ``tau``.

    Raises
    ------
    ValueError
        If an argument is out of range, or for the printed form with ``requests="clients"``.

    Examples
    --------
    >>> from fedlib.unlearn import expected_retrained_sequential
    >>> round(expected_retrained_sequential(1000, 50, 20), 3)
    20.025
    >>> expected_retrained_sequential(1000, 50, 20, formula="post_removal")
    970.5
    >>> round(expected_retrained_sequential(1000, 50, 20, formula="post_removal", requests="clients"), 3)
    970.681
    """
    n = check_scalar(n_clients, "n_clients (N)", "int", min_val=1)
    k = check_scalar(k, "k", "int", min_val=1, max_val=n)
    check_option(formula, "formula", ("printed", "post_removal", "pre_removal"))
    check_option(requests, "requests", ("clusters", "clients"))
    arr = _check_tau(tau, n)
    if formula == "printed":
        if requests != "clusters":
            raise ValueError("Remark 1's printed E_seq belongs to the paper's model: use requests='clusters'.")
        values = (2 * n + 1 - arr**2) * k / (2 * n) - arr
    else:
        same = k / n if requests == "clusters" else (k - 1) / max(n - 1, 1)
        values = arr * (k if formula == "pre_removal" else k - 1) - arr * (arr - 1) / 2 * same
    return _out(values, arr.ndim == 0)


def expected_retrained_batch(n_clients: int, k: int, tau, *, requests: Literal["clusters", "clients"] = "clusters"):
    """Expected number of clients retrained by one batch of ``τ`` requests (Liu et al. 2025, Remark 1).

    Every cluster hit by the batch retrains once, without its unlearned clients:
    ``E_bat = N − N·Pr[a cluster is missed] − τ`` for ``s = N/k`` equal clusters.
    ``"clusters"``: Remark 1's ``N − N(1 − k/N)^τ − τ``, the paper's model in which
    each request hits a cluster with probability ``k/N`` independently (correct in
    that model). ``"clients"``: ``τ`` distinct uniformly random clients, for which a
    cluster is missed with probability ``C(N−k, τ)/C(N, τ)``.

    Parameters
    ----------
    n_clients : int
        ``N`` clients in all.
    k : int
        Cluster size, ``1 <= k <= N``.
    tau : int or array-like of int
        Batch size(s) ``0 <= τ <= N``.
    requests : {"clusters", "clients"}, default="clusters"
        The paper's model, or distinct uniformly random clients.

    Returns
    -------
    float or ndarray
        ``E_bat``, one value per batch size in ``tau``.

    Raises
    ------
    ValueError
        If ``k`` or a ``τ`` lies outside its range, or ``requests`` is unknown.

    Examples
    --------
    >>> from fedlib.unlearn import expected_retrained_batch
    >>> round(expected_retrained_batch(1000, 50, 20), 2)
    621.51
    >>> round(expected_retrained_batch(1000, 50, 20, requests="clients"), 2)
    625.13
    """
    n = check_scalar(n_clients, "n_clients (N)", "int", min_val=1)
    k = check_scalar(k, "k", "int", min_val=1, max_val=n)
    check_option(requests, "requests", ("clusters", "clients"))
    arr = _check_tau(tau, n)
    if requests == "clusters":
        values = n - n * (1 - k / n) ** arr - arr
    else:
        missed = np.array([float(Fraction(math.comb(n - k, int(t)), math.comb(n, int(t)))) for t in arr.ravel()])
        values = n - n * missed.reshape(arr.shape) - arr
    return _out(values, arr.ndim == 0)


def expected_retrained(cluster_sizes, n_requests: int, mode: str) -> float:
    """Expected clients retrained by ``τ`` distinct uniformly random requests, for the actual cluster sizes.

    Remark 1 of Liu et al. (2025) assumes ``s`` equal clusters of ``k``; with the
    leftovers the sizes ``k_i`` differ. With ``K_2 = Σ k_i² / N`` (the size of
    the cluster of a random client, on average):

    - batch: every hit cluster retrains once without its unlearned clients,
      ``Σ_i k_i (1 − C(N − k_i, τ)/C(N, τ)) − τ``;
    - sequential: request ``j`` retrains its cluster without the requested client
      and the ``(j − 1)(K_2 − 1)/(N − 1)`` earlier requests that fell in it on
      average, ``τ(K_2 − 1) − τ(τ − 1)(K_2 − 1)/(2(N − 1))``.

    With one cluster of all ``N`` clients these are ``N − τ`` and ``τ(N − 1) − τ(τ − 1)/2``.

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
    >>> from fedlib.unlearn import expected_retrained
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
    n_clients: int,
    k: int,
    tau: int,
    *,
    n_trials: int,
    leftovers: Leftovers = "random",
    random_state: SeedLike = None,
) -> pd.DataFrame:
    """Clients retrained by ``τ`` requests for distinct uniformly random clients, per random clustering (Remark 1).

    Each trial clusters the clients as Alg. 1 does and draws ``τ`` distinct clients in
    request order. Sequentially, request ``j`` retrains its cluster as it is then
    (``"sequential, pre-removal"`` counts the requested client, ``"sequential,
    post-removal"`` does not); in one batch, every hit cluster retrains once
    without its unlearned clients (``"batch"``).

    Parameters
    ----------
    n_clients : int
        ``N``, the clients to cluster.
    k : int
        Designed cluster size (Alg. 1), ``<= N``.
    tau : int
        Number of requests for distinct clients, ``<= N``.
    n_trials : int
        Number of random clusterings and request sequences.
    leftovers : {"random", "round_robin"}, default="random"
        Placement of the leftover clients (Alg. 1 line 3).
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
        If ``k`` or ``τ`` exceeds ``N``, ``n_trials < 1`` or ``leftovers`` is unknown.

    Examples
    --------
    >>> from fedlib.unlearn import simulate_retraining
    >>> sim = simulate_retraining(100, 10, 1, n_trials=50, random_state=0)
    >>> sim.mean().tolist()
    [10.0, 9.0, 9.0]
    """
    n = check_scalar(n_clients, "n_clients (N)", "int", min_val=1)
    k = check_scalar(k, "k", "int", min_val=1, max_val=n)
    tau = check_scalar(tau, "tau (τ)", "int", min_val=0, max_val=n)
    n_trials = check_scalar(n_trials, "n_trials", "int", min_val=1)
    check_option(leftovers, "leftovers", LEFTOVERS)
    rng = check_random_state(random_state)
    s = n // k
    batch = max(1, min(n_trials, 1_000_000 // (n + s * tau + 1)))
    pre, batch_total = [], []
    for labels, _, sizes in _layout_batches(rng, n_trials, n, k, leftovers, batch):
        hit = labels[:, :tau]  # clients 0..τ-1 are requested in this order: the labels are random
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
    pre_all = np.concatenate(pre).astype(np.float64)
    pd = import_optional("pandas", "data", feature="simulate_retraining")
    return pd.DataFrame(
        {
            "sequential, pre-removal": pre_all,
            "sequential, post-removal": pre_all - tau,
            "batch": np.concatenate(batch_total).astype(np.float64),
        }
    )
