"""DC-KM (Ginart, Guan, Valiant and Zou, NeurIPS 2019): divide-and-conquer K-means that deletes by retraining a leaf."""

from __future__ import annotations

import time

import numpy as np

from fedlib._typing import NDArrayInt, SeedLike
from fedlib._validation import (
    check_array,
    check_ids,
    check_is_fitted,
    check_n_clusters,
    check_partition,
    check_scalar,
    spawn_generators,
    warn_small_clients,
)
from fedlib.cluster import (
    FederatedClusteringMixin,
    KMeans,
    assign_to_nearest,
    kmeans_objective,
    kmeans_plusplus_indices,
    local_clusters,
    row_norms_squared,
)
from fedlib.unlearn._ids import IdIndex
from fedlib.unlearn._report import RemovalReport


class DCKMeans(FederatedClusteringMixin):
    """DC-KM with tree height 2, the clients as leaves (MUFC's baseline, App. M.2).

    Leaves run full K-means (K-means++ and Lloyd); the root runs K-means on the
    union of the leaf centres with unit weights. Deleting a point reruns its
    leaf and the root (the authors' code times leaf plus root).

    Parameters
    ----------
    n_clusters : int
        K, at the leaves and at the root.
    root_n_init : int, default=10
        K-means restarts at the root.
    random_state : int, numpy.random.Generator or None, default=None
        Pass an int for reproducible output across multiple function calls.

    Attributes
    ----------
    server_centers_ : ndarray of shape (n_clusters, n_features)
        The root's centres.
    fit_report_ : RemovalReport
        Training time: slowest leaf, then the root.
    federated_loss_ : float
        Induced loss of the remaining data: each point charged to the root
        centre of its leaf centre (MUFC Def. 3.1).

    Notes
    -----
    Used in :doc:`/notebooks/mufc/training` and :doc:`/notebooks/mufc/unlearning`.

    References
    ----------
    A. Ginart, M. Guan, G. Valiant, J. Zou. "Making AI Forget You: Data
    Deletion in Machine Learning", NeurIPS 2019.

    Examples
    --------
    >>> X = np.array([[0.0], [0.2], [5.0], [5.2], [0.1], [5.1]])
    >>> model = DCKMeans(2, random_state=0).fit(X, [[0, 1, 2, 3], [4, 5]])
    >>> report = model.remove(0, [1])
    >>> report.clients_reseeded, model.client_ids(0).tolist()
    ((0,), [0, 2, 3])
    """

    def __init__(self, n_clusters: int, *, root_n_init: int = 10, random_state: SeedLike = None) -> None:
        self.n_clusters = n_clusters
        self.root_n_init = root_n_init
        self.random_state = random_state

    def fit(self, X, parts) -> DCKMeans:
        """Fit every leaf, then the root.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            All points, in a global row order.
        parts : list of array-like of int
            Client ``l`` holds the rows ``X[parts[l]]``; they must partition the rows.

        Returns
        -------
        DCKMeans
            ``self``, fitted.

        Raises
        ------
        ValueError
            If ``parts`` does not partition the rows or ``n_clusters`` exceeds the number of points.

        Warns
        -----
        UserWarning
            Once per call, when some leaves (clients) hold fewer points than
            ``n_clusters``: the message gives how many; each such leaf keeps
            all its points as its centres (fewer than K).
        """
        X = check_array(X)
        self._k = check_n_clusters(self.n_clusters, X.shape[0])
        self._root_n_init = check_scalar(self.root_n_init, "root_n_init", "int", min_val=1)
        parts = check_partition(parts, X.shape[0])
        warn_small_clients([idx.size for idx in parts], self._k, "DCKMeans")
        self._streams = spawn_generators(self.random_state, len(parts) + 1)
        self._X = [X[idx] for idx in parts]
        self._ids = [idx.copy() for idx in parts]
        self._leaf: list = [None] * len(parts)
        slowest = 0.0
        for leaf in range(len(parts)):
            slowest = max(slowest, self._fit_leaf(leaf))
        root = self._fit_root()
        self.fit_report_ = RemovalReport(tuple(range(len(parts))), True, slowest, 0.0, root)
        return self

    def _fit_leaf(self, leaf: int) -> float:
        start = time.perf_counter()
        Xl = self._X[leaf]
        k = min(self._k, len(Xl))
        norms = row_norms_squared(Xl)
        seeds = kmeans_plusplus_indices(Xl, k, np.ones(len(Xl)), self._streams[leaf], x_squared_norms=norms)
        self._leaf[leaf] = local_clusters(Xl, seeds, lloyd=True, x_squared_norms=norms)
        return time.perf_counter() - start

    def _fit_root(self) -> float:
        start = time.perf_counter()
        pool = np.vstack([C for C, _ in self._leaf])
        root = KMeans(min(self._k, len(pool)), n_init=self._root_n_init, random_state=self._streams[-1]).fit(pool)
        self.server_centers_ = root.cluster_centers_
        return time.perf_counter() - start

    def remove(self, client: int, ids) -> RemovalReport:
        """Forget rows ``ids`` (row ids of the ``X`` given to fit) of ``client``: rerun its leaf, then the root.

        Parameters
        ----------
        client : int
            The leaf that holds the rows.
        ids : array-like of int
            Row ids to forget.

        Returns
        -------
        RemovalReport
            The leaf's time as client time, the root's as server time.

        Raises
        ------
        ValueError
            If ``client`` is out of range, does not hold an id, or would be emptied.
        """
        check_is_fitted(self, "server_centers_")
        client = check_scalar(client, "client", "int", min_val=0, max_val=len(self._ids) - 1)
        ids = check_ids(ids)
        rows = IdIndex(self._ids[client]).positions(ids)
        if np.any(rows < 0):
            raise ValueError(f"client {client} does not hold rows {ids[rows < 0].tolist()}.")
        keep = np.ones(len(self._ids[client]), dtype=bool)
        keep[rows] = False
        if not keep.any():
            raise ValueError(f"removing these rows would empty client {client}.")
        self._X[client], self._ids[client] = self._X[client][keep], self._ids[client][keep]
        leaf = self._fit_leaf(client)
        root = self._fit_root()
        return RemovalReport((client,), True, leaf, 0.0, root)

    @property
    def federated_loss_(self) -> float:
        """Induced loss: each point charged to the root centre of its leaf centre (MUFC Def. 3.1)."""
        check_is_fitted(self, "server_centers_")
        total = 0.0
        for Xl, (C, lab) in zip(self._X, self._leaf, strict=True):
            centre_labels = assign_to_nearest(C, self.server_centers_)[0]
            total += kmeans_objective(Xl, self.server_centers_, labels=centre_labels[lab])
        return total

    def client_ids(self, client: int) -> NDArrayInt:
        """Row ids that leaf ``client`` still holds.

        Parameters
        ----------
        client : int
            The leaf (0-based).

        Returns
        -------
        ndarray of int64
            The ids, in the leaf's row order (a copy).
        """
        check_is_fitted(self, "server_centers_")
        return self._ids[client].copy()
