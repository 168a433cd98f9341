"""Exact unlearning of K-means++ seeding (MUFC Alg. 3)."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from sklearn.base import BaseEstimator

from fedlib._random import check_random_state
from fedlib._typing import NDArrayInt, SeedLike
from fedlib._validation import check_array, check_n_clusters, check_sample_weight
from fedlib.base import UnlearningMixin, UnlearningReport
from fedlib.cluster import draw_race_keys, kmeans_plusplus_indices, row_norms_squared
from fedlib.exceptions import UnlearningRequestError


@dataclass(frozen=True)
class _SeedingOutcome:
    """What :func:`_unlearn_seeding` returns: new seeds as rows of ``X[keep]``, ``keep``, the kept prefix, a hit."""

    seed_indices: NDArrayInt
    keep: np.ndarray
    n_kept_prefix: int
    reseeded: bool


class KMeansPlusPlus(UnlearningMixin, BaseEstimator):
    """K-means++ seeding that unlearns exactly (MUFC Alg. 3).

    ``fit`` draws ``n_clusters`` seeds by D² sampling (K-means++). ``unlearn``
    forgets rows as if they had never been there: if no forgotten row is a seed
    the seeds stay (Alg. 3, line 2); otherwise the seeds drawn before the first
    forgotten one are kept and the rest are drawn again by D² sampling on the
    remaining rows (lines 5-13). Every step then draws from the D² distribution
    of the remaining data given the prefix, so the result has exactly the
    distribution of K-means++ rerun on the remaining data (MUFC Lemma 5.1).

    With ``race_keys=True`` each seed is drawn by an exponential race on keys
    fixed per row and step (:func:`fedlib.cluster.draw_race_keys`), and the
    seeds after unlearning equal, bit for bit, those of
    ``kmeans_plusplus(X[remaining], K, race_keys=keys[remaining])``:
    unlearning is then checkable against retraining exactly.

    Parameters
    ----------
    n_clusters : int, default=8
        K, the number of seeds.
    race_keys : bool, default=True
        Draw by exponential races on per-row keys (checkable bit for bit), or
        by inverse-CDF sampling from ``random_state`` (exact in distribution).
    random_state : int, numpy.random.Generator or None, default=None
        Draws the keys (or the uniforms) of fitting and of every later redraw.

    Attributes
    ----------
    seed_indices_ : ndarray of int64, shape (n_clusters,)
        The seeds, as rows of the ``X`` given to ``fit``, in draw order.
    cluster_centers_ : ndarray of shape (n_clusters, n_features)
        The seeds themselves.
    n_features_in_ : int
        Features of the data given to ``fit``.
    fit_report_ : UnlearningReport
        The seeding's time (as server time: the seeding is not federated).

    Notes
    -----
    Unlearning costs O(R K) to check the seeds and, on a hit, O(n K d) for the
    new draws; a single random removal hits a seed with probability K/n (MUFC
    Lemma F.1). Each request's report has ``details["reseeded"]`` and
    ``details["n_kept_prefix"]`` (K when no seed was forgotten). MUFC's clients
    run this kernel (:class:`MUFC`). With race keys, ``fedlib.audit.check_bitwise``
    compares the seeds with K-means++ rerun on the remaining rows and keys. Used in
    :doc:`/notebooks/mufc/unlearning`.

    References
    ----------
    C. Pan, J. Sima, S. Prakash, V. Rana, O. Milenkovic. "Machine Unlearning of
    Federated Clusters", ICLR 2023, Sec. 5 and App. E.

    Examples
    --------
    Forgetting a seed keeps the seeds drawn before it and redraws the rest;
    with the same race keys the result is the seeding of the remaining data.

    >>> import numpy as np
    >>> from fedlib.cluster import draw_race_keys, kmeans_plusplus
    >>> from fedlib.unlearn import KMeansPlusPlus
    >>> X = np.array([[0.0], [0.1], [5.0], [5.1], [9.0], [9.1]])
    >>> seeding = KMeansPlusPlus(3, random_state=0).fit(X)
    >>> report = seeding.unlearn([seeding.seed_indices_[1]])
    >>> report.details["reseeded"], report.details["n_kept_prefix"]
    (True, 1)
    >>> keep = np.ones(6, dtype=bool)
    >>> keep[report.forgotten_samples] = False
    >>> keys = draw_race_keys(6, 3, random_state=0)  # the keys fit drew
    >>> _, retrained = kmeans_plusplus(X[keep], 3, race_keys=keys[keep])
    >>> np.flatnonzero(keep)[retrained].tolist() == seeding.seed_indices_.tolist()
    True
    """

    _fitted_attribute = "seed_indices_"

    unlearns = frozenset({"samples"})

    def __init__(self, n_clusters: int = 8, *, race_keys: bool = True, random_state: SeedLike = None) -> None:
        self.n_clusters = n_clusters
        self.race_keys = race_keys
        self.random_state = random_state

    def fit(self, X, y=None, sample_weight=None) -> KMeansPlusPlus:
        """Draw the seeds.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The points.
        y : None
            Ignored.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights (ones when ``None``), kept for unlearning.

        Returns
        -------
        KMeansPlusPlus
            ``self``, fitted.

        Raises
        ------
        ValueError
            If ``n_clusters`` exceeds the number of points with positive weight.
        """
        start = time.perf_counter()
        X = check_array(X)
        n = X.shape[0]
        self.n_features_in_ = X.shape[1]
        k = check_n_clusters(self.n_clusters, n)
        self._weights = check_sample_weight(sample_weight, n)
        n_positive = int(np.count_nonzero(self._weights))
        if n_positive < k:
            raise ValueError(f"only {n_positive} points have positive sample_weight; need >= n_clusters={k}.")
        self._rng = check_random_state(self.random_state)
        self._keys = draw_race_keys(n, k, random_state=self._rng) if self.race_keys else None
        self._X, self._ids = X, np.arange(n)
        self._seeds = kmeans_plusplus_indices(
            X, k, self._weights, self._rng, x_squared_norms=row_norms_squared(X), race_keys=self._keys
        )
        self._publish()
        self.fit_report_ = UnlearningReport(server_refit=True, server_seconds=time.perf_counter() - start)
        return self

    def _publish(self) -> None:
        self.seed_indices_ = self._ids[self._seeds]
        self.cluster_centers_ = self._X[self._seeds].copy()

    def _model_state(self) -> dict[str, np.ndarray]:
        return {"seed_indices": self.seed_indices_.copy(), "cluster_centers": self.cluster_centers_.copy()}

    def _retrained_state(self) -> dict[str, np.ndarray]:
        """K-means++ rerun on the rows still held with their race keys (MUFC Lemma 5.1, bit for bit)."""
        if self._keys is None:
            raise NotImplementedError(
                "KMeansPlusPlus(race_keys=False) redraws from its advancing stream: exact in distribution only, "
                "with no bitwise coupling to retraining (race_keys=True gives one)."
            )
        seeds = kmeans_plusplus_indices(
            self._X,
            self._seeds.size,
            self._weights,
            0,  # unused with race keys
            x_squared_norms=row_norms_squared(self._X),
            race_keys=self._keys,
        )
        return {"seed_indices": self._ids[seeds], "cluster_centers": self._X[seeds].copy()}

    def _held_samples(self) -> NDArrayInt:
        return self._ids

    def _held_clients(self) -> NDArrayInt:
        return np.empty(0, dtype=np.int64)

    def _unlearn(self, samples: NDArrayInt, clients: NDArrayInt) -> UnlearningReport:
        """MUFC Alg. 3 on the rows still held."""
        k = self._seeds.size
        if self._ids.size - samples.size < k:
            raise UnlearningRequestError(
                f"only {self._ids.size - samples.size} rows would remain; need >= n_clusters={k}."
            )
        start = time.perf_counter()
        rows = np.searchsorted(self._ids, samples)
        outcome = _unlearn_seeding(self._X, self._seeds, rows, self._weights, self._keys, self._rng)
        keep = outcome.keep
        self._X, self._ids, self._weights = self._X[keep], self._ids[keep], self._weights[keep]
        self._keys = None if self._keys is None else self._keys[keep]
        self._seeds = outcome.seed_indices
        self._publish()
        return UnlearningReport(
            forgotten_samples=tuple(samples.tolist()),
            server_refit=outcome.reseeded,
            server_seconds=time.perf_counter() - start,
            details={"reseeded": outcome.reseeded, "n_kept_prefix": outcome.n_kept_prefix},
        )


def _unlearn_seeding(
    X: np.ndarray,
    seeds: NDArrayInt,
    removed: NDArrayInt,
    weights: np.ndarray,
    keys: np.ndarray | None,
    rng: np.random.Generator,
) -> _SeedingOutcome:
    """MUFC Alg. 3 on a seeding of ``X`` (of :class:`KMeansPlusPlus` and MUFC's clients): inputs already checked.

    The check whether a seed was removed costs ``O(R K)``; only on a hit does
    the kernel touch the data (``O(n K d)`` for the new draws).
    """
    n, k = X.shape[0], seeds.size
    hit = np.flatnonzero(np.isin(seeds, removed))
    keep = np.ones(n, dtype=bool)
    keep[removed] = False
    new_position = np.cumsum(keep) - 1
    if hit.size == 0:  # MUFC Alg. 3, line 2: no seed removed, model unchanged
        return _SeedingOutcome(new_position[seeds], keep, k, reseeded=False)
    i = int(hit[0])  # line 5: length of the untouched prefix
    X_rest = X[keep]
    indices = kmeans_plusplus_indices(
        X_rest,
        k,
        weights[keep],
        rng,
        x_squared_norms=row_norms_squared(X_rest),
        race_keys=None if keys is None else keys[keep],
        prefix=new_position[seeds[:i]],
    )
    return _SeedingOutcome(indices, keep, i, reseeded=True)
