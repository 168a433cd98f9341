"""Squared Euclidean distances and nearest-centre assignment, vectorised and chunked."""

from __future__ import annotations

import numpy as np

from fedlib._typing import NDArrayFloat, NDArrayInt

# Rows of X processed at once when a full (n_samples, n_centers) distance matrix
# would be large; 2**22 doubles = 32 MiB per chunk.
_CHUNK_ELEMENTS = 2**22


def row_norms_squared(X: NDArrayFloat) -> NDArrayFloat:
    """Return ``||x_i||²`` for every row (``einsum`` avoids a temporary copy of ``X``).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        The points.

    Returns
    -------
    ndarray of shape (n_samples,)
        Squared Euclidean norm of each row.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.cluster import row_norms_squared
    >>> row_norms_squared(np.array([[3.0, 4.0], [1.0, 0.0]])).tolist()
    [25.0, 1.0]
    """
    return np.einsum("ij,ij->i", X, X)


def squared_distances(
    X: NDArrayFloat,
    centers: NDArrayFloat,
    *,
    x_squared_norms: NDArrayFloat | None = None,
) -> NDArrayFloat:
    """Matrix of squared distances ``||x_i − c_j||²``, shape ``(n_samples, n_centers)``.

    Uses ``||x||² − 2 x·c + ||c||²`` (one BLAS matrix product) and clips the
    round-off negatives to zero.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        The points.
    centers : ndarray of shape (n_centers, n_features)
        The centres.
    x_squared_norms : ndarray of shape (n_samples,) or None, default=None
        Precomputed ``||x_i||²``; computed here when ``None``.

    Returns
    -------
    ndarray of shape (n_samples, n_centers)
        Non-negative squared distances.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.cluster import squared_distances
    >>> squared_distances(np.array([[0.0, 0.0], [3.0, 4.0]]), np.array([[0.0, 0.0]])).ravel().tolist()
    [0.0, 25.0]
    """
    if x_squared_norms is None:
        x_squared_norms = row_norms_squared(X)
    d2 = X @ centers.T
    d2 *= -2.0
    d2 += x_squared_norms[:, None]
    d2 += row_norms_squared(centers)[None, :]
    np.maximum(d2, 0.0, out=d2)
    return d2


def nearest_centre_labels(X, centers: NDArrayFloat) -> NDArrayInt:
    """``predict`` of every fitted clusterer: validate ``X`` against the centres, then the nearest centre of each row.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Points to assign.
    centers : ndarray of shape (n_centers, n_features)
        Fitted centres.

    Returns
    -------
    ndarray of int64, shape (n_samples,)
        Index of the nearest centre of each row (lowest index on ties).

    Raises
    ------
    ValueError
        If ``X`` has a different number of features than the centres.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.cluster import nearest_centre_labels
    >>> nearest_centre_labels([[0.2, 0.1], [4.0, 4.0], [2.5, 2.5]], np.array([[0.0, 0.0], [5.0, 5.0]])).tolist()
    [0, 1, 0]
    """
    from fedlib._validation import check_array

    X = check_array(X)
    if X.shape[1] != centers.shape[1]:
        raise ValueError(f"X has n_features={X.shape[1]}, the model was fitted with {centers.shape[1]}.")
    return assign_to_nearest(X, centers)[0]


def assign_to_nearest(
    X: NDArrayFloat,
    centers: NDArrayFloat,
    *,
    x_squared_norms: NDArrayFloat | None = None,
) -> tuple[NDArrayInt, NDArrayFloat]:
    """Index of the nearest centre for every row, and the squared distance to it.

    Ties go to the lowest centre index, as in :func:`numpy.argmin`. Work is done
    in row chunks so memory stays bounded for large ``n_samples * n_centers``.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        The points.
    centers : ndarray of shape (n_centers, n_features)
        The centres.
    x_squared_norms : ndarray of shape (n_samples,) or None, default=None
        Precomputed ``||x_i||²``; computed here when ``None``.

    Returns
    -------
    labels : ndarray of int64, shape (n_samples,)
        Index of the nearest centre of each row.
    min_distances : ndarray of shape (n_samples,)
        Squared distance from each row to that centre.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.cluster import assign_to_nearest
    >>> labels, d2 = assign_to_nearest(np.array([[0.0], [4.0]]), np.array([[1.0], [5.0]]))
    >>> labels.tolist(), d2.tolist()
    ([0, 1], [1.0, 1.0])
    """
    n = X.shape[0]
    if x_squared_norms is None:
        x_squared_norms = row_norms_squared(X)
    labels = np.empty(n, dtype=np.int64)
    mind = np.empty(n, dtype=np.float64)
    step = max(1, _CHUNK_ELEMENTS // max(1, centers.shape[0]))
    for start in range(0, n, step):
        stop = min(n, start + step)
        d2 = squared_distances(X[start:stop], centers, x_squared_norms=x_squared_norms[start:stop])
        lab = np.argmin(d2, axis=1)
        labels[start:stop] = lab
        mind[start:stop] = d2[np.arange(stop - start), lab]
    return labels, mind
