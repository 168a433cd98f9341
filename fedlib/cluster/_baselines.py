"""Federated clustering baselines of MUFC's Table 1: K-FED (Dennis et al. 2021) and DC-KM (Ginart et al. 2019)."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from sklearn.utils.extmath import randomized_svd

from fedlib._typing import NDArrayFloat, NDArrayInt, SeedLike
from fedlib._validation import check_array, check_n_clusters, check_partition, spawn_generators
from fedlib.cluster._distance import assign_to_nearest, row_norms_squared, squared_distances
from fedlib.cluster._federated import local_clusters
from fedlib.cluster._kmeanspp import _kmeans_plusplus
from fedlib.cluster._lloyd import KMeans, _lloyd


def _induced_loss(X_parts, local_labels, center_server_labels, server_centers) -> float:
    total = 0.0
    for Xl, lab, srv in zip(X_parts, local_labels, center_server_labels, strict=True):
        diff = Xl - server_centers[srv[lab]]
        total += float(np.einsum("ij,ij->", diff, diff))
    return total


def _kfed_local(Xl: NDArrayFloat, k: int, rng: np.random.Generator) -> NDArrayFloat:
    """K-FED's device step (Dennis et al. 2021, after Awasthi and Sheffet 2012).

    Project on the top-k singular directions, seed with K-means++ there, keep for
    each seed the points at most a third as far from it as from any other seed
    (the 1:3 split rule), use their means as seeds, and run Lloyd in the
    original space.

    A device with at most ``k`` points returns its points as centres, as the
    reference code does.

    Deviation: the reference code (metastableB/kfed, ``awasthisheffet``) takes
    the 1:3 members' means in the projected space and maps them back with
    ``V^T``, i.e. onto the rank-k subspace; here the means are taken in the
    full space. Lloyd then starts from these seeds in both.
    """
    n, d = Xl.shape
    k = min(k, n)
    rank = min(k, d, n)
    _, _, Vt = randomized_svd(Xl, n_components=rank, random_state=int(rng.integers(2**31)))
    Z = Xl @ Vt.T
    seeds = _kmeans_plusplus(Z, k, np.ones(n), rng)
    d2 = squared_distances(Z, Z[seeds])
    centers = Xl[seeds].copy()
    if k > 1:
        dist = np.sqrt(d2)
        for r in range(k):
            others = np.delete(dist, r, axis=1).min(axis=1)
            members = dist[:, r] <= others / 3.0
            if members.any():
                centers[r] = Xl[members].mean(axis=0)
    return _lloyd(Xl, centers, np.ones(n), max_iter=300, tol=1e-4).centers


def _cleanup_max(local_centers: list[NDArrayFloat], k: int, *, server_max_iter: int = 1) -> NDArrayFloat:
    """K-FED's server step: start from device 0's centres, add the farthest local centre until K, then Lloyd.

    ``server_max_iter=1`` is the single Lloyd step of MUFC's adapted code, with
    no stopping test (``tol=0``); larger values run Lloyd like scikit-learn's
    ``KMeans(init=...)`` in the reference code (``tol=1e-4``). Prior validation
    of ``k'·n >= k`` is assumed (the pool then holds at least ``k`` centres).
    """
    pool = np.vstack(local_centers)
    chosen = [pool[i] for i in range(min(k, len(local_centers[0])))]
    closest = squared_distances(pool, np.array(chosen)).min(axis=1)
    while len(chosen) < k:
        far = int(np.argmax(closest))
        chosen.append(pool[far])
        closest = np.minimum(closest, squared_distances(pool, pool[far : far + 1])[:, 0])
    tol = 0.0 if server_max_iter == 1 else 1e-4
    return _lloyd(pool, np.array(chosen), np.ones(len(pool)), max_iter=server_max_iter, tol=tol).centers


@dataclass(frozen=True)
class BaselineFit:
    """Outcome of a baseline: server centres, induced loss, the time of a (re)training and point labels."""

    server_centers: NDArrayFloat
    federated_loss: float
    seconds: float  #: slowest client plus server
    labels: NDArrayInt | None = None  #: (n_samples,) nearest final server centre of each row of X, if computed


def kfed(
    X,
    parts,
    n_clusters: int,
    *,
    n_local_clusters: int | None = None,
    server_max_iter: int = 1,
    random_state: SeedLike = None,
) -> BaselineFit:
    """K-FED (Dennis, Li and Smith, ICML 2021): one-shot, unweighted, exact local centres sent in the clear.

    Each device runs :func:`_kfed_local` with ``n_local_clusters`` local
    clusters; the server runs "cleanup-max" (:func:`_cleanup_max`) on the union
    of the local centres. The federated loss charges each point to the server
    cluster of its local centre (MUFC Def. 3.1); ``labels`` instead assigns each
    point to its nearest final server centre (SecFC guide §4.7).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    parts : list of array-like of int
        Row indices of each device; they must partition ``range(n_samples)``.
    n_clusters : int
        k (SecFC), K (MUFC): the number of server clusters.
    n_local_clusters : int, default=None
        k' (k_j in Dennis et al.), the clusters each device looks for.
        ``None`` means ``n_clusters``, as in MUFC App. M.2. K-FED is designed
        for, and SecFC §5 runs it with, the true k' (the maximum number of
        clusters a device holds points of), with guarantees for ``k' <= sqrt(k)``.
    server_max_iter : int, default=1
        Lloyd iterations at the server after the farthest-point initialisation.
        1 is MUFC's adapted code (one Lloyd step); the reference code
        (metastableB/kfed) runs scikit-learn ``KMeans`` to convergence, which
        ``server_max_iter=300`` mirrors (stopping rule ``tol=1e-4`` as sklearn).
    random_state : int, Generator or None
        Pass an int for reproducible output across multiple function calls.

    Returns
    -------
    BaselineFit
        ``server_centers`` of shape (n_clusters, n_features), the induced
        ``federated_loss``, ``seconds`` (slowest device plus server) and
        ``labels`` of shape (n_samples,), in the row order of ``X``.

    Raises
    ------
    ValueError
        If ``n_local_clusters * n_clients < n_clusters``: cleanup-max could not
        find k distinct local centres (the reference code asserts ``k'·n >= k``).

    Notes
    -----
    Cleanup-max starts from device 0's centres. With ``n_local_clusters = K`` (as
    in MUFC's experiments) those already number K, so no farthest point is added
    and clusters that device 0 lacks can be missed: one reason for K-FED's large
    loss ratios in MUFC's Table 1. With ``n_local_clusters = k'`` (SecFC's
    setting) the server adds the farthest remaining local centre until it has k.

    The local step takes the 1:3 members' means in the full space rather than
    projecting them back onto the rank-k' subspace as the reference code does
    (see :func:`_kfed_local`).

    Used in :doc:`/mufc`, :doc:`/secfc`.

    References
    ----------
    D. K. Dennis, T. Li, V. Smith. "Heterogeneity for the Win: One-Shot Federated
    Clustering", ICML 2021.
    J. Li, Y. Hou, B. Buyukates, S. Avestimehr. "Secure Federated Clustering", 2022.
    """
    X = check_array(X)
    k = check_n_clusters(n_clusters, X.shape[0])
    parts = check_partition(parts, X.shape[0])
    k_local = k if n_local_clusters is None else int(n_local_clusters)
    if k_local < 1:
        raise ValueError(f"n_local_clusters={k_local} should be >= 1.")
    if k_local * len(parts) < k:
        raise ValueError(
            f"K-FED's cleanup-max needs n_local_clusters * n_clients >= n_clusters (k'·n >= k, Dennis et al. 2021); "
            f"got n_local_clusters={k_local}, n_clients={len(parts)}, n_clusters={k}."
        )
    if int(server_max_iter) < 1:
        raise ValueError(f"server_max_iter={server_max_iter} should be >= 1.")
    streams = spawn_generators(random_state, len(parts))
    centers, labels, slowest = [], [], 0.0
    for idx, rng in zip(parts, streams, strict=True):
        start = time.perf_counter()
        C = _kfed_local(X[idx], k_local, rng)
        labels.append(assign_to_nearest(X[idx], C)[0])
        centers.append(C)
        slowest = max(slowest, time.perf_counter() - start)
    start = time.perf_counter()
    server = _cleanup_max(centers, k, server_max_iter=int(server_max_iter))
    server_seconds = time.perf_counter() - start
    center_labels = [assign_to_nearest(C, server)[0] for C in centers]
    loss = _induced_loss([X[i] for i in parts], labels, center_labels, server)
    # SecFC guide §4.7: point labels = nearest final global centre (row order of X)
    point_labels = assign_to_nearest(X, server)[0]
    return BaselineFit(server, loss, slowest + server_seconds, labels=point_labels)


class DCKMeans:
    """DC-KM (Ginart et al., NeurIPS 2019) with tree height 2: clients are the leaves.

    Leaves run full K-means (K-means++ and Lloyd); the root runs K-means on the
    union of the leaf centres with unit weights. Deleting a point reruns its leaf
    and the root (MUFC App. M.2; the authors' code times leaf plus root).
    """

    def __init__(self, n_clusters: int, *, root_n_init: int = 10, random_state: SeedLike = None) -> None:
        self.n_clusters = n_clusters
        self.root_n_init = root_n_init
        self.random_state = random_state

    def fit(self, X, parts) -> DCKMeans:
        X = check_array(X)
        self._k = check_n_clusters(self.n_clusters, X.shape[0])
        parts = check_partition(parts, X.shape[0])
        self._streams = spawn_generators(self.random_state, len(parts) + 1)
        self._X = [X[idx] for idx in parts]
        self._ids = [idx.copy() for idx in parts]
        self._leaf = [None] * len(parts)
        slowest = 0.0
        for leaf in range(len(parts)):
            slowest = max(slowest, self._fit_leaf(leaf))
        self.fit_seconds_ = slowest + self._fit_root()
        return self

    def _fit_leaf(self, leaf: int) -> float:
        start = time.perf_counter()
        Xl = self._X[leaf]
        k = min(self._k, len(Xl))
        norms = row_norms_squared(Xl)
        seeds = _kmeans_plusplus(Xl, k, np.ones(len(Xl)), self._streams[leaf], x_squared_norms=norms)
        self._leaf[leaf] = local_clusters(Xl, seeds, lloyd=True, x_squared_norms=norms)
        return time.perf_counter() - start

    def _fit_root(self) -> float:
        start = time.perf_counter()
        pool = np.vstack([C for C, _ in self._leaf])
        root = KMeans(min(self._k, len(pool)), n_init=self.root_n_init, random_state=self._streams[-1]).fit(pool)
        self.server_centers_ = root.cluster_centers_
        return time.perf_counter() - start

    def remove(self, client: int, ids) -> float:
        """Forget rows ``ids`` of ``client``; returns the seconds spent (leaf, then root)."""
        position = {int(g): i for i, g in enumerate(self._ids[client].tolist())}
        missing = [int(g) for g in np.atleast_1d(ids) if int(g) not in position]
        if missing:
            raise ValueError(f"client {client} does not hold rows {missing}.")
        keep = np.ones(len(self._ids[client]), dtype=bool)
        keep[[position[int(g)] for g in np.atleast_1d(ids)]] = False
        if not keep.any():
            raise ValueError(f"removing these rows would empty client {client}.")
        self._X[client], self._ids[client] = self._X[client][keep], self._ids[client][keep]
        return self._fit_leaf(client) + self._fit_root()

    def federated_loss(self) -> float:
        """Induced loss: each point charged to the root centre of its leaf centre (MUFC Def. 3.1)."""
        center_labels = [assign_to_nearest(C, self.server_centers_)[0] for C, _ in self._leaf]
        return _induced_loss(self._X, [lab for _, lab in self._leaf], center_labels, self.server_centers_)

    def client_ids(self, client: int) -> NDArrayInt:
        return self._ids[client].copy()
