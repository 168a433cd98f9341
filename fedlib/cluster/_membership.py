"""Cluster membership as a sparse one-hot matrix: sizes and sums, the one way fedlib forms them.

Label ``-1`` means "in no cluster" (SecFC's center-separation initialisation
leaves some points out); such points count nowhere.
"""

from __future__ import annotations

import numpy as np
from scipy.sparse import csr_matrix

from fedlib._typing import NDArrayInt


def membership_matrix(labels: NDArrayInt, n_clusters: int, *, weights=None) -> csr_matrix:
    """Sparse ``(n_clusters, n_samples)`` matrix with ``w_i`` (or 1) at ``(labels[i], i)``; label -1 is left out.

    Parameters
    ----------
    labels : ndarray of int of shape (n_samples,)
        Cluster of each point, in ``-1..n_clusters-1``.
    n_clusters : int
        Rows of the matrix.
    weights : ndarray of shape (n_samples,) or None, default=None
        Entries; ones (int64) when ``None``.

    Returns
    -------
    scipy.sparse.csr_matrix
        Shape ``(n_clusters, n_samples)``; row ``h`` marks the members of cluster ``h``.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.cluster import membership_matrix
    >>> membership_matrix(np.array([1, -1, 0, 1]), 2).toarray().tolist()
    [[0, 0, 1, 0], [1, 0, 0, 1]]
    """
    labels = np.asarray(labels, dtype=np.int64)
    n = labels.shape[0]
    members = np.flatnonzero(labels >= 0) if np.any(labels < 0) else np.arange(n)
    values = np.ones(members.size, dtype=np.int64) if weights is None else np.asarray(weights)[members]
    return csr_matrix((values, (labels[members], members)), shape=(n_clusters, n))


def cluster_sums(X: np.ndarray, labels: NDArrayInt, n_clusters: int, *, weights=None) -> np.ndarray:
    """``Σ_{i: labels_i = h} w_i x_i`` for every cluster ``h``, as one sparse-dense product (no Python loop).

    Exact for integer ``X`` (int64 accumulation) and deterministic for floats
    (rows are added in index order).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        The points, integer or float.
    labels : ndarray of int of shape (n_samples,)
        Cluster of each point, in ``-1..n_clusters-1``; -1 counts nowhere.
    n_clusters : int
        Number of clusters, k.
    weights : ndarray of shape (n_samples,) or None, default=None
        Weight ``w_i`` of each point; ones when ``None``.

    Returns
    -------
    ndarray of shape (n_clusters, n_features)
        Row ``h`` is the (weighted) sum of the points of cluster ``h``; zeros for an empty cluster.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.cluster import cluster_sums
    >>> cluster_sums(np.array([[1.0], [2.0], [4.0]]), np.array([0, 1, 0]), 2).ravel().tolist()
    [5.0, 2.0]
    """
    return np.asarray(membership_matrix(labels, n_clusters, weights=weights) @ X)


def cluster_sizes(labels: NDArrayInt, n_clusters: int) -> NDArrayInt:
    """``|S_h|`` for every cluster; label -1 (in no cluster) is not counted.

    Parameters
    ----------
    labels : ndarray of int of shape (n_samples,)
        Cluster of each point, in ``-1..n_clusters-1``.
    n_clusters : int
        Number of clusters, k.

    Returns
    -------
    ndarray of int64, shape (n_clusters,)
        Number of points in each cluster.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.cluster import cluster_sizes
    >>> cluster_sizes(np.array([0, 2, 2, -1]), 3).tolist()
    [1, 0, 2]
    """
    labels = np.asarray(labels)
    return np.bincount(labels[labels >= 0], minlength=n_clusters).astype(np.int64)
