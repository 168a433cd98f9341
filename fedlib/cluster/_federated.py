"""One-shot federated K-means without privacy (MUFC Alg. 5) and the induced federated loss."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fedlib._typing import NDArrayFloat, NDArrayInt, SeedLike
from fedlib._validation import check_array, check_n_clusters, check_partition, spawn_generators
from fedlib.cluster._distance import assign_to_nearest, row_norms_squared
from fedlib.cluster._kmeanspp import _kmeans_plusplus
from fedlib.cluster._lloyd import KMeans, _lloyd


@dataclass(frozen=True)
class FederatedClustering:
    """Outcome of :func:`one_shot_federated_kmeans`."""

    server_centers: NDArrayFloat  #: (K, d) global centres C_s
    client_centers: list[NDArrayFloat]  #: per client, its local centres c^(l)_k
    client_counts: list[NDArrayInt]  #: per client, |C^(l)_k|, the points behind each local centre
    center_labels: list[NDArrayInt]  #: per client, the server cluster of each local centre
    labels: NDArrayInt  #: (n,) induced global cluster of every point (MUFC Def. 3.1)
    federated_loss: float  #: phi_f of MUFC Eq. (2): each point charged to its induced centre
    nearest_loss: float  #: phi_c(X; C_s) of MUFC Eq. (1): each point charged to its nearest centre


def local_clusters(
    Xl: NDArrayFloat, seeds: NDArrayInt, *, lloyd: bool, x_squared_norms: NDArrayFloat | None = None
) -> tuple[NDArrayFloat, NDArrayInt]:
    """A client's local model from its K-means++ seeds, and the local cluster of each of its points.

    The centres are the seeds themselves (MUFC Alg. 1 line 1) or, with ``lloyd=True``,
    Lloyd's iterations started from them (full client training: MUFC Table 2, DC-KM
    leaves). Every point joins its nearest centre. Shared by
    :func:`one_shot_federated_kmeans`, :class:`fedlib.cluster.DCKMeans` and
    :class:`fedlib.unlearn.MUFC`.
    """
    if x_squared_norms is None:
        x_squared_norms = row_norms_squared(Xl)
    centers = Xl[seeds].copy()
    if lloyd:
        ones = np.ones(len(Xl))
        centers = _lloyd(Xl, centers, ones, max_iter=300, tol=1e-4, x_squared_norms=x_squared_norms).centers
    labels, _ = assign_to_nearest(Xl, centers, x_squared_norms=x_squared_norms)
    return centers, labels


def one_shot_federated_kmeans(
    X,
    parts: list[NDArrayInt],
    n_clusters: int,
    *,
    weighted: bool = True,
    client_lloyd: bool = False,
    server_n_init: int = 10,
    random_state: SeedLike = None,
) -> FederatedClustering:
    """Cluster data spread over clients in one round (MUFC Alg. 5, App. I).

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
    X : array-like of shape (n_samples, n_features)
    parts : list of index arrays
        Client ``l`` holds the rows ``X[parts[l]]``; the arrays must partition ``range(n_samples)``.
    n_clusters : int
        K, used both at the clients and at the server (MUFC App. M.2). A client
        with fewer than K points uses all of them as centres.
    weighted : bool, default=True
    client_lloyd : bool, default=False
        MUFC's clients stop after seeding; True gives "full client training" (MUFC Table 2).
    server_n_init : int, default=10
    random_state : int, Generator or None
        Pass an int for reproducible output across multiple function calls.
        Client ``l`` draws from its own stream, spawned from this seed.

    Notes
    -----
    MUFC Alg. 1 adds quantization and secure aggregation to this scheme.
    Used in :doc:`/notebooks/foundations/kmeans`.
    """
    X = check_array(X)
    n = X.shape[0]
    k = check_n_clusters(n_clusters, n)
    parts = check_partition(parts, n)
    streams = spawn_generators(random_state, len(parts) + 1)
    norms = row_norms_squared(X)
    centers, counts, local_labels = [], [], []
    for idx, rng in zip(parts, streams[:-1], strict=True):
        Xl, nl = X[idx], norms[idx]
        kl = min(k, idx.size)
        weights = np.ones(idx.size)
        seeds = _kmeans_plusplus(Xl, kl, weights, rng, x_squared_norms=nl)
        C, lab = local_clusters(Xl, seeds, lloyd=client_lloyd, x_squared_norms=nl)
        centers.append(C)
        counts.append(np.bincount(lab, minlength=kl))
        local_labels.append(lab)
    stacked = np.vstack(centers)
    w = np.concatenate(counts).astype(np.float64) if weighted else np.ones(stacked.shape[0])
    keep = w > 0  # a local centre with no points carries no information
    server = KMeans(k, n_init=server_n_init, random_state=streams[-1]).fit(stacked[keep], sample_weight=w[keep])
    C_s = server.cluster_centers_
    center_server_labels = assign_to_nearest(stacked, C_s)[0]
    splits = np.cumsum([c.shape[0] for c in centers])[:-1]
    per_client = np.split(center_server_labels, splits)
    labels = np.empty(n, dtype=np.int64)
    for idx, lab, srv in zip(parts, local_labels, per_client, strict=True):
        labels[idx] = srv[lab]
    diff = X - C_s[labels]
    federated_loss = float(np.einsum("ij,ij->", diff, diff))
    nearest_loss = float(np.sum(assign_to_nearest(X, C_s, x_squared_norms=norms)[1]))
    return FederatedClustering(
        server_centers=C_s,
        client_centers=centers,
        client_counts=counts,
        center_labels=per_client,
        labels=labels,
        federated_loss=federated_loss,
        nearest_loss=nearest_loss,
    )
