"""DC-KM (Ginart, Guan, Valiant and Zou, NeurIPS 2019): divide-and-conquer K-means that deletes by retraining a leaf."""

from __future__ import annotations

import time

import numpy as np

from fedlib._random import spawn_generators
from fedlib._typing import NDArrayInt, SeedLike
from fedlib._validation import check_is_fitted, check_scalar, warn_small_clients
from fedlib.base import FederatedClusterer, UnlearningMixin, UnlearningReport
from fedlib.cluster import (
    FederatedClusteringMixin,
    KMeans,
    assign_to_nearest,
    kmeans_objective,
    kmeans_plusplus_indices,
    local_clusters,
    row_norms_squared,
)
from fedlib.exceptions import UnlearningRequestError
from fedlib.unlearn._ids import IdIndex


class DCKMeans(UnlearningMixin, FederatedClusteringMixin, FederatedClusterer):
    """DC-KM with tree height 2, the clients as leaves (MUFC's baseline, App. M.2).

    Leaves run full K-means (K-means++ and Lloyd); the root runs K-means on the
    union of the leaf centres with unit weights. Unlearning a point reruns its
    leaf and the root (the authors' code times leaf plus root); unlearning a
    client drops its leaf and reruns the root. Both are exact.

    Parameters
    ----------
    n_clusters : int, default=8
        K, at the leaves and at the root.
    root_n_init : int, default=10
        K-means restarts at the root.
    random_state : int, numpy.random.Generator or None, default=None
        Pass an int for reproducible output across multiple function calls.

    Attributes
    ----------
    server_centers_ : ndarray of shape (n_clusters, n_features)
        The root's centres.
    fit_report_ : UnlearningReport
        Training time: slowest leaf, then the root.
    n_features_in_ : int
        Features of the data given to ``fit``.
    federated_loss_ : float
        Induced loss of the remaining data: each point charged to the root
        centre of its leaf centre (MUFC Def. 3.1).

    Notes
    -----
    Exact in distribution, not bit for bit: a leaf (and the root) is refitted
    from its stream as earlier fits left it, so no retraining from scratch with
    the same ``random_state`` reproduces it (test it with
    ``fedlib.audit.exactness_test``). Used in :doc:`/notebooks/mufc/training`
    and :doc:`/notebooks/mufc/unlearning`.

    References
    ----------
    A. Ginart, M. Guan, G. Valiant, J. Zou. "Making AI Forget You: Data
    Deletion in Machine Learning", NeurIPS 2019.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.unlearn import DCKMeans
    >>> X = np.array([[0.0], [0.2], [5.0], [5.2], [0.1], [5.1]])
    >>> model = DCKMeans(2, random_state=0).fit(X, parts=[[0, 1, 2, 3], [4, 5]])
    >>> report = model.unlearn([1])
    >>> report.clients_retrained, model.client_ids(0).tolist()
    ((0,), [0, 2, 3])
    """

    def __init__(self, n_clusters: int = 8, *, root_n_init: int = 10, random_state: SeedLike = None) -> None:
        self.n_clusters = n_clusters
        self.root_n_init = root_n_init
        self.random_state = random_state

    def fit(self, X, y=None, *, parts=None) -> DCKMeans:
        """Fit every leaf, then the root.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            All points, in a global row order.
        y : None
            Ignored; present for scikit-learn's ``fit(X, y)``.
        parts : list of array-like of int, optional
            Client ``l`` holds the rows ``X[parts[l]]``; they must partition the
            rows. ``None``: one client holds every row.

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
        X, parts, self._k = self._check_fit_data(X, y, parts)
        self._root_n_init = check_scalar(self.root_n_init, "root_n_init", "int", min_val=1)
        warn_small_clients([idx.size for idx in parts], self._k, "DCKMeans")
        self._streams = spawn_generators(self.random_state, len(parts) + 1)
        self._X = [X[idx] for idx in parts]
        self._ids = [idx.copy() for idx in parts]
        self._leaf: list = [None] * len(parts)
        slowest = 0.0
        for leaf in range(len(parts)):
            slowest = max(slowest, self._fit_leaf(leaf))
        root = self._fit_root()
        self.fit_report_ = UnlearningReport(
            clients_retrained=tuple(range(len(parts))), server_refit=True, client_seconds=slowest, server_seconds=root
        )
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
        pool = np.vstack([leaf[0] for leaf in self._leaf if leaf is not None])
        root = KMeans(min(self._k, len(pool)), n_init=self._root_n_init, random_state=self._streams[-1]).fit(pool)
        self.server_centers_ = root.cluster_centers_
        return time.perf_counter() - start

    def _model_state(self) -> dict[str, np.ndarray]:
        check_is_fitted(self, "server_centers_")
        state = {f"leaf {c} centers": leaf[0].copy() for c, leaf in enumerate(self._leaf) if leaf is not None}
        state["server centers"] = self.server_centers_.copy()
        return state

    def _held_samples(self) -> NDArrayInt:
        return np.concatenate([ids for ids, leaf in zip(self._ids, self._leaf, strict=True) if leaf is not None])

    def _held_clients(self) -> NDArrayInt:
        return np.array([c for c, leaf in enumerate(self._leaf) if leaf is not None], dtype=np.int64)

    def _unlearn(self, samples: NDArrayInt, clients: NDArrayInt) -> UnlearningReport:
        """Rerun every leaf that lost rows, drop every leaf forgotten or emptied, then rerun the root."""
        gone = set(clients.tolist())
        keep_rows = {}
        for leaf in self._held_clients().tolist():
            if leaf in gone:
                continue
            rows = IdIndex(self._ids[leaf]).positions(samples)
            rows = rows[rows >= 0]
            if rows.size:
                keep = np.ones(len(self._ids[leaf]), dtype=bool)
                keep[rows] = False
                keep_rows[leaf] = keep
        emptied = {leaf for leaf, keep in keep_rows.items() if not keep.any()}
        if len(gone | emptied) >= len(self._held_clients()):
            raise UnlearningRequestError("cannot unlearn every client: the root would have no leaf.")
        slowest = 0.0
        for leaf, keep in keep_rows.items():
            if leaf in emptied:
                continue
            self._X[leaf], self._ids[leaf] = self._X[leaf][keep], self._ids[leaf][keep]
            slowest = max(slowest, self._fit_leaf(leaf))
        for leaf in gone | emptied:
            self._leaf[leaf] = None
        root = self._fit_root()
        return UnlearningReport(
            forgotten_samples=tuple(samples.tolist()),
            forgotten_clients=tuple(sorted(set(clients.tolist()))),
            clients_retrained=tuple(sorted(set(keep_rows) - emptied)),
            server_refit=True,
            rounds=1,
            client_seconds=slowest,
            server_seconds=root,
            details={"left": tuple(sorted(emptied))},
        )

    @property
    def federated_loss_(self) -> float:
        """Induced loss: each point charged to the root centre of its leaf centre (MUFC Def. 3.1)."""
        check_is_fitted(self, "server_centers_")
        total = 0.0
        for Xl, leaf in zip(self._X, self._leaf, strict=True):
            if leaf is None:
                continue
            C, lab = leaf
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
            The ids, in the leaf's row order (a copy); empty for a forgotten leaf.
        """
        check_is_fitted(self, "server_centers_")
        return self._ids[client].copy() if self._leaf[client] is not None else np.empty(0, dtype=np.int64)
