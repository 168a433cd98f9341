"""Lloyd's algorithm driven by point-to-cluster distances alone, as SecFC's server runs it.

SecFC's server never sees points or centres, only the decoded quantities
``d'_{i,h} = ||Σ_{i'∈S_h} x_{i'} − |S_h| x_i||² = |S_h|² ||μ_h − x_i||²``
(SecFC Alg. 1, lines 14-18). This module runs Lloyd, and the initialisation
the paper's experiments use, from an *oracle* that returns that matrix for a
clustering. Three oracles give three algorithms with one driver:

* exact integers on quantized data, in the clear (:func:`centralized_lloyd`
  with ``scale``): the reference SecFC must equal bit for bit;
* floats on the raw data (``scale=None``): the paper's "centralized Lloyd";
* LCC-coded shares decoded by the server (:class:`fedlib.cluster.SecFC`).

Initialisation (SecFC Sec. 5, "center separation", with the guide's
resolution of what it starts from): K-means++ seeds drawn by D² sampling from
seed-to-point distances (a seed is a singleton cluster, so the same oracle
serves), then ``S'_h = {i : ||x_i − c_h|| ≤ ||x_i − c_s|| / 3 for all s ≠ h}``
(the paper's "∀ s ∈ [k]" must exclude ``s = h``), compared exactly as
``9 d_{i,h} ≤ d_{i,s}``; an empty ``S'_h`` becomes ``{seed_h}``. Points in no
``S'_h`` do not contribute to the first centres.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from fedlib._typing import NDArrayInt, SeedLike
from fedlib._validation import check_array, check_n_clusters, spawn_generators
from fedlib.cluster._distance import squared_distances
from fedlib.cluster._kmeanspp import _sample_index
from fedlib.field._quantize import FieldOverflowError, quantize

#: Stream layout shared by every run: child 0 initialises, 1 draws LCC masks, 2 picks responding clients.
N_STREAMS = 3


class DistanceOracle(Protocol):
    """Returns ``d'_{i,h} = ||Σ_{i'∈S_h} x_{i'} − |S_h| x_i||²`` for a clustering ``labels`` (-1: in no cluster)."""

    n_samples: int

    def __call__(self, labels: NDArrayInt, n_clusters: int) -> np.ndarray: ...


@dataclass(frozen=True)
class LloydRun:
    """Outcome of distance-driven Lloyd (:func:`centralized_lloyd`, :class:`SecFC`)."""

    labels: NDArrayInt  #: final clustering
    n_iter: int  #: assignment rounds run after the initial clustering
    converged: bool  #: the clustering stopped changing before ``max_iter``
    seeds: NDArrayInt | None  #: K-means++ seed indices (None for other inits)
    history: list[NDArrayInt] = field(repr=False)  #: initial clustering, then the clustering after every round
    distances: np.ndarray = field(repr=False)  #: the last ``d'`` matrix (int64 when exact)
    assign_seconds: list[float] = field(repr=False, default_factory=list)  #: server's argmin time per round


def cluster_sizes(labels: NDArrayInt, n_clusters: int) -> NDArrayInt:
    """``|S_h|`` for every cluster; label -1 (in no cluster) is not counted."""
    return np.bincount(labels[labels >= 0], minlength=n_clusters).astype(np.int64)


def _onehot(labels: NDArrayInt, n_clusters: int) -> np.ndarray:
    onehot = np.zeros((n_clusters, labels.shape[0]), dtype=np.float64)
    members = np.flatnonzero(labels >= 0)
    onehot[labels[members], members] = 1.0
    return onehot


class PlainIntegerDistances:
    """Exact ``d'`` on quantized integers ``X̄ = floor(λX)``, computed in the clear (the reference for SecFC).

    Products go through float64 BLAS when every partial sum is provably below
    2**53 (then exact) and through int64 otherwise; a result that could pass
    2**62 raises :class:`fedlib.field.FieldOverflowError`.
    """

    def __init__(self, X_int: NDArrayInt) -> None:
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
        sizes = cluster_sizes(labels, n_clusters)
        onehot = _onehot(labels, n_clusters)
        T = np.rint(onehot @ self._Xf).astype(np.int64)  # |T| <= m max|x̄| < 2**53
        if self._float_exact:
            cross = np.rint(self._Xf @ T.T.astype(np.float64)).astype(np.int64)
        else:
            cross = self.X @ T.T
        t_sq = np.einsum("hj,hj->h", T, T)
        return sizes[None, :] ** 2 * self._sq[:, None] - 2 * sizes[None, :] * cross + t_sq[None, :]


class FloatDistances:
    """``d'`` in floating point on the raw data: the paper's centralized Lloyd."""

    def __init__(self, X) -> None:
        self.X = check_array(X)
        self.n_samples = self.X.shape[0]

    def __call__(self, labels: NDArrayInt, n_clusters: int) -> np.ndarray:
        sizes = cluster_sizes(labels, n_clusters)
        sums = _onehot(labels, n_clusters) @ self.X
        means = sums / np.maximum(sizes, 1)[:, None]
        return squared_distances(self.X, means) * (sizes.astype(np.float64) ** 2)[None, :]


def assign(distances: np.ndarray, sizes: NDArrayInt) -> NDArrayInt:
    """SecFC Alg. 1, lines 16-18: ``d_{i,h} = d'_{i,h} / |S_h|²``, nearest non-empty cluster, lowest index on ties."""
    with np.errstate(divide="ignore", invalid="ignore"):
        real = np.asarray(distances, dtype=np.float64) / (sizes.astype(np.float64) ** 2)[None, :]
    real[:, sizes == 0] = np.inf
    return np.argmin(real, axis=1).astype(np.int64)


def kmeans_plusplus_from_distances(
    oracle: DistanceOracle, n_clusters: int, rng: np.random.Generator
) -> tuple[NDArrayInt, np.ndarray]:
    """K-means++ seeds (Arthur and Vassilvitskii 2007) drawn from seed-to-point distances only.

    Seed ``c`` is queried as the singleton cluster ``{c}``, for which the oracle
    returns ``||x_c − x_i||²`` for every ``i``; the next seed is drawn with
    probability proportional to the distance to the closest seed so far
    (inverse CDF on one uniform per seed). Returns the seed indices and the
    ``(m, k)`` matrix of seed-to-point distances.
    """
    m = oracle.n_samples
    seeds = np.empty(n_clusters, dtype=np.int64)
    columns = []
    closest = None
    for h in range(n_clusters):
        u = rng.random()
        if closest is None or not float(np.sum(closest, dtype=np.float64)) > 0.0:
            seeds[h] = min(int(u * m), m - 1)  # first seed uniform; or every point already is a seed
        else:
            seeds[h] = int(_sample_index(np.cumsum(closest.astype(np.float64)), u))
        singleton = np.full(m, -1, dtype=np.int64)
        singleton[seeds[h]] = 0
        column = oracle(singleton, 1)[:, 0]
        columns.append(column)
        closest = column.copy() if closest is None else np.minimum(closest, column)
    return seeds, np.stack(columns, axis=1)


def separate(seed_distances: np.ndarray, seeds: NDArrayInt) -> NDArrayInt:
    """Center separation (SecFC Sec. 5): label ``h`` where ``9 d_{i,h} ≤ d_{i,s}`` for all ``s ≠ h``, else -1."""
    m, k = seed_distances.shape
    if k == 1:
        return np.zeros(m, dtype=np.int64)
    nearest = np.argmin(seed_distances, axis=1)
    two = np.partition(seed_distances, 1, axis=1)
    labels = np.where(9 * two[:, 0] <= two[:, 1], nearest, -1).astype(np.int64)
    for h in np.flatnonzero(np.bincount(labels[labels >= 0], minlength=k) == 0):
        labels[seeds[h]] = h
    return labels


def run_lloyd(
    oracle: DistanceOracle,
    n_clusters: int,
    *,
    init,
    rng: np.random.Generator,
    max_iter: int,
) -> LloydRun:
    """Lloyd from a distance oracle until the clustering stops changing (SecFC Alg. 1, lines 5-19)."""
    m = oracle.n_samples
    seeds = None
    if isinstance(init, str):
        if init == "kmeans++":
            seeds, seed_distances = kmeans_plusplus_from_distances(oracle, n_clusters, rng)
            labels = separate(seed_distances, seeds)
        elif init == "random_assignment":
            labels = rng.integers(0, n_clusters, size=m).astype(np.int64)
        else:
            raise ValueError(f"init must be 'kmeans++', 'random_assignment' or an array of labels, got {init!r}.")
    else:
        labels = np.asarray(init, dtype=np.int64)
        if labels.shape != (m,) or labels.min() < -1 or labels.max() >= n_clusters:
            raise ValueError(f"init labels must have shape ({m},) with values in -1..{n_clusters - 1}.")
    if max_iter < 1:
        raise ValueError(f"max_iter={max_iter} should be >= 1.")
    history = [labels.copy()]
    assign_seconds = []
    converged = False
    n_iter = 0
    distances = None
    while n_iter < max_iter:
        n_iter += 1
        distances = oracle(labels, n_clusters)
        start = time.perf_counter()
        new = assign(distances, cluster_sizes(labels, n_clusters))
        assign_seconds.append(time.perf_counter() - start)
        history.append(new)
        if np.array_equal(new, labels):
            converged = True
            break
        labels = new
    return LloydRun(
        labels=history[-1],
        n_iter=n_iter,
        converged=converged,
        seeds=seeds,
        history=history,
        distances=distances,
        assign_seconds=assign_seconds,
    )


def centralized_lloyd(
    X,
    n_clusters: int,
    *,
    scale: float | None = None,
    init="kmeans++",
    max_iter: int = 100,
    random_state: SeedLike = None,
) -> LloydRun:
    """Centralized Lloyd with SecFC's initialisation, on raw data or on SecFC's quantized integers.

    Parameters
    ----------
    X : array-like of shape (m, d)
    n_clusters : int
        ``k``.
    scale : float or None
        ``None``: floating-point Lloyd on ``X`` (the paper's baseline).
        ``λ``: exact integer Lloyd on ``floor(λX)``, which :class:`SecFC` with
        the same ``scale``, ``init`` and integer ``random_state`` reproduces bit
        for bit at every iteration (SecFC Theorem 1).
    init : "kmeans++", "random_assignment" or array of labels
        ``"kmeans++"``: seeds, then center separation (module docstring);
        ``"random_assignment"``: SecFC Alg. 1, line 6 taken literally.
    max_iter : int
    random_state : int, Generator or None
        Child 0 of its spawned streams initialises, as in :class:`SecFC`.
    """
    X = check_array(X)
    k = check_n_clusters(n_clusters, X.shape[0])
    oracle = FloatDistances(X) if scale is None else PlainIntegerDistances(quantize(X, scale))
    rng = spawn_generators(random_state, N_STREAMS)[0]
    return run_lloyd(oracle, k, init=init, rng=rng, max_iter=max_iter)
