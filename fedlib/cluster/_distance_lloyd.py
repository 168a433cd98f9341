"""Lloyd's algorithm driven by point-to-cluster distances alone, as SecFC's server runs it.

SecFC's server never sees points or centres, only the decoded quantities
``d'_{i,h} = ||Σ_{i'∈S_h} x_{i'} − |S_h| x_i||² = |S_h|² ||μ_h − x_i||²``
(SecFC Alg. 1, lines 14-18). This module runs Lloyd, and the initialisation
the paper's experiments use, from an *oracle* that returns that matrix for a
clustering. Three oracles give three algorithms with one driver:

* exact integers on quantized data, in the clear (:func:`centralized_lloyd`
  with ``scale``): the reference SecFC must equal bit for bit;
* floats on the raw data (``scale=None``): the paper's "centralized Lloyd";
* LCC-coded shares decoded by the server (:class:`fedlib.secagg.SecFC`).

The oracle drives the one Lloyd loop of :mod:`fedlib.cluster` (same stopping
rule as on coordinates, with no centre shift to test). Initialisation (SecFC
Sec. 5, "center separation"; the paper does not say where the centres it
separates come from, and after a random assignment no point qualifies, so we
take K-means++ seeds): seeds drawn by the one K-means++ kernel from
seed-to-point distances (a seed is a singleton cluster, so the same oracle
serves), then ``S'_h = {i : ||x_i − c_h|| ≤ ||x_i − c_s|| / 3 for all s ≠ h}``
(the paper's "∀ s ∈ [k]" must exclude ``s = h``), compared exactly as
``9 d_{i,h} ≤ d_{i,s}``; an empty ``S'_h`` becomes ``{seed_h}``. Points in no
``S'_h`` do not contribute to the first centres.
"""

from __future__ import annotations

import math
import time
from typing import Protocol

import numpy as np

from fedlib._random import check_random_state, spawn_generators
from fedlib._typing import NDArrayInt, SeedLike
from fedlib._validation import check_array, check_n_clusters, check_scalar
from fedlib.cluster._distance import squared_distances
from fedlib.cluster._kmeanspp import kmeans_plusplus_indices
from fedlib.cluster._lloyd import LloydResult, lloyd_loop
from fedlib.cluster._membership import cluster_sizes, cluster_sums
from fedlib.exceptions import FieldOverflowError
from fedlib.field import to_fixed_point

__all__ = [
    "DistanceOracle",
    "FloatDistances",
    "OracleColumns",
    "PlainIntegerDistances",
    "assign_from_distances",
    "centralized_lloyd",
    "distance_lloyd",
    "separate",
]

#: Spawned streams of a run; child 0 initialises (SecFC also uses 1 for masks and 2 for responders).
N_STREAMS = 3

_INITS = ("kmeans++", "random_assignment")


class DistanceOracle(Protocol):
    """Where distance-driven Lloyd gets ``d'_{i,h} = ||Σ_{i'∈S_h} x_{i'} − |S_h| x_i||²`` (SecFC Alg. 1, line 15).

    ``oracle(labels, n_clusters)`` returns the ``(n_samples, n_clusters)``
    matrix of ``d'`` for the clustering ``labels`` (label -1: in no cluster).
    A protocol: any object with this attribute and call signature qualifies
    (:class:`PlainIntegerDistances`, :class:`FloatDistances`,
    :class:`fedlib.secagg.CodedDistances`).

    Attributes
    ----------
    n_samples : int
        Number of points, m.

    Examples
    --------
    An oracle that counts the server's queries, on top of :class:`FloatDistances`:

    >>> from fedlib.cluster import FloatDistances, distance_lloyd
    >>> class CountingOracle:
    ...     def __init__(self, X):
    ...         self.distances, self.calls = FloatDistances(X), 0
    ...         self.n_samples = self.distances.n_samples
    ...
    ...     def __call__(self, labels, n_clusters):
    ...         self.calls += 1
    ...         return self.distances(labels, n_clusters)
    >>> oracle = CountingOracle([[0.0], [1.0], [9.0], [10.0]])
    >>> result = distance_lloyd(oracle, 2, random_state=0)
    >>> result.labels.tolist(), result.converged, oracle.calls  # two seed queries, then one round
    ([1, 1, 0, 0], True, 3)
    """

    n_samples: int

    def __call__(self, labels: NDArrayInt, n_clusters: int) -> np.ndarray: ...


class PlainIntegerDistances:
    """Exact ``d'`` on quantized integers ``X̄ = floor(λX)``, computed in the clear (the reference for SecFC).

    Cluster sums are exact int64 sparse products; the cross products go
    through float64 BLAS when every partial sum is provably below 2**53 (then
    exact) and through int64 otherwise.

    Parameters
    ----------
    X_int : array-like of int of shape (m, d)
        The quantized points.

    Raises
    ------
    fedlib.exceptions.FieldOverflowError
        If ``4 m² d max|x̄|²`` reaches 2**62, so that some ``d'`` could overflow int64.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.cluster import PlainIntegerDistances
    >>> oracle = PlainIntegerDistances([[0], [2], [10]])
    >>> oracle(np.array([0, 0, 1]), 2).tolist()  # |S_0| = 2: d' = ||x_0 + x_1 − 2 x_i||²
    [[4, 100], [4, 64], [324, 0]]
    """

    def __init__(self, X_int) -> None:
        self.X = np.asarray(X_int, dtype=np.int64)
        self.n_samples = self.X.shape[0]
        self._Xf = self.X.astype(np.float64)
        self._sq = np.einsum("ij,ij->i", self.X, self.X)
        top = int(np.max(np.abs(self.X), initial=0))
        m, d = self.X.shape
        if float(m) ** 2 * d * float(top) ** 2 * 4 >= 2.0**62:
            raise FieldOverflowError(
                f"m²·d·max|x̄|² = {m}²·{d}·{top}² is too large for exact int64 distances; lower the scale λ."
            )
        self._float_exact = float(m) * top * top * d < 2.0**53

    def __call__(self, labels: NDArrayInt, n_clusters: int) -> NDArrayInt:
        """Exact ``d'`` as int64, shape ``(m, n_clusters)``, for the clustering ``labels``."""
        sizes = cluster_sizes(labels, n_clusters)
        T = cluster_sums(self.X, labels, n_clusters)  # exact: |T| <= m max|x̄| < 2**53
        if self._float_exact:
            cross = np.rint(self._Xf @ T.T.astype(np.float64)).astype(np.int64)
        else:
            cross = self.X @ T.T
        t_sq = np.einsum("hj,hj->h", T, T)
        return sizes[None, :] ** 2 * self._sq[:, None] - 2 * sizes[None, :] * cross + t_sq[None, :]


class FloatDistances:
    """``d'`` in floating point on the raw data: SecFC's centralized Lloyd baseline (SecFC Sec. 5).

    Parameters
    ----------
    X : array-like of shape (m, d)
        The points.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.cluster import FloatDistances
    >>> FloatDistances([[0.0], [2.0], [10.0]])(np.array([0, 0, 1]), 2).tolist()
    [[4.0, 100.0], [4.0, 64.0], [324.0, 0.0]]
    """

    def __init__(self, X) -> None:
        self.X = check_array(X)
        self.n_samples = self.X.shape[0]

    def __call__(self, labels: NDArrayInt, n_clusters: int) -> np.ndarray:
        """``d' = |S_h|² ||μ_h − x_i||²`` in float64, shape ``(m, n_clusters)``, for the clustering ``labels``."""
        sizes = cluster_sizes(labels, n_clusters)
        sums = cluster_sums(self.X, labels, n_clusters)
        means = sums / np.maximum(sizes, 1)[:, None]
        return squared_distances(self.X, means) * (sizes.astype(np.float64) ** 2)[None, :]


class OracleColumns:
    """:class:`fedlib.cluster.DistanceColumns` from a distance oracle: seed ``c`` is the singleton cluster ``{c}``.

    For ``S = {c}`` the oracle's ``d'_{i,0} = ||x_c − x_i||²``, so K-means++
    can be run by the same kernel as on coordinates, from distances alone.

    Parameters
    ----------
    oracle : DistanceOracle
        Where the distances come from (one oracle call per column).

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.cluster import FloatDistances, OracleColumns
    >>> columns = OracleColumns(FloatDistances([[0.0], [2.0], [10.0]]))
    >>> columns(np.array([2])).ravel().tolist()  # ||x_i − x_2||²
    [100.0, 64.0, 0.0]
    """

    def __init__(self, oracle: DistanceOracle) -> None:
        self.oracle = oracle
        self.n_samples = oracle.n_samples

    def __call__(self, indices: NDArrayInt) -> np.ndarray:
        """Squared distances from every point to the points ``indices``, shape ``(m, len(indices))``."""
        out = []
        for c in np.asarray(indices, dtype=np.int64):
            singleton = np.full(self.n_samples, -1, dtype=np.int64)
            singleton[c] = 0
            out.append(self.oracle(singleton, 1)[:, 0])
        return np.stack(out, axis=1)


def assign_from_distances(distances: np.ndarray, sizes: NDArrayInt) -> NDArrayInt:
    """Assign each point to its nearest cluster from ``d'`` (SecFC Alg. 1, lines 16-18), exactly for integers.

    The nearest cluster minimises ``d_{i,h} = d'_{i,h} / |S_h|²``. For integer
    ``d'`` (the quantized reference and SecFC's decoded values) the ratios are
    compared exactly, ``d'_{i,h} |S_g|² < d'_{i,g} |S_h|²`` in integers, so
    that two clusters whose ratios differ by less than float64 resolves
    (``10**9 + 10**-8`` against ``10**9``) are still told apart: SecFC then
    equals Lloyd on the quantized data exactly, not up to float rounding. The
    comparison is a running argmin over the clusters (``k`` vectorised passes
    over the points): float64 products decide every pair they provably can,
    and Python integers decide the rest (products can pass 2**63). For float
    ``d'`` (Lloyd on raw data) the ratios are compared in float64. Empty
    clusters are never chosen; ties go to the lowest index.

    Parameters
    ----------
    distances : ndarray of shape (m, n_clusters)
        ``d'_{i,h}``: integers (int64 or Python ints in an object array),
        compared exactly, or floats.
    sizes : ndarray of int of shape (n_clusters,)
        ``|S_h|``; an empty cluster (size 0) is never chosen.

    Returns
    -------
    ndarray of int64, shape (m,)
        The new cluster of each point: the non-empty cluster with the least
        ``d'_{i,h} / |S_h|²``, the lowest such index on ties (0 when every
        cluster is empty).

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.cluster import assign_from_distances
    >>> assign_from_distances(np.array([[4, 9], [36, 1]]), np.array([2, 1])).tolist()
    [0, 1]
    >>> # 10**9 + 10**-8 against 10**9: equal in float64, told apart exactly
    >>> assign_from_distances(np.array([[10**17 + 1, 10**9]]), np.array([10**4, 1])).tolist()
    [1]
    """
    distances = np.asarray(distances)
    sizes = np.asarray(sizes, dtype=np.int64)
    m = distances.shape[0]
    alive = np.flatnonzero(sizes > 0)
    if np.issubdtype(distances.dtype, np.floating) or alive.size == 0:
        with np.errstate(divide="ignore", invalid="ignore"):
            real = distances.astype(np.float64) / (sizes.astype(np.float64) ** 2)[None, :]
        real[:, sizes == 0] = np.inf
        return np.argmin(real, axis=1).astype(np.int64)
    exact = distances.dtype == object
    square = [int(s) ** 2 for s in sizes.tolist()]  # Python ints: |S_h|² can pass 2**53
    best = np.full(m, alive[0], dtype=np.int64)
    best_d = distances[:, alive[0]].copy()
    best_sq = np.full(m, square[alive[0]], dtype=object if exact else np.float64)
    best_sq_int = np.full(m, square[alive[0]], dtype=object)
    for g in alive[1:].tolist():
        column = distances[:, g]
        if exact:
            closer = np.asarray(column * best_sq_int < best_d * square[g], dtype=bool)
        else:
            closer = _cross_less(column, square[g], best_d, best_sq, best_sq_int)
        best[closer] = g
        best_d[closer] = column[closer]
        best_sq[closer] = square[g]
        best_sq_int[closer] = square[g]
    return best


#: Relative error bound of a float64 product of two integers, each rounded to float64 first (3 roundings, 2**-53
#: each), doubled for margin: a float difference larger than this fraction of the products decides the order.
_PRODUCT_RTOL = 2.0**-50


def _cross_less(a: NDArrayInt, a_sq: int, b: NDArrayInt, b_sq: np.ndarray, b_sq_int: np.ndarray) -> np.ndarray:
    """``a / a_sq < b / b_sq`` elementwise, exactly, as ``a · b_sq < b · a_sq`` (all ``b_sq, a_sq > 0``).

    float64 products decide every entry whose two products differ by more than
    their rounding error; Python integers decide the others (near ties).
    """
    left = a.astype(np.float64) * b_sq
    right = b.astype(np.float64) * float(a_sq)
    gap = left - right
    unsure = np.abs(gap) <= _PRODUCT_RTOL * np.maximum(np.abs(left), np.abs(right))
    closer = gap < 0
    idx = np.flatnonzero(unsure)
    if idx.size:  # object arrays of Python ints: exact products of any size
        closer[idx] = np.asarray(a[idx].astype(object) * b_sq_int[idx] < b[idx].astype(object) * a_sq, dtype=bool)
    return closer


def separate(seed_distances: np.ndarray, seeds: NDArrayInt) -> NDArrayInt:
    """Center separation (SecFC Sec. 5): label ``h`` where ``9 d_{i,h} ≤ d_{i,s}`` for all ``s ≠ h``, else -1.

    ``||x_i − c_h|| ≤ ||x_i − c_s|| / 3`` is compared exactly on squared
    distances. An empty ``S'_h`` becomes ``{seed_h}``.

    Parameters
    ----------
    seed_distances : ndarray of shape (m, k)
        ``d_{i,h} = ||x_i − c_h||²`` from every point to every seed.
    seeds : ndarray of int of shape (k,)
        Row index of each seed.

    Returns
    -------
    ndarray of int64, shape (m,)
        ``h`` for the points of ``S'_h``, -1 for points in no ``S'_h``.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.cluster import separate
    >>> separate(np.array([[0, 100], [50, 60], [100, 0]]), np.array([0, 2])).tolist()
    [0, -1, 1]
    """
    m, k = seed_distances.shape
    if k == 1:
        return np.zeros(m, dtype=np.int64)
    nearest = np.argmin(seed_distances, axis=1)
    two = np.partition(seed_distances, 1, axis=1)
    labels = np.where(9 * two[:, 0] <= two[:, 1], nearest, -1).astype(np.int64)
    for h in np.flatnonzero(np.bincount(labels[labels >= 0], minlength=k) == 0):
        labels[seeds[h]] = h
    return labels


class _DistanceStep:
    """Lloyd from a distance oracle: the centres are the means of the current clustering, never formed."""

    def __init__(self, oracle: DistanceOracle, labels: NDArrayInt, n_clusters: int) -> None:
        self.oracle, self.labels, self.k = oracle, labels, n_clusters
        self.distances: np.ndarray | None = None
        self.assign_seconds: list[float] = []

    def assign(self) -> NDArrayInt:
        self.distances = self.oracle(self.labels, self.k)
        start = time.perf_counter()
        new = assign_from_distances(self.distances, cluster_sizes(self.labels, self.k))
        self.assign_seconds.append(time.perf_counter() - start)
        return new

    def update(self, labels: NDArrayInt) -> float:
        self.labels = labels
        return math.inf  # no centres, no shift: stop on unchanged labels only


def distance_lloyd(
    oracle: DistanceOracle,
    n_clusters: int,
    *,
    init="kmeans++",
    max_iter: int = 100,
    random_state: SeedLike = None,
) -> LloydResult:
    """Lloyd's algorithm from point-to-cluster distances alone (SecFC Alg. 1, lines 5-19).

    Parameters
    ----------
    oracle : DistanceOracle
        Returns ``d'`` for a clustering; one call per round.
    n_clusters : int
        ``k``.
    init : {"kmeans++", "random_assignment"} or array-like of int, default="kmeans++"
        ``"kmeans++"``: K-means++ seeds drawn from seed distances (the one
        K-means++ kernel, on :class:`OracleColumns`, one oracle call per
        seed), then center separation (:func:`separate`);
        ``"random_assignment"``: SecFC Alg. 1, line 6 taken literally; an
        array of shape (m,): the initial clustering (-1: in no cluster).
    max_iter : int, default=100
        Most assignment rounds.
    random_state : int, numpy.random.Generator or None, default=None
        Draws the initialisation (used as given: no streams are spawned here).

    Returns
    -------
    LloydResult
        ``labels``, ``n_iter``, ``converged``, ``seeds``, ``history`` (initial
        clustering first), the last ``distances`` and the server's
        ``assign_seconds``; no centres.

    Raises
    ------
    ValueError
        For an unknown ``init`` string, or initial labels of the wrong shape
        or outside ``-1..k-1``.

    Notes
    -----
    SecFC's Sec. 5 applies center separation to a given clustering but does
    not say where the centres it separates come from; after a random
    assignment no point qualifies, hence K-means++ seeds by default.
    Used in :doc:`/notebooks/secfc/secure_clustering`.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.cluster import FloatDistances, distance_lloyd
    >>> X = np.array([[0.0], [1.0], [10.0], [11.0]])
    >>> run = distance_lloyd(FloatDistances(X), 2, init=[0, 0, 0, 1])
    >>> run.labels.tolist(), run.n_iter, run.converged
    ([0, 0, 1, 1], 2, True)
    """
    m = oracle.n_samples
    k = check_scalar(n_clusters, "n_clusters", "int", min_val=1)
    rng = check_random_state(random_state)
    seeds = None
    if isinstance(init, str):
        if init not in _INITS:
            raise ValueError(f"init must be 'kmeans++', 'random_assignment' or an array of labels, got {init!r}.")
        if init == "kmeans++":
            seeds, seed_distances = kmeans_plusplus_indices(
                OracleColumns(oracle), k, np.ones(m), rng, return_distances=True
            )
            labels = separate(seed_distances, seeds)
        else:
            labels = rng.integers(0, k, size=m).astype(np.int64)
    else:
        labels = np.asarray(init, dtype=np.int64)
        if labels.shape != (m,) or labels.min() < -1 or labels.max() >= k:
            raise ValueError(f"init labels must have shape ({m},) with values in -1..{k - 1}.")
    max_iter = check_scalar(max_iter, "max_iter", "int", min_val=1)
    step = _DistanceStep(oracle, labels, k)
    n_iter, converged, history = lloyd_loop(step, labels.copy(), max_iter=max_iter, tol=0.0, keep_history=True)
    return LloydResult(
        labels=history[-1],
        n_iter=n_iter,
        converged=converged,
        seeds=seeds,
        history=history,
        distances=step.distances,
        assign_seconds=step.assign_seconds,
    )


def centralized_lloyd(
    X,
    n_clusters: int,
    *,
    scale: float | None = None,
    init="kmeans++",
    max_iter: int = 100,
    random_state: SeedLike = None,
) -> LloydResult:
    """Centralized Lloyd with SecFC's initialisation, on raw data or on SecFC's quantized integers.

    Parameters
    ----------
    X : array-like of shape (m, d)
        The points.
    n_clusters : int
        ``k``.
    scale : float or None, default=None
        ``None``: floating-point Lloyd on ``X`` (SecFC's baseline).
        ``λ``: exact integer Lloyd on ``floor(λX)``, which
        :class:`fedlib.secagg.SecFC` with the same ``scale``, ``init`` and
        ``random_state`` reproduces bit for bit at every iteration (SecFC Theorem 1).
    init : {"kmeans++", "random_assignment"} or array-like of int, default="kmeans++"
        See :func:`distance_lloyd`.
    max_iter : int, default=100
        Most assignment rounds.
    random_state : int, numpy.random.Generator or None, default=None
        Child 0 of its spawned streams initialises, as in SecFC.

    Returns
    -------
    LloydResult
        As :func:`distance_lloyd`: labels, history and the last ``d'``, no centres.

    Raises
    ------
    fedlib.exceptions.FieldOverflowError
        If ``scale`` makes ``floor(λX)`` or the exact ``d'`` too large for int64.

    Notes
    -----
    Used in :doc:`/notebooks/secfc/secure_clustering`.

    Examples
    --------
    >>> from fedlib.cluster import centralized_lloyd
    >>> import numpy as np
    >>> X = np.array([[0.0, 0.0], [0.0, 1.0], [9.0, 9.0], [9.0, 10.0]])
    >>> run = centralized_lloyd(X, 2, scale=10.0, random_state=0)
    >>> sorted(np.bincount(run.labels).tolist()), run.converged
    ([2, 2], True)
    """
    X = check_array(X)
    k = check_n_clusters(n_clusters, X.shape[0])
    if scale is None:
        oracle = FloatDistances(X)
    else:
        scale = check_scalar(scale, "scale", "real", min_val=0.0, include_min=False)
        oracle = PlainIntegerDistances(to_fixed_point(X, scale))
    rng = spawn_generators(random_state, N_STREAMS)[0]
    return distance_lloyd(oracle, k, init=init, max_iter=max_iter, random_state=rng)
