"""K-means++ seeding (D^2 sampling), weighted, with the seeding order kept."""

from __future__ import annotations

import warnings
from typing import Protocol

import numpy as np

from fedlib._random import check_random_state
from fedlib._typing import NDArrayFloat, NDArrayInt, SeedLike
from fedlib._validation import check_array, check_n_clusters, check_race_keys, check_sample_weight
from fedlib.cluster._distance import row_norms_squared, squared_distances


def kmeans_plusplus(
    X,
    n_clusters: int,
    *,
    sample_weight=None,
    random_state: SeedLike = None,
    n_local_trials: int | None = None,
    race_keys=None,
) -> tuple[NDArrayFloat, NDArrayInt]:
    """Choose ``n_clusters`` initial centres from ``X`` by D^2 sampling (K-means++).

    The first centre is drawn with probability proportional to ``sample_weight``;
    every next centre is drawn with probability proportional to
    ``w(x) d²(x, C)``, where ``C`` holds the centres chosen so far
    (Arthur and Vassilvitskii 2007; MUFC App. B, and App. I for weights).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The points to seed from.
    n_clusters : int
        Number of centres, K in all four papers.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights; ``None`` means all ones. A weight ``w`` acts like
        ``w`` copies of the point.
    random_state : int, numpy.random.Generator or None, default=None
        Pass an int for reproducible output across multiple function calls.
    n_local_trials : int or None, default=None
        ``None`` or 1 gives plain D^2 sampling, which the exact-unlearning proof of
        MUFC (Lemma 5.1) requires. A larger value gives scikit-learn's greedy
        variant: draw that many candidates per step and keep the one that lowers
        the potential most.
    race_keys : array-like of shape (n_samples, n_clusters), default=None
        Exponential(1) variables, one per point and step (see :func:`draw_race_keys`).
        When given, the t-th centre is the point minimising
        ``race_keys[i, t] / (w_i d^2(x_i, C))``: an "exponential race", which is
        an exact D^2 draw whose winner does not change when points that did not
        win are deleted. MUFC's exact unlearning (:mod:`fedlib.unlearn`) uses it
        so that unlearning gives *bit for bit* the seeding that rerunning on the
        remaining data with the same keys would give. ``random_state`` is then unused.

    Returns
    -------
    centers : ndarray of shape (n_clusters, n_features)
        The chosen points, in the order they were chosen.
    indices : ndarray of int64, shape (n_clusters,)
        Their row indices in ``X``, in the same order.

    Raises
    ------
    ValueError
        If ``n_local_trials < 1``, if ``race_keys`` are combined with
        ``n_local_trials > 1``, or if fewer than ``n_clusters`` points have a
        positive weight.

    Warns
    -----
    RuntimeWarning
        When every positive-weight point already coincides with a centre
        (fewer distinct points than ``n_clusters``): duplicate centres are chosen.

    Notes
    -----
    Cost O(n_samples * n_clusters * n_features) with one matrix-vector product per
    step. With plain sampling the t-th centre is determined by the t-th uniform
    number drawn from ``random_state`` (inverse-CDF sampling), so a seeding can be
    replayed step by step, which MUFC Alg. 3 relies on.
    Used in :doc:`/notebooks/foundations/kmeans`.

    References
    ----------
    D. Arthur, S. Vassilvitskii. "k-means++: The Advantages of Careful
    Seeding", SODA 2007.

    Examples
    --------
    >>> from fedlib.cluster import kmeans_plusplus
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
    if race_keys is not None:
        race_keys = check_race_keys(race_keys, X.shape[0], n_clusters)
        if n_local_trials != 1:
            raise ValueError("race_keys draw plain D^2 samples; they cannot be combined with n_local_trials > 1.")
    n_positive = int(np.count_nonzero(weights))
    if n_positive < n_clusters:
        raise ValueError(f"only {n_positive} points have positive sample_weight; need >= n_clusters={n_clusters}.")
    indices = kmeans_plusplus_indices(
        X, n_clusters, weights, rng, n_local_trials=int(n_local_trials), race_keys=race_keys
    )
    return X[indices].copy(), indices


def draw_race_keys(n_samples: int, n_clusters: int, *, random_state: SeedLike = None) -> NDArrayFloat:
    """Draw exponential-race keys for ``kmeans_plusplus(..., race_keys=...)``.

    Row ``i`` belongs to point ``i`` for the whole life of the model: delete a
    point and you delete its row. Seeding with the same keys on the remaining
    rows then replays the draws that did not depend on the deleted points, so
    MUFC Alg. 3 can be checked against retraining bit for bit.

    Parameters
    ----------
    n_samples : int
        Number of points, one row of keys each.
    n_clusters : int
        Number of seeding steps, K, one column each.
    random_state : int, numpy.random.Generator or None, default=None
        Pass an int for reproducible output across multiple function calls.

    Returns
    -------
    ndarray of shape (n_samples, n_clusters)
        Independent Exponential(1) variables.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.cluster import draw_race_keys, kmeans_plusplus
    >>> X = np.array([[0.0], [0.1], [5.0], [5.1]])
    >>> keys = draw_race_keys(4, 2, random_state=0)
    >>> _, seeds = kmeans_plusplus(X, 2, race_keys=keys)
    >>> removed = next(i for i in range(4) if i not in seeds)  # a point that is not a seed
    >>> keep = np.arange(4) != removed
    >>> _, again = kmeans_plusplus(X[keep], 2, race_keys=keys[keep])
    >>> np.flatnonzero(keep)[again].tolist() == seeds.tolist()
    True
    """
    rng = check_random_state(random_state)
    return rng.standard_exponential((int(n_samples), int(n_clusters)))


def _sample_index(cumulative: NDArrayFloat, u: float | NDArrayFloat) -> NDArrayInt:
    """Inverse-CDF draw: the first index whose cumulative mass exceeds ``u * total``."""
    total = cumulative[-1]
    idx = np.searchsorted(cumulative, np.asarray(u) * total, side="right")
    # u * total can round up to total; stay in range.
    return np.minimum(idx, cumulative.shape[0] - 1)


class DistanceColumns(Protocol):
    """Squared distances from every point to some of the points: what K-means++ needs of the data.

    ``columns(indices)`` returns the ``(n_samples, len(indices))`` matrix of
    ``||x_i − x_c||²`` for ``c`` in ``indices``. Coordinates give it by a
    matrix product (:class:`CoordinateColumns`); SecFC's server gets it by
    decoding the distances to singleton clusters
    (:class:`fedlib.cluster.OracleColumns`), never seeing a point.
    A protocol: any object with this attribute and call signature qualifies.

    Attributes
    ----------
    n_samples : int
        Number of points.

    Examples
    --------
    K-means++ from a precomputed matrix of squared distances draws the seeds it draws from coordinates:

    >>> import numpy as np
    >>> from fedlib.cluster import kmeans_plusplus_indices
    >>> class PrecomputedColumns:
    ...     def __init__(self, D):
    ...         self.D, self.n_samples = D, D.shape[0]
    ...
    ...     def __call__(self, indices):
    ...         return self.D[:, indices]
    >>> X = np.array([[0.0, 0.0], [0.1, 0.0], [5.0, 5.0], [5.1, 5.0]])
    >>> D = ((X[:, None, :] - X[None, :, :]) ** 2).sum(axis=-1)
    >>> kmeans_plusplus_indices(PrecomputedColumns(D), 2, np.ones(4), 0).tolist()
    [2, 0]
    >>> kmeans_plusplus_indices(X, 2, np.ones(4), 0).tolist()
    [2, 0]
    """

    n_samples: int

    def __call__(self, indices: NDArrayInt) -> np.ndarray: ...


class CoordinateColumns:
    """:class:`DistanceColumns` of points given by their coordinates (one BLAS product per call).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        The points, already validated (float64, finite).
    x_squared_norms : ndarray of shape (n_samples,) or None, default=None
        Precomputed ``||x_i||²``; computed here when ``None``.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.cluster import CoordinateColumns
    >>> columns = CoordinateColumns(np.array([[0.0, 0.0], [3.0, 4.0]]))
    >>> columns(np.array([1])).ravel().tolist()
    [25.0, 0.0]
    """

    def __init__(self, X: NDArrayFloat, x_squared_norms: NDArrayFloat | None = None) -> None:
        self.X = X
        self.n_samples = X.shape[0]
        self.x_squared_norms = row_norms_squared(X) if x_squared_norms is None else x_squared_norms

    def __call__(self, indices: NDArrayInt) -> NDArrayFloat:
        """Squared distances from every point to the points ``indices``, shape ``(n_samples, len(indices))``."""
        if len(indices) == 1:  # a view of one row, the same product as a fresh seeding computes
            c = int(indices[0])
            return squared_distances(self.X, self.X[c : c + 1], x_squared_norms=self.x_squared_norms)
        return squared_distances(self.X, self.X[indices], x_squared_norms=self.x_squared_norms)


def kmeans_plusplus_indices(
    points: NDArrayFloat | DistanceColumns,
    n_clusters: int,
    weights: NDArrayFloat,
    random_state: SeedLike,
    *,
    n_local_trials: int = 1,
    x_squared_norms: NDArrayFloat | None = None,
    race_keys: NDArrayFloat | None = None,
    prefix: NDArrayInt | None = None,
    return_distances: bool = False,
):
    """The one K-means++ kernel of fedlib: the chosen row indices in draw order, inputs already checked.

    :func:`kmeans_plusplus` checks its inputs and calls this; so do the
    federated estimators and MUFC's unlearning, which hold arrays they have
    already checked, a prefix to replay, or distances instead of coordinates.
    Draws are plain D² sampling by inverse CDF, one uniform per step (the
    ``t``-th centre from the ``t``-th uniform of ``random_state``), scikit-learn's
    greedy variant with ``n_local_trials > 1``, or an exponential race on
    ``race_keys``. With a ``prefix`` drawing continues from step
    ``len(prefix)``, and the running minimum of D² is rebuilt one centre at a
    time, exactly as a fresh run computes it, so a replay gives the same
    floating-point values (MUFC Alg. 3 keeps the seeds drawn before the first
    removed one).

    Parameters
    ----------
    points : ndarray of shape (n_samples, n_features) or DistanceColumns
        Coordinates (float64, C-contiguous) or any :class:`DistanceColumns`
        (SecFC's seeds are drawn from decoded distances with this same kernel).
    n_clusters : int
        Number of centres, at most the number of positive weights.
    weights : ndarray of float64, shape (n_samples,)
        Non-negative sample weights.
    random_state : int, numpy.random.Generator, numpy.random.SeedSequence or None
        The uniforms of plain and greedy sampling (unused with ``race_keys``); a Generator is used as is,
        so the caller's stream advances.
    n_local_trials : int, default=1
        Candidates per step; 1 is plain D² sampling.
    x_squared_norms : ndarray of shape (n_samples,), optional
        ``||x_i||²`` of coordinate ``points``, computed when not given.
    race_keys : ndarray of shape (n_samples, >= n_clusters), optional
        Exponential(1) keys (:func:`draw_race_keys`), already checked.
    prefix : ndarray of int, optional
        Centres already chosen, in draw order.
    return_distances : bool, default=False
        Also return the ``(n_samples, n_clusters)`` matrix of seed columns as
        ``points`` gave them (exact integers for SecFC).

    Returns
    -------
    indices : ndarray of int64, shape (n_clusters,)
        The chosen rows, in draw order.
    distances : ndarray of shape (n_samples, n_clusters)
        Only with ``return_distances=True``: the columns of the chosen seeds.

    Warns
    -----
    RuntimeWarning
        When every positive-weight point already coincides with a centre.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.cluster import kmeans_plusplus, kmeans_plusplus_indices
    >>> X = np.array([[0.0, 0.0], [0.1, 0.0], [5.0, 5.0], [5.1, 5.0]])
    >>> idx = kmeans_plusplus_indices(X, 2, np.ones(4), np.random.default_rng(0))
    >>> idx.tolist() == kmeans_plusplus(X, 2, random_state=0)[1].tolist()
    True
    """
    rng = check_random_state(random_state)
    columns = CoordinateColumns(points, x_squared_norms) if isinstance(points, np.ndarray) else points
    n = columns.n_samples
    indices = np.empty(n_clusters, dtype=np.int64)
    seed_columns: list[np.ndarray] = []
    if prefix is not None and len(prefix) > 0:
        start = len(prefix)
        indices[:start] = prefix
    else:
        start = 1
        if race_keys is not None:
            with np.errstate(divide="ignore"):
                indices[0] = int(np.argmin(race_keys[:, 0] / weights))
        else:
            indices[0] = int(_sample_index(np.cumsum(weights), rng.random()))
    closest = np.full(n, np.inf)
    for c in indices[:start]:
        column = columns(np.array([c]))[:, 0]
        seed_columns.append(column)
        np.minimum(closest, column, out=closest)
        closest[c] = 0.0
    for t in range(start, n_clusters):
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
        if race_keys is not None:
            rate = potential if np.any(potential > 0) else weights
            with np.errstate(divide="ignore"):
                chosen = int(np.argmin(race_keys[:, t] / rate))
            new = columns(np.array([chosen]))[:, 0]
        elif n_local_trials == 1:
            chosen = int(_sample_index(cumulative, rng.random()))
            new = columns(np.array([chosen]))[:, 0]
        else:
            candidates = _sample_index(cumulative, rng.random(n_local_trials))
            raw = columns(candidates)
            d2 = np.minimum(raw, closest[:, None])
            best = int(np.argmin(weights @ d2))
            chosen = int(candidates[best])
            new = raw[:, best]
        indices[t] = chosen
        seed_columns.append(new)
        np.minimum(closest, new, out=closest)
        closest[chosen] = 0.0
    if return_distances:
        return indices, np.stack(seed_columns, axis=1)
    return indices
