"""Exact unlearning of K-means++ seeding (MUFC Alg. 3)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fedlib._typing import NDArrayInt, SeedLike
from fedlib._validation import check_array, check_race_keys, check_random_state, check_sample_weight
from fedlib.cluster import kmeans_plusplus_indices, row_norms_squared


@dataclass(frozen=True)
class SeedingUnlearning:
    """Outcome of :func:`unlearn_kmeans_plusplus`.

    Parameters
    ----------
    seed_indices : ndarray of int64, shape (K,)
        New seeds, as rows of the remaining data ``X' = X[keep]``, in draw order.
    keep : ndarray of bool, shape (n_samples,)
        Mask of the rows of ``X`` that remain.
    n_kept_prefix : int
        Seeds kept before the first removed one (``K`` if no seed was removed).
    reseeded : bool
        Whether any seed had to be drawn again (the "retraining" event of MUFC).
    """

    seed_indices: NDArrayInt
    keep: np.ndarray
    n_kept_prefix: int
    reseeded: bool


def unlearn_kmeans_plusplus(
    X,
    seed_indices,
    removed,
    *,
    race_keys=None,
    sample_weight=None,
    random_state: SeedLike = None,
) -> SeedingUnlearning:
    """Remove rows from a K-means++ seeding as if they had never been there (MUFC Alg. 3).

    If no removed row is a seed, the seeds stay (MUFC Alg. 3, line 2). Otherwise
    the seeds drawn before the first removed one are kept and the rest are drawn
    again by D^2 sampling on the remaining rows (lines 5-13). Every step then draws
    from the D^2 distribution of the remaining data given the prefix, so the result
    has exactly the distribution of K-means++ rerun on the remaining data
    (MUFC Lemma 5.1).

    With ``race_keys`` (the keys the seeding was drawn with, see
    :func:`fedlib.cluster.draw_race_keys`) the new seeds equal, bit for bit,
    ``kmeans_plusplus(X[keep], K, race_keys=race_keys[keep])``: unlearning is then
    checkable against retraining exactly, not only in distribution. Without keys
    the new draws come from ``random_state``.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The data the seeding was drawn from (before removal).
    seed_indices : array-like of shape (n_clusters,)
        Rows of ``X`` chosen as seeds, in draw order.
    removed : array-like of int
        Rows of ``X`` to forget; each must be a valid row, listed once.
    race_keys : array-like of shape (n_samples, n_clusters), default=None
        The exponential-race keys the seeding was drawn with, if any.
    sample_weight : array-like of shape (n_samples,), default=None
        The weights the seeding was drawn with; ones when ``None``.
    random_state : int, numpy.random.Generator or None, default=None
        Used only without ``race_keys``.

    Returns
    -------
    SeedingUnlearning
        The new seeds (rows of ``X[keep]``), ``keep``, the kept prefix and
        whether a seed was drawn again.

    Raises
    ------
    ValueError
        If ``seed_indices`` are not distinct rows of ``X``, ``removed`` holds
        an invalid or repeated row, or fewer than K rows remain.

    Notes
    -----
    Costs O(R K) to check the seeds and, on a hit, O(n K d) for the new draws;
    a single random removal hits a seed with probability K/n (MUFC Lemma F.1).
    Used in :doc:`/notebooks/mufc/unlearning`.

    References
    ----------
    C. Pan, J. Sima, S. Prakash, V. Rana, O. Milenkovic. "Machine Unlearning of
    Federated Clusters", ICLR 2023, Sec. 5 and App. E.

    Examples
    --------
    Removing a seed keeps the seeds drawn before it and redraws the rest;
    with the same race keys the result is the seeding of the remaining data.

    >>> from fedlib.cluster import draw_race_keys, kmeans_plusplus
    >>> X = np.array([[0.0], [0.1], [5.0], [5.1], [9.0], [9.1]])
    >>> keys = draw_race_keys(6, 3, random_state=0)
    >>> _, seeds = kmeans_plusplus(X, 3, race_keys=keys)
    >>> result = unlearn_kmeans_plusplus(X, seeds, [seeds[1]], race_keys=keys)
    >>> result.reseeded, result.n_kept_prefix
    (True, 1)
    >>> _, retrained = kmeans_plusplus(X[result.keep], 3, race_keys=keys[result.keep])
    >>> result.seed_indices.tolist() == retrained.tolist()
    True
    """
    X = check_array(X)
    n = X.shape[0]
    seeds = np.asarray(seed_indices, dtype=np.int64)
    k = seeds.size
    if seeds.ndim != 1 or k < 1 or seeds.min() < 0 or seeds.max() >= n or np.unique(seeds).size != k:
        raise ValueError(f"seed_indices must be {k} distinct rows of X in [0, {n}).")
    removed = np.asarray(removed, dtype=np.int64).ravel()
    if removed.size and (removed.min() < 0 or removed.max() >= n):
        bad = removed[(removed < 0) | (removed >= n)]
        raise ValueError(f"cannot remove rows {bad.tolist()}: X has rows 0..{n - 1}.")
    if np.unique(removed).size != removed.size:
        raise ValueError("removed lists a row more than once.")
    if n - removed.size < k:
        raise ValueError(f"only {n - removed.size} rows remain after removal; need >= n_clusters={k}.")
    weights = np.ones(n) if sample_weight is None else check_sample_weight(sample_weight, n)
    keys = None if race_keys is None else check_race_keys(race_keys, n, k)
    return _unlearn_seeding(X, seeds, removed, weights, keys, check_random_state(random_state))


def _unlearn_seeding(
    X: np.ndarray,
    seeds: NDArrayInt,
    removed: NDArrayInt,
    weights: np.ndarray,
    keys: np.ndarray | None,
    rng: np.random.Generator,
) -> SeedingUnlearning:
    """Kernel of :func:`unlearn_kmeans_plusplus`: prior validation is assumed.

    The check whether a seed was removed costs ``O(R K)``; only on a hit does
    the kernel touch the data (``O(n K d)`` for the new draws).
    """
    n, k = X.shape[0], seeds.size
    hit = np.flatnonzero(np.isin(seeds, removed))
    keep = np.ones(n, dtype=bool)
    keep[removed] = False
    new_position = np.cumsum(keep) - 1
    if hit.size == 0:  # MUFC Alg. 3, line 2: no seed removed, model unchanged
        return SeedingUnlearning(new_position[seeds], keep, k, reseeded=False)
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
    return SeedingUnlearning(indices, keep, i, reseeded=True)
