"""Weighted Lloyd iterations and a K-means estimator built on fedlib's K-means++."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fedlib._typing import NDArrayFloat, NDArrayInt, SeedLike
from fedlib._validation import (
    check_array,
    check_n_clusters,
    check_random_state,
    check_sample_weight,
)
from fedlib.cluster._distance import assign_to_nearest, row_norms_squared
from fedlib.cluster._kmeanspp import _kmeans_plusplus


@dataclass(frozen=True)
class LloydResult:
    """Outcome of :func:`lloyd`."""

    centers: NDArrayFloat  #: (n_clusters, n_features) final centres
    labels: NDArrayInt  #: (n_samples,) index of the nearest final centre
    inertia: float  #: weighted K-means objective at the final centres
    n_iter: int  #: Lloyd iterations run
    converged: bool  #: labels stopped changing or the centre shift fell below tol


def _weighted_means(X: NDArrayFloat, labels: NDArrayInt, weights: NDArrayFloat, previous: NDArrayFloat) -> NDArrayFloat:
    """Weighted mean of each cluster; an empty cluster keeps its previous centre."""
    k = previous.shape[0]
    mass = np.bincount(labels, weights=weights, minlength=k)
    sums = np.zeros_like(previous)
    _scatter_add(sums, labels, X, weights)
    centers = previous.copy()
    nonempty = mass > 0
    centers[nonempty] = sums[nonempty] / mass[nonempty, None]
    return centers


def _scatter_add(out: NDArrayFloat, labels: NDArrayInt, X: NDArrayFloat, weights: NDArrayFloat) -> None:
    """``out[k] += sum_{i: labels_i = k} w_i x_i`` as one sparse-dense product (no Python loop)."""
    from scipy.sparse import csr_matrix

    n, k = X.shape[0], out.shape[0]
    onehot = csr_matrix((weights, (labels, np.arange(n))), shape=(k, n))
    out += onehot @ X


def lloyd(
    X,
    init,
    *,
    sample_weight=None,
    max_iter: int = 300,
    tol: float = 1e-4,
) -> LloydResult:
    """Run weighted Lloyd iterations from the centres ``init``.

    Each iteration assigns every point to its nearest centre and moves each
    centre to the weighted mean of its points (Lloyd 1982). Iteration stops when
    no label changes, or when the total squared centre shift is at most
    ``tol * mean(var(X, axis=0))``, the same rule as scikit-learn's ``KMeans``,
    so that both give identical results from the same ``init``.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    init : array-like of shape (n_clusters, n_features)
        Initial centres, e.g. from :func:`kmeans_plusplus`.
    sample_weight : array-like of shape (n_samples,), default=None
        Weighted means; MUFC's server clusters weighted bin points this way.
    max_iter : int, default=300
    tol : float, default=1e-4

    Returns
    -------
    LloydResult

    Notes
    -----
    Cost O(n_samples * n_clusters * n_features) per iteration. An empty cluster
    keeps its previous centre (scikit-learn instead relocates it to a far point;
    the two differ only when a cluster empties).
    """
    X = check_array(X)
    centers = check_array(init, name="init").copy()
    if centers.shape[1] != X.shape[1]:
        raise ValueError(f"init has n_features={centers.shape[1]}, X has n_features={X.shape[1]}.")
    weights = check_sample_weight(sample_weight, X.shape[0])
    if max_iter < 1:
        raise ValueError(f"max_iter={max_iter} should be >= 1.")
    return _lloyd(X, centers, weights, max_iter=max_iter, tol=tol)


def _lloyd(
    X: NDArrayFloat,
    centers: NDArrayFloat,
    weights: NDArrayFloat,
    *,
    max_iter: int,
    tol: float,
    x_squared_norms: NDArrayFloat | None = None,
) -> LloydResult:
    """Kernel of :func:`lloyd`. Prior validation of data is assumed."""
    if x_squared_norms is None:
        x_squared_norms = row_norms_squared(X)
    tol_scaled = float(tol * np.mean(np.var(X, axis=0))) if tol > 0 else 0.0
    labels_old = np.full(X.shape[0], -1, dtype=np.int64)
    converged = False
    n_iter = 0
    while n_iter < max_iter:
        n_iter += 1
        labels, _ = assign_to_nearest(X, centers, x_squared_norms=x_squared_norms)
        new_centers = _weighted_means(X, labels, weights, centers)
        shift = float(np.sum((new_centers - centers) ** 2))
        centers = new_centers
        if np.array_equal(labels, labels_old):
            converged = True
            break
        labels_old = labels
        if shift <= tol_scaled:
            converged = True
            break
    labels, mind = assign_to_nearest(X, centers, x_squared_norms=x_squared_norms)
    return LloydResult(
        centers=centers,
        labels=labels,
        inertia=float(weights @ mind),
        n_iter=n_iter,
        converged=converged,
    )


class KMeans:
    """K-means: K-means++ seeding then Lloyd, best of ``n_init`` runs.

    Parameters
    ----------
    n_clusters : int
        K in all four papers.
    n_init : int, default=10
        Independent seedings; the run with the lowest objective is kept. The
        papers approximate the optimal loss phi_c^* by the best of several runs.
    max_iter : int, default=300
    tol : float, default=1e-4
    random_state : int, Generator or None
        Pass an int for reproducible output across multiple function calls.

    Attributes
    ----------
    cluster_centers_ : ndarray of shape (n_clusters, n_features)
    labels_ : ndarray of shape (n_samples,)
    inertia_ : float
        Weighted K-means objective of the kept run.
    n_iter_ : int
    seed_indices_ : ndarray of shape (n_clusters,)
        Rows of ``X`` chosen by the kept run's K-means++ seeding, in order.
    """

    def __init__(
        self,
        n_clusters: int,
        *,
        n_init: int = 10,
        max_iter: int = 300,
        tol: float = 1e-4,
        random_state: SeedLike = None,
    ) -> None:
        self.n_clusters = n_clusters
        self.n_init = n_init
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state

    def fit(self, X, sample_weight=None) -> KMeans:
        """Cluster ``X``; returns ``self``."""
        X = check_array(X)
        k = check_n_clusters(self.n_clusters, X.shape[0])
        weights = check_sample_weight(sample_weight, X.shape[0])
        if self.n_init < 1:
            raise ValueError(f"n_init={self.n_init} should be >= 1.")
        rng = check_random_state(self.random_state)
        norms = row_norms_squared(X)
        runs = []
        for _ in range(self.n_init):
            seeds = _kmeans_plusplus(X, k, weights, rng, x_squared_norms=norms)
            result = _lloyd(X, X[seeds].copy(), weights, max_iter=self.max_iter, tol=self.tol, x_squared_norms=norms)
            runs.append((result.inertia, len(runs), result, seeds))
        _, _, best, best_seeds = min(runs, key=lambda run: run[:2])
        self.cluster_centers_ = best.centers
        self.labels_ = best.labels
        self.inertia_ = best.inertia
        self.n_iter_ = best.n_iter
        self.seed_indices_ = best_seeds
        return self

    def predict(self, X) -> NDArrayInt:
        """Index of the nearest learned centre for each row of ``X``."""
        X = check_array(X)
        if X.shape[1] != self.cluster_centers_.shape[1]:
            raise ValueError(
                f"X has n_features={X.shape[1]}, the model was fitted with {self.cluster_centers_.shape[1]}."
            )
        return assign_to_nearest(X, self.cluster_centers_)[0]

    def fit_predict(self, X, sample_weight=None) -> NDArrayInt:
        """Fit and return ``labels_``."""
        return self.fit(X, sample_weight=sample_weight).labels_
