"""An exact-unlearning audit: does unlearning give the same distribution as retraining from scratch?"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np
from scipy.stats import chi2_contingency

from fedlib._random import check_random_state
from fedlib._typing import NDArrayInt, SeedLike
from fedlib._validation import check_array
from fedlib.cluster import kmeans_plusplus_indices, row_norms_squared, squared_distances
from fedlib.unlearn._seeding import _unlearn_seeding

#: The unlearning rules of :func:`shortcut_unlearn_kmeans_plusplus`: MUFC Alg. 3 and two shortcuts.
STRATEGIES = ("exact", "keep_others_resample_one", "nearest_replacement")


def shortcut_unlearn_kmeans_plusplus(
    X, seed_indices, removed, *, strategy: str, random_state: SeedLike = None
) -> NDArrayInt:
    """Two tempting but *wrong* ways to unlearn a K-means++ seeding, for the audit, and the exact one.

    - ``"keep_others_resample_one"``: replace each removed seed by one D^2 draw
      given all the other seeds, keeping the seeds drawn after it. It looks local
      and cheap, but later seeds were drawn *given* the removed one, so their
      distribution still depends on it.
    - ``"nearest_replacement"``: delete without reseeding, moving each removed
      seed to its nearest remaining point.
    - ``"exact"``: MUFC Alg. 3 (the kernel of :class:`KMeansPlusPlus`).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The data the seeding was drawn from.
    seed_indices : array-like of int of shape (K,)
        Rows of ``X`` chosen as seeds, in draw order.
    removed : array-like of int
        Rows of ``X`` to forget.
    strategy : {"exact", "keep_others_resample_one", "nearest_replacement"}
        The unlearning rule.
    random_state : int, numpy.random.Generator or None, default=None
        Draws the new seeds.

    Returns
    -------
    ndarray of int64, shape (K,)
        Seed rows of the remaining data ``X[keep]``.

    Raises
    ------
    ValueError
        For an unknown ``strategy``.

    Examples
    --------
    Seeds at 0.0, 5.0 and 9.0; forgetting the point 5.0:

    >>> import numpy as np
    >>> from fedlib.unlearn import shortcut_unlearn_kmeans_plusplus
    >>> X = np.array([[0.0], [0.1], [5.0], [5.1], [9.0], [9.1]])
    >>> X_rest = np.delete(X, 2, axis=0)
    >>> moved = shortcut_unlearn_kmeans_plusplus(X, [0, 2, 4], [2], strategy="nearest_replacement")
    >>> X_rest[moved].ravel().tolist()  # the seed moves to its neighbour
    [0.0, 9.0, 5.1]
    >>> exact = shortcut_unlearn_kmeans_plusplus(X, [0, 2, 4], [2], strategy="exact", random_state=0)
    >>> X_rest[exact].ravel().tolist()  # the seeds drawn after it are drawn again
    [0.0, 9.1, 5.1]
    """
    X = check_array(X)
    rng = check_random_state(random_state)
    seeds = np.asarray(seed_indices, dtype=np.int64)
    removed = np.asarray(removed, dtype=np.int64)
    if strategy == "exact":
        return _unlearn_seeding(X, seeds, removed, np.ones(len(X)), None, rng).seed_indices
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy={strategy!r} should be one of {STRATEGIES}.")
    keep = np.ones(len(X), dtype=bool)
    keep[removed] = False
    position = np.cumsum(keep) - 1
    X_rest = X[keep]
    kept = [int(position[s]) for s in seeds if keep[s]]
    n_missing = len(seeds) - len(kept)
    if strategy == "nearest_replacement":
        for s in seeds[~keep[seeds]]:
            d2 = squared_distances(X_rest, X[s : s + 1])[:, 0]
            d2[kept] = np.inf
            kept.append(int(np.argmin(d2)))
        return np.array(kept)
    for _ in range(n_missing):
        k = len(kept) + 1
        indices = kmeans_plusplus_indices(
            X_rest, k, np.ones(len(X_rest)), rng, x_squared_norms=row_norms_squared(X_rest), prefix=np.array(kept)
        )
        kept = indices.tolist()
    return np.array(kept)


@dataclass(frozen=True)
class AuditResult:
    """Chi-square test of equal seed-set distributions, unlearned vs retrained.

    Parameters
    ----------
    strategy : str
        The unlearning rule audited.
    pvalue : float
        p-value of the chi-square test of homogeneity.
    statistic : float
        The chi-square statistic.
    n_runs : int
        Seedings per sample.
    frequencies : dict of str to dict of str to float
        For ``"unlearned"`` and ``"retrained"``: seed set (sorted rows of the
        remaining data, as a string) to its relative frequency.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.unlearn import audit_seeding_unlearning
    >>> X = np.array([[0.0], [0.05], [1.65], [2.05], [3.05], [4.9]])
    >>> result = audit_seeding_unlearning(X, 2, [0], n_runs=100, random_state=0)
    >>> result.strategy, result.n_runs, sorted(result.frequencies)
    ('exact', 100, ['retrained', 'unlearned'])
    >>> result.frequencies["unlearned"]["(2, 4)"], result.frequencies["retrained"]["(2, 4)"]
    (0.23, 0.19)
    >>> bool(result.pvalue > 0.01)
    True
    """

    strategy: str
    pvalue: float
    statistic: float
    n_runs: int
    frequencies: dict[str, dict[str, float]]


def audit_seeding_unlearning(
    X, n_clusters: int, removed, *, strategy: str = "exact", n_runs: int = 2000, random_state: SeedLike = None
) -> AuditResult:
    """Compare unlearning with retraining as distributions over seed sets.

    Each run seeds ``X`` with fresh randomness and unlearns ``removed`` with
    ``strategy``; independently, K-means++ is rerun on the remaining data. A
    chi-square test of homogeneity on the two samples of seed sets gives the
    p-value: exact unlearning should pass (large p), a shortcut should fail.
    This tests the exact-unlearning criterion of MUFC Sec. 3 (Lemma 5.1 for Alg. 3).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The data.
    n_clusters : int
        ``K``, seeds per seeding.
    removed : array-like of int
        Rows of ``X`` to forget.
    strategy : {"exact", "keep_others_resample_one", "nearest_replacement"}, default="exact"
        The unlearning rule (see :func:`shortcut_unlearn_kmeans_plusplus`).
    n_runs : int, default=2000
        Seedings per sample; the test detects smaller differences with more runs.
    random_state : int, numpy.random.Generator or None, default=None
        Pass an int for reproducible output across multiple function calls.

    Returns
    -------
    AuditResult
        The p-value, the statistic and the two frequency tables.

    Raises
    ------
    ValueError
        For an unknown ``strategy``.

    Notes
    -----
    Used in :doc:`/notebooks/mufc/unlearning`.

    Examples
    --------
    Six points where the removed point 0 has a near twin (point 1):

    >>> import numpy as np
    >>> from fedlib.unlearn import audit_seeding_unlearning
    >>> X = np.array([[0.0], [0.05], [1.65], [2.05], [3.05], [4.9]])
    >>> exact = audit_seeding_unlearning(X, 3, [0], n_runs=400, random_state=0)
    >>> moved = audit_seeding_unlearning(X, 3, [0], strategy="nearest_replacement", n_runs=400, random_state=0)
    >>> bool(exact.pvalue > 0.01), bool(moved.pvalue < 0.01)
    (True, True)
    """
    X = check_array(X)
    rng = check_random_state(random_state)
    keep = np.ones(len(X), dtype=bool)
    keep[np.asarray(removed, dtype=np.int64)] = False
    X_rest = X[keep]
    ones, ones_rest = np.ones(len(X)), np.ones(len(X_rest))
    norms, norms_rest = row_norms_squared(X), row_norms_squared(X_rest)
    unlearned, retrained = Counter(), Counter()
    for _ in range(n_runs):
        seeds = kmeans_plusplus_indices(X, n_clusters, ones, rng, x_squared_norms=norms)
        out = shortcut_unlearn_kmeans_plusplus(X, seeds, removed, strategy=strategy, random_state=rng)
        unlearned[tuple(sorted(out.tolist()))] += 1
        fresh = kmeans_plusplus_indices(X_rest, n_clusters, ones_rest, rng, x_squared_norms=norms_rest)
        retrained[tuple(sorted(fresh.tolist()))] += 1
    keys = sorted(set(unlearned) | set(retrained))
    table = np.array([[unlearned[k] for k in keys], [retrained[k] for k in keys]])
    statistic, pvalue, _, _ = chi2_contingency(table)
    freq = {
        "unlearned": {str(k): unlearned[k] / n_runs for k in keys},
        "retrained": {str(k): retrained[k] / n_runs for k in keys},
    }
    return AuditResult(strategy, float(pvalue), float(statistic), n_runs, freq)
