"""Weighted Lloyd iterations and a K-means estimator built on fedlib's K-means++."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin, TransformerMixin
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from fedlib._random import check_random_state
from fedlib._typing import NDArrayFloat, NDArrayInt, SeedLike
from fedlib._validation import check_array, check_n_clusters, check_sample_weight, check_scalar
from fedlib.cluster._distance import assign_to_nearest, row_norms_squared, squared_distances
from fedlib.cluster._kmeanspp import kmeans_plusplus_indices
from fedlib.cluster._membership import cluster_sums


@dataclass(frozen=True)
class LloydResult:
    """Outcome of Lloyd's algorithm, driven by coordinates (:func:`lloyd`) or by distances (:func:`distance_lloyd`).

    Fields that one driver cannot know are ``None``: a distance-driven run never
    sees centres, so it has no ``centers`` and no ``inertia``.

    Parameters
    ----------
    labels : ndarray of int64, shape (n_samples,)
        Final clustering.
    n_iter : int
        Lloyd iterations run (assignment rounds).
    converged : bool
        Whether the labels stopped changing (or the centre shift fell to
        ``tol``) before ``max_iter``.
    centers : ndarray of shape (n_clusters, n_features) or None, default=None
        Final centres; coordinate-driven runs only.
    inertia : float or None, default=None
        Weighted K-means objective at the final centres; coordinate-driven runs only.
    seeds : ndarray of int64 or None, default=None
        K-means++ seed indices of the initialisation, when it drew any.
    history : list of ndarray, default=[]
        Clusterings from first to last, when the driver keeps them.
    distances : ndarray of shape (n_samples, n_clusters) or None, default=None
        The last point-to-cluster matrix the labels were assigned from.
    assign_seconds : list of float, default=[]
        Time of the argmin in each round.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.cluster import lloyd
    >>> result = lloyd(np.array([[0.0], [1.0], [9.0], [10.0]]), np.array([[0.0], [10.0]]))
    >>> result.labels.tolist(), result.centers.ravel().tolist(), result.inertia, result.converged
    ([0, 0, 1, 1], [0.5, 9.5], 1.0, True)
    """

    labels: NDArrayInt
    n_iter: int
    converged: bool
    centers: NDArrayFloat | None = None
    inertia: float | None = None
    seeds: NDArrayInt | None = None
    history: list[NDArrayInt] = field(default_factory=list, repr=False)
    distances: np.ndarray | None = field(default=None, repr=False)
    assign_seconds: list[float] = field(default_factory=list, repr=False)


class LloydStep(Protocol):
    """One way of running Lloyd: where the distances come from and how the centres move.

    ``assign()`` returns the nearest-cluster labels under the current centres;
    ``update(labels)`` moves the centres to the means of ``labels`` and returns
    the total squared centre shift (``inf`` when the centres are not known).
    """

    def assign(self) -> NDArrayInt: ...

    def update(self, labels: NDArrayInt) -> float: ...


def lloyd_loop(
    step: LloydStep,
    labels_old: NDArrayInt | None,
    *,
    max_iter: int,
    tol: float,
    keep_history: bool,
) -> tuple[int, bool, list[NDArrayInt]]:
    """The one Lloyd loop of fedlib, with scikit-learn's stopping rule.

    Each iteration assigns, then updates. It stops when the labels equal the
    previous iteration's (``labels_old`` on the first: the clustering the
    centres came from, or ``None`` when they came from elsewhere), or when the
    centre shift is at most ``tol``, or after ``max_iter`` iterations. Returns
    ``(n_iter, converged, history)``; ``history`` holds ``labels_old`` (if
    given) and the labels of every iteration when ``keep_history`` is set.
    """
    history = [labels_old] if keep_history and labels_old is not None else []
    n_iter = 0
    while n_iter < max_iter:
        n_iter += 1
        labels = step.assign()
        shift = step.update(labels)
        if keep_history:
            history.append(labels)
        if labels_old is not None and np.array_equal(labels, labels_old):
            return n_iter, True, history
        labels_old = labels
        if shift <= tol:
            return n_iter, True, history
    return n_iter, False, history


def _weighted_means(X: NDArrayFloat, labels: NDArrayInt, weights: NDArrayFloat, previous: NDArrayFloat) -> NDArrayFloat:
    """Weighted mean of each cluster; an empty cluster keeps its previous centre."""
    k = previous.shape[0]
    mass = np.bincount(labels, weights=weights, minlength=k)
    sums = cluster_sums(X, labels, k, weights=weights)
    centers = previous.copy()
    nonempty = mass > 0
    centers[nonempty] = sums[nonempty] / mass[nonempty, None]
    return centers


class _CoordinateStep:
    """Lloyd on coordinates: nearest centre by one BLAS product, weighted means by one sparse product."""

    def __init__(self, X, centers, weights, x_squared_norms) -> None:
        self.X, self.centers, self.weights, self.norms = X, centers, weights, x_squared_norms

    def assign(self) -> NDArrayInt:
        return assign_to_nearest(self.X, self.centers, x_squared_norms=self.norms)[0]

    def update(self, labels: NDArrayInt) -> float:
        new_centers = _weighted_means(self.X, labels, self.weights, self.centers)
        shift = float(np.sum((new_centers - self.centers) ** 2))
        self.centers = new_centers
        return shift


def lloyd(
    X,
    init,
    *,
    sample_weight=None,
    max_iter: int = 300,
    tol: float = 1e-4,
) -> LloydResult:
    """Run weighted Lloyd iterations from the centres ``init``.

    Each iteration assigns every point to its nearest centre and moves each
    centre to the weighted mean of its points (Lloyd 1982). Iteration stops when
    no label changes, or when the total squared centre shift is at most
    ``tol * mean(var(X, axis=0))``, the same rule as scikit-learn's ``KMeans``,
    so that both give identical results from the same ``init``.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The points.
    init : array-like of shape (n_clusters, n_features)
        Initial centres, e.g. from :func:`kmeans_plusplus`.
    sample_weight : array-like of shape (n_samples,), default=None
        Weighted means; MUFC's server clusters weighted bin points this way.
    max_iter : int, default=300
        Most iterations to run.
    tol : float, default=1e-4
        Relative tolerance on the centre shift (0: stop only when labels repeat).

    Returns
    -------
    LloydResult
        ``centers``, ``labels`` (nearest final centre), ``inertia``, ``n_iter``, ``converged``.

    Raises
    ------
    ValueError
        If ``init`` and ``X`` have different numbers of features.

    Notes
    -----
    Cost O(n_samples * n_clusters * n_features) per iteration. An empty cluster
    keeps its previous centre (scikit-learn instead relocates it to a far point;
    the two differ only when a cluster empties). Used in
    :doc:`/notebooks/foundations/kmeans`.

    References
    ----------
    S. P. Lloyd. "Least squares quantization in PCM", IEEE Transactions on
    Information Theory 28(2), 1982.

    Examples
    --------
    >>> from fedlib.cluster import lloyd
    >>> import numpy as np
    >>> X = np.array([[0.0], [1.0], [10.0], [11.0]])
    >>> lloyd(X, [[0.0], [1.0]]).centers.ravel().tolist()
    [0.5, 10.5]
    """
    X = check_array(X)
    centers = check_array(init, name="init").copy()
    if centers.shape[1] != X.shape[1]:
        raise ValueError(f"init has n_features={centers.shape[1]}, X has n_features={X.shape[1]}.")
    weights = check_sample_weight(sample_weight, X.shape[0])
    max_iter = check_scalar(max_iter, "max_iter", "int", min_val=1)
    tol = check_scalar(tol, "tol", "real", min_val=0.0)
    return _lloyd(X, centers, weights, max_iter=max_iter, tol=tol)


def _lloyd(
    X: NDArrayFloat,
    centers: NDArrayFloat,
    weights: NDArrayFloat,
    *,
    max_iter: int,
    tol: float,
    x_squared_norms: NDArrayFloat | None = None,
) -> LloydResult:
    """Kernel of :func:`lloyd` (coordinates): the one loop with a coordinate step. Prior validation is assumed."""
    if x_squared_norms is None:
        x_squared_norms = row_norms_squared(X)
    tol_scaled = float(tol * np.mean(np.var(X, axis=0))) if tol > 0 else 0.0
    step = _CoordinateStep(X, centers, weights, x_squared_norms)
    n_iter, converged, _ = lloyd_loop(step, None, max_iter=max_iter, tol=tol_scaled, keep_history=False)
    labels, mind = assign_to_nearest(X, step.centers, x_squared_norms=x_squared_norms)
    return LloydResult(
        labels=labels,
        n_iter=n_iter,
        converged=converged,
        centers=step.centers,
        inertia=float(weights @ mind),
    )


class KMeans(ClusterMixin, TransformerMixin, BaseEstimator):
    """K-means: K-means++ seeding then Lloyd, best of ``n_init`` runs; a scikit-learn estimator.

    Each run seeds by plain D^2 sampling (:func:`kmeans_plusplus`) and then runs
    weighted Lloyd iterations (:func:`lloyd`); the run with the lowest weighted
    objective is kept. It works in scikit-learn's pipelines, grid searches and
    :func:`sklearn.base.clone`, and passes ``check_estimator`` but for one check,
    as scikit-learn's own ``KMeans`` does: integer weights act like repeated
    rows, but the seeding follows row order, so after a shuffle the same
    clusters can come out numbered differently.

    Parameters
    ----------
    n_clusters : int, default=8
        K in all four papers; at most the number of samples.
    n_init : int, default=10
        Independent seedings; the run with the lowest objective is kept (the
        first such run on ties). MUFC approximates the optimal loss phi_c^*
        by the best of several runs (MUFC footnote 1).
    max_iter : int, default=300
        Most Lloyd iterations per run.
    tol : float, default=1e-4
        Relative tolerance on the centre shift, as in :func:`lloyd`.
    random_state : int, numpy.random.Generator, numpy.random.SeedSequence or None, default=None
        Pass an int for reproducible output across multiple function calls.
        A Generator is used as is, so each ``fit`` advances it.

    Attributes
    ----------
    cluster_centers_ : ndarray of shape (n_clusters, n_features)
        Centres of the kept run.
    labels_ : ndarray of int64, shape (n_samples,)
        Nearest final centre of each point.
    inertia_ : float
        Weighted K-means objective of the kept run.
    n_iter_ : int
        Lloyd iterations of the kept run.
    seed_indices_ : ndarray of int64, shape (n_clusters,)
        Rows of ``X`` chosen by the kept run's K-means++ seeding, in order.
    n_features_in_ : int
        Number of features seen during :meth:`fit`.
    feature_names_in_ : ndarray of str, shape (``n_features_in_``,)
        Names of the features seen during :meth:`fit`; set only when ``X``
        has feature names that are all strings (a pandas DataFrame).

    See Also
    --------
    lloyd : One run of Lloyd iterations from given centres.
    kmeans_plusplus : The seeding of each run.

    Notes
    -----
    The runs draw their seedings one after the other from one generator, so
    run ``r`` depends on ``random_state`` and on ``r``. Input is converted to
    C-contiguous float64 (float32 and integer data included), so the result
    does not depend on the dtype or memory layout of ``X``. Sparse input is
    refused. Unlike scikit-learn's ``KMeans``, an empty cluster keeps its
    previous centre (see :func:`lloyd`). Used in
    :doc:`/notebooks/foundations/kmeans`.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.cluster import KMeans
    >>> X = np.array([[0.0], [0.2], [5.0], [5.2]])
    >>> km = KMeans(2, n_init=3, random_state=0).fit(X)
    >>> sorted(km.cluster_centers_.ravel().round(2).tolist()), round(km.inertia_, 2)
    ([0.1, 5.1], 0.04)
    >>> bool(km.predict([[0.3]])[0] == km.labels_[0])
    True

    ``transform`` gives the distance to each centre, ``score`` the negative
    objective:

    >>> km.cluster_centers_.ravel().tolist(), km.transform([[0.1]]).round(2).tolist()
    ([5.1, 0.1], [[5.0, 0.0]])
    >>> bool(km.score(X) == -km.inertia_)
    True
    """

    def __init__(
        self,
        n_clusters: int = 8,
        *,
        n_init: int = 10,
        max_iter: int = 300,
        tol: float = 1e-4,
        random_state: SeedLike = None,
    ) -> None:
        self.n_clusters = n_clusters
        self.n_init = n_init
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state

    def fit(self, X, y=None, sample_weight=None) -> KMeans:
        """Cluster ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The points (dense; converted to float64).
        y : None
            Ignored; present for API consistency with scikit-learn.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights, not all zero (ones when ``None``). A weight
            acts on the seeding and on the means like that many copies of the point.

        Returns
        -------
        KMeans
            ``self``, fitted.

        Raises
        ------
        TypeError
            If ``X`` is sparse, or ``n_clusters``, ``n_init`` or ``max_iter`` is
            not an int, or ``tol`` not a real number.
        ValueError
            If ``X`` is empty, not 2-D, complex or not finite, if ``n_clusters``
            exceeds the number of samples, if ``sample_weight`` has the wrong
            shape, a negative or non-finite entry, or only zeros, or if a
            parameter is out of range.
        """
        X = validate_data(self, X, dtype=np.float64, order="C")
        k = check_n_clusters(self.n_clusters, X.shape[0])
        weights = _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)
        n_init = check_scalar(self.n_init, "n_init", "int", min_val=1)
        max_iter = check_scalar(self.max_iter, "max_iter", "int", min_val=1)
        tol = check_scalar(self.tol, "tol", "real", min_val=0.0)
        rng = check_random_state(self.random_state)
        norms = row_norms_squared(X)
        runs = []
        for _ in range(n_init):
            seeds = kmeans_plusplus_indices(X, k, weights, rng, x_squared_norms=norms)
            result = _lloyd(X, X[seeds].copy(), weights, max_iter=max_iter, tol=tol, x_squared_norms=norms)
            runs.append((result.inertia, len(runs), result, seeds))
        _, _, best, best_seeds = min(runs, key=lambda run: run[:2])
        self.cluster_centers_ = best.centers
        self.labels_ = best.labels
        self.inertia_ = best.inertia
        self.n_iter_ = best.n_iter
        self.seed_indices_ = best_seeds
        return self

    def _check_test_data(self, X) -> NDArrayFloat:
        """``X`` validated against the fitted data: fitted model, dense, same features, as C-contiguous float64."""
        check_is_fitted(self)
        return validate_data(self, X, dtype=np.float64, order="C", reset=False)

    def predict(self, X) -> NDArrayInt:
        """Index of the nearest learned centre for each row of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Points to assign.

        Returns
        -------
        ndarray of int64, shape (n_samples,)
            Index of the nearest centre; ties go to the lowest index.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            Before :meth:`fit`.
        ValueError
            If ``X`` has a different number of features (or feature names) than the fitted data.
        """
        X = self._check_test_data(X)
        return assign_to_nearest(X, self.cluster_centers_)[0]

    def transform(self, X) -> NDArrayFloat:
        """Euclidean distance from each row of ``X`` to each learned centre.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Points to transform.

        Returns
        -------
        ndarray of float64, shape (n_samples, n_clusters)
            ``||x_i - c_j||`` (not squared), in the order of ``cluster_centers_``.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            Before :meth:`fit`.
        ValueError
            If ``X`` has a different number of features (or feature names) than the fitted data.
        """
        X = self._check_test_data(X)
        return np.sqrt(squared_distances(X, self.cluster_centers_))

    def score(self, X, y=None, sample_weight=None) -> float:
        """Opposite of the weighted K-means objective of ``X`` at the learned centres (higher is better).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Points to score.
        y : None
            Ignored; present for API consistency with scikit-learn.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights, not all zero (ones when ``None``).

        Returns
        -------
        float
            ``-sum_i w_i min_j ||x_i - c_j||^2``; equals ``-inertia_`` on the
            training data and weights.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            Before :meth:`fit`.
        ValueError
            If ``X`` has a different number of features than the fitted data,
            or ``sample_weight`` is invalid.
        """
        X = self._check_test_data(X)
        weights = _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)
        return -float(weights @ assign_to_nearest(X, self.cluster_centers_)[1])
