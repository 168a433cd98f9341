"""Federated clustering without privacy: ``predict`` from server centres, one-shot federated K-means (MUFC Alg. 5).

Every federated estimator of fedlib (:class:`OneShotFederatedKMeans`,
:class:`KFED`, :class:`fedlib.secagg.SecFC`, :class:`fedlib.unlearn.MUFC`,
:class:`fedlib.unlearn.DCKMeans`) is a :class:`fedlib.base.FederatedClusterer`:
fitted by ``fit(X, parts=parts)``, where ``parts[l]`` are the rows of ``X``
that client ``l`` holds, with its arguments checked in one place.
"""

from __future__ import annotations

import numpy as np

from fedlib._random import spawn_generators
from fedlib._typing import NDArrayFloat, NDArrayInt, SeedLike
from fedlib._validation import check_scalar, warn_small_clients
from fedlib.base import FederatedClusterer
from fedlib.cluster._distance import assign_to_nearest, nearest_centre_labels, row_norms_squared
from fedlib.cluster._kmeanspp import kmeans_plusplus_indices
from fedlib.cluster._lloyd import KMeans, _lloyd
from fedlib.cluster._objective import kmeans_objective


class FederatedClusteringMixin:
    """``predict`` for federated estimators: the nearest of the fitted ``server_centers_``.

    Mixed into subclasses of :class:`fedlib.base.FederatedClusterer` that fit ``server_centers_``.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.base import FederatedClusterer
    >>> from fedlib.cluster import FederatedClusteringMixin
    >>> class FirstRows(FederatedClusteringMixin, FederatedClusterer):
    ...     # Server centres: the first row of each client.
    ...     def __init__(self, n_clusters=2):
    ...         self.n_clusters = n_clusters
    ...
    ...     def fit(self, X, y=None, *, parts=None):
    ...         X, parts, _ = self._check_fit_data(X, y, parts)
    ...         self.server_centers_ = X[[part[0] for part in parts]]
    ...         return self
    >>> model = FirstRows().fit(np.array([[0.0], [0.5], [9.0], [9.5]]), parts=[[0, 1], [2, 3]])
    >>> model.predict([[1.0], [8.0]]).tolist()
    [0, 1]
    """

    _fitted_attribute = "server_centers_"

    def predict(self, X) -> NDArrayInt:
        """Index of the nearest server centre for each row of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Points to assign.

        Returns
        -------
        ndarray of int64, shape (n_samples,)
            Index of the nearest server centre; ties go to the lowest index.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            Before ``fit``.
        ValueError
            If ``X`` has a different number of features than the fitted data.
        """
        X = self._check_predict_data(X)
        return nearest_centre_labels(X, self.server_centers_)


def local_clusters(
    Xl: NDArrayFloat, seeds: NDArrayInt, *, lloyd: bool, x_squared_norms: NDArrayFloat | None = None
) -> tuple[NDArrayFloat, NDArrayInt]:
    """A client's local model from its K-means++ seeds, and the local cluster of each of its points.

    The centres are the seeds themselves (MUFC Alg. 1, line 2) or, with
    ``lloyd=True``, Lloyd's iterations started from them (full client
    training: MUFC Table 2, DC-KM leaves). Every point joins its nearest
    centre. Shared by :class:`OneShotFederatedKMeans`,
    :class:`fedlib.unlearn.DCKMeans` and :class:`fedlib.unlearn.MUFC`.

    Parameters
    ----------
    Xl : ndarray of shape (n_l, n_features)
        The client's points.
    seeds : ndarray of int
        Rows of ``Xl`` chosen by K-means++.
    lloyd : bool
        Whether to refine the seeds by Lloyd's algorithm (``max_iter=300``, ``tol=1e-4``).
    x_squared_norms : ndarray of shape (n_l,) or None, default=None
        Precomputed ``||x||²`` of the rows.

    Returns
    -------
    centers : ndarray of shape (len(seeds), n_features)
        The client's local centres ``c^(l)_k``.
    labels : ndarray of int64, shape (n_l,)
        The local cluster of each point: the index of its nearest centre.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.cluster import local_clusters
    >>> X = np.array([[0.0], [1.0], [9.0], [10.0]])
    >>> centers, labels = local_clusters(X, np.array([0, 3]), lloyd=True)
    >>> centers.ravel().tolist(), labels.tolist()
    ([0.5, 9.5], [0, 0, 1, 1])
    """
    if x_squared_norms is None:
        x_squared_norms = row_norms_squared(Xl)
    centers = Xl[seeds].copy()
    if lloyd:
        ones = np.ones(len(Xl))
        centers = _lloyd(Xl, centers, ones, max_iter=300, tol=1e-4, x_squared_norms=x_squared_norms).centers
    labels, _ = assign_to_nearest(Xl, centers, x_squared_norms=x_squared_norms)
    return centers, labels


class OneShotFederatedKMeans(FederatedClusteringMixin, FederatedClusterer):
    """Cluster data spread over clients in one round, without privacy (MUFC Alg. 5, App. I).

    1. Each client seeds K centres with K-means++ on its own points (and, with
       ``client_lloyd=True``, refines them with Lloyd), then counts the points
       nearest to each centre.
    2. The clients send their centres and counts to the server, in the clear.
    3. The server runs K-means (weighted K-means++ and Lloyd) on the union of
       the client centres, each weighted by its count (``weighted=True``, as
       MUFC does) or by 1 (``weighted=False``, as DC-KM's root and K-FED do).

    Every point inherits the server cluster of its local centre: the induced
    global clustering of MUFC Definition 3.1, whose loss is phi_f (MUFC Eq. (2)).

    Parameters
    ----------
    n_clusters : int, default=8
        K, used both at the clients and at the server (MUFC App. M.2). A client
        with fewer than K points uses all of them as centres, and ``fit`` warns.
    weighted : bool, default=True
        Weight the server's K-means by the clients' counts.
    client_lloyd : bool, default=False
        MUFC's clients stop after seeding; True gives "full client training" (MUFC Table 2).
    server_n_init : int, default=10
        K-means restarts at the server.
    random_state : int, numpy.random.Generator or None, default=None
        Pass an int for reproducible output across multiple function calls.
        Client ``l`` draws from its own stream, spawned from this seed.

    Attributes
    ----------
    n_features_in_ : int
        Features of the data given to ``fit``.
    server_centers_ : ndarray of shape (n_clusters, n_features)
        Global centres C_s.
    client_centers_ : list of ndarray
        Per client, its local centres c^(l)_k.
    client_counts_ : list of ndarray
        Per client, ``|C^(l)_k|``, the points behind each local centre.
    center_labels_ : list of ndarray
        Per client, the server cluster of each local centre.
    labels_ : ndarray of shape (n_samples,)
        Induced global cluster of every point (MUFC Def. 3.1).
    federated_loss_ : float
        phi_f of MUFC Eq. (2): each point charged to its induced centre.
    nearest_loss_ : float
        phi_c(X; C_s) of MUFC Eq. (1): each point charged to its nearest centre.

    Notes
    -----
    MUFC Alg. 1 adds quantization and secure aggregation to this scheme
    (:class:`fedlib.unlearn.MUFC`). Used in :doc:`/notebooks/foundations/kmeans`.

    A client with fewer than K points cannot seed K distinct centres; it sends
    all its points as centres, so the server pool holds fewer than K of its
    centres. ``fit`` then issues one ``UserWarning`` saying how many clients
    are affected; the result is otherwise well defined.

    References
    ----------
    C. Pan, J. Sima, S. Prakash, V. Rana, O. Milenkovic. "Machine Unlearning of
    Federated Clusters", ICLR 2023, App. I.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.cluster import OneShotFederatedKMeans
    >>> X = np.array([[0.0], [0.2], [5.0], [5.2], [0.1], [5.1]])
    >>> model = OneShotFederatedKMeans(2, random_state=0).fit(X, parts=[[0, 1, 2, 3], [4, 5]])
    >>> sorted(model.server_centers_.ravel().round().tolist())
    [0.0, 5.0]
    """

    def __init__(
        self,
        n_clusters: int = 8,
        *,
        weighted: bool = True,
        client_lloyd: bool = False,
        server_n_init: int = 10,
        random_state: SeedLike = None,
    ) -> None:
        self.n_clusters = n_clusters
        self.weighted = weighted
        self.client_lloyd = client_lloyd
        self.server_n_init = server_n_init
        self.random_state = random_state

    def fit(self, X, y=None, *, parts=None) -> OneShotFederatedKMeans:
        """Cluster ``X`` held by clients ``parts`` (row indices of ``X``; they must partition its rows).

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
        OneShotFederatedKMeans
            ``self``, fitted.

        Raises
        ------
        ValueError
            If ``parts`` does not partition the rows of ``X``, a client is
            empty, or ``n_clusters`` exceeds the number of points.

        Warns
        -----
        UserWarning
            Once per call, when some clients hold fewer points than
            ``n_clusters``: the message gives how many, and each of them uses
            all its points as local centres (fewer than K).
        """
        X, parts, k = self._check_fit_data(X, y, parts)
        n = X.shape[0]
        server_n_init = check_scalar(self.server_n_init, "server_n_init", "int", min_val=1)
        warn_small_clients([idx.size for idx in parts], k, "OneShotFederatedKMeans")
        streams = spawn_generators(self.random_state, len(parts) + 1)
        norms = row_norms_squared(X)
        centers, counts, local_labels = [], [], []
        for idx, rng in zip(parts, streams[:-1], strict=True):
            Xl, nl = X[idx], norms[idx]
            kl = min(k, idx.size)
            seeds = kmeans_plusplus_indices(Xl, kl, np.ones(idx.size), rng, x_squared_norms=nl)
            C, lab = local_clusters(Xl, seeds, lloyd=bool(self.client_lloyd), x_squared_norms=nl)
            centers.append(C)
            counts.append(np.bincount(lab, minlength=kl))
            local_labels.append(lab)
        stacked = np.vstack(centers)
        w = np.concatenate(counts).astype(np.float64) if self.weighted else np.ones(stacked.shape[0])
        keep = w > 0  # a local centre with no points carries no information
        server = KMeans(k, n_init=server_n_init, random_state=streams[-1]).fit(stacked[keep], sample_weight=w[keep])
        C_s = server.cluster_centers_
        center_server_labels = assign_to_nearest(stacked, C_s)[0]
        splits = np.cumsum([c.shape[0] for c in centers])[:-1]
        per_client = np.split(center_server_labels, splits)
        labels = np.empty(n, dtype=np.int64)
        for idx, lab, srv in zip(parts, local_labels, per_client, strict=True):
            labels[idx] = srv[lab]
        self.server_centers_ = C_s
        self.client_centers_ = centers
        self.client_counts_ = counts
        self.center_labels_ = per_client
        self.labels_ = labels
        self.federated_loss_ = kmeans_objective(X, C_s, labels=labels)
        self.nearest_loss_ = float(np.sum(assign_to_nearest(X, C_s, x_squared_norms=norms)[1]))
        return self
