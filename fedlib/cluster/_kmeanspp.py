"""K-means++ seeding (D^2 sampling), weighted, with the seeding order kept."""

from __future__ import annotations

import warnings

import numpy as np

from fedlib._typing import NDArrayFloat, NDArrayInt, SeedLike
from fedlib._validation import check_array, check_n_clusters, check_random_state, check_sample_weight
from fedlib.cluster._distance import row_norms_squared, squared_distances


def kmeans_plusplus(
    X,
    n_clusters: int,
    *,
    sample_weight=None,
    random_state: SeedLike = None,
    n_local_trials: int | None = None,
) -> tuple[NDArrayFloat, NDArrayInt]:
    """Choose ``n_clusters`` initial centres from ``X`` by D^2 sampling (K-means++).

    The first centre is drawn with probability proportional to ``sample_weight``;
    every next centre is drawn with probability proportional to
    ``w(x) * d^2(x, C)``, where ``C`` holds the centres chosen so far
    (Arthur & Vassilvitskii 2007; MUFC App. B and App. I for weights).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The points to seed from.
    n_clusters : int
        Number of centres, K in all four papers.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights; ``None`` means all ones. A weight ``w`` acts like
        ``w`` copies of the point.
    random_state : int, Generator or None
        Pass an int for reproducible output across multiple function calls.
    n_local_trials : int or None, default=None
        ``None`` or 1 gives plain D^2 sampling, which the exact-unlearning proof of
        MUFC (Lemma 5.1) requires. A larger value gives scikit-learn's greedy
        variant: draw that many candidates per step and keep the one that lowers
        the potential most.

    Returns
    -------
    centers : ndarray of shape (n_clusters, n_features)
        The chosen points, in the order they were chosen.
    indices : ndarray of shape (n_clusters,)
        Their row indices in ``X``, in the same order.

    Notes
    -----
    Cost O(n_samples * n_clusters * n_features) with one matrix-vector product per
    step. With plain sampling the t-th centre is determined by the t-th uniform
    number drawn from ``random_state`` (inverse-CDF sampling), so a seeding can be
    replayed step by step, which MUFC Alg. 3 relies on.
    Used in :doc:`/notebooks/foundations/kmeans`.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 0.0], [0.1, 0.0], [5.0, 5.0], [5.1, 5.0]])
    >>> centers, indices = kmeans_plusplus(X, 2, random_state=0)
    >>> sorted(int(i) // 2 for i in indices)
    [0, 1]
    """
    X = check_array(X)
    n_clusters = check_n_clusters(n_clusters, X.shape[0])
    weights = check_sample_weight(sample_weight, X.shape[0])
    if n_local_trials is None:
        n_local_trials = 1
    if int(n_local_trials) < 1:
        raise ValueError(f"n_local_trials={n_local_trials} should be >= 1.")
    rng = check_random_state(random_state)
    n_positive = int(np.count_nonzero(weights))
    if n_positive < n_clusters:
        raise ValueError(f"only {n_positive} points have positive sample_weight; need >= n_clusters={n_clusters}.")
    indices = _kmeans_plusplus(X, n_clusters, weights, rng, n_local_trials=int(n_local_trials))
    return X[indices].copy(), indices


def _sample_index(cumulative: NDArrayFloat, u: float | NDArrayFloat) -> NDArrayInt:
    """Inverse-CDF draw: the first index whose cumulative mass exceeds ``u * total``."""
    total = cumulative[-1]
    idx = np.searchsorted(cumulative, np.asarray(u) * total, side="right")
    # u * total can round up to total; stay in range.
    return np.minimum(idx, cumulative.shape[0] - 1)


def _kmeans_plusplus(
    X: NDArrayFloat,
    n_clusters: int,
    weights: NDArrayFloat,
    rng: np.random.Generator,
    *,
    n_local_trials: int = 1,
    x_squared_norms: NDArrayFloat | None = None,
) -> NDArrayInt:
    """Kernel of :func:`kmeans_plusplus`; returns the chosen row indices in order.

    Prior validation of data is assumed.
    """
    if x_squared_norms is None:
        x_squared_norms = row_norms_squared(X)
    indices = np.empty(n_clusters, dtype=np.int64)
    first = int(_sample_index(np.cumsum(weights), rng.random()))
    indices[0] = first
    closest = squared_distances(X, X[first : first + 1], x_squared_norms=x_squared_norms)[:, 0]
    closest[first] = 0.0
    for t in range(1, n_clusters):
        potential = weights * closest
        cumulative = np.cumsum(potential)
        if not cumulative[-1] > 0.0:
            # Every positive-weight point coincides with a centre: fewer distinct
            # points than n_clusters. Fall back to the weights, as if all were equal.
            warnings.warn(
                f"X has fewer distinct positive-weight points than n_clusters={n_clusters}; "
                "duplicate centres were chosen.",
                RuntimeWarning,
                stacklevel=3,
            )
            cumulative = np.cumsum(weights)
        if n_local_trials == 1:
            chosen = int(_sample_index(cumulative, rng.random()))
            new = squared_distances(X, X[chosen : chosen + 1], x_squared_norms=x_squared_norms)[:, 0]
        else:
            candidates = _sample_index(cumulative, rng.random(n_local_trials))
            d2 = squared_distances(X, X[candidates], x_squared_norms=x_squared_norms)
            np.minimum(d2, closest[:, None], out=d2)
            best = int(np.argmin(weights @ d2))
            chosen = int(candidates[best])
            new = d2[:, best]
        indices[t] = chosen
        np.minimum(closest, new, out=closest)
        closest[chosen] = 0.0
    return indices
