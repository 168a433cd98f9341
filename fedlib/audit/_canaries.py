"""Canaries: planted examples that a model can fit only by memorising them, so that forgetting them can be tested.

A membership test on ordinary examples is nearly blind: a model that generalises scores a typical example
the same whether or not it trained on it, so the attack sits near AUC 0.5 before forgetting as after, and
shows nothing. Canaries are examples the rest of the data cannot explain (Carlini et al., *The Secret
Sharer*, USENIX Security 2019; the mislabelled canaries of Carlini et al., S&P 2022): a classifier fits a
mislabelled image only by memorising it, and a K-means centre sits on a small far-out group only if the
group was in the data. The forgotten client holds them; an audit asks whether the model still shows them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fedlib._random import check_random_state
from fedlib._typing import SeedLike
from fedlib._validation import check_array, check_scalar


@dataclass(frozen=True)
class Canaries:
    """Candidate canaries: their points (one or more per canary), labels where they have one, and their ids.

    Parameters
    ----------
    X : ndarray, shape (n_points, ...)
        The canaries' points, canary by canary.
    y : ndarray of int64 or None, shape (n_points,)
        The planted (wrong) labels of classifier canaries; ``None`` for clustering canaries.
    group : ndarray of int64, shape (n_points,)
        The canary each point belongs to (``0 .. n_canaries − 1``).
    true_y : ndarray of int64 or None, shape (n_canaries,)
        The correct label of each classifier canary.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.audit import mislabeled_canaries
    >>> X, y = np.arange(20.0).reshape(10, 2), np.arange(10) % 3
    >>> canaries = mislabeled_canaries(X, y, 3, repeats=2, random_state=0)
    >>> canaries.n_canaries, canaries.group.tolist()
    (3, [0, 0, 1, 1, 2, 2])
    >>> canaries.y.tolist(), canaries.true_y.tolist()  # the planted labels, and the true ones
    ([0, 0, 1, 1, 1, 1], [2, 0, 0])
    >>> canaries.X[canaries.points([2])].tolist()
    [[12.0, 13.0], [12.0, 13.0]]
    """

    X: np.ndarray
    y: np.ndarray | None
    group: np.ndarray
    true_y: np.ndarray | None = None

    @property
    def n_canaries(self) -> int:
        """Canaries (not points)."""
        return int(self.group.max()) + 1 if self.group.size else 0

    def points(self, which) -> np.ndarray:
        """Rows of :attr:`X` (and :attr:`y`) that belong to the chosen canaries.

        Parameters
        ----------
        which : array-like of bool of shape (n_canaries,), or of int
            A mask over the canaries, or their ids.

        Returns
        -------
        ndarray of int64
            Row indices into :attr:`X`, in canary order.

        Examples
        --------
        >>> import numpy as np
        >>> from fedlib.audit import Canaries
        >>> c = Canaries(np.zeros((6, 1)), None, np.array([0, 0, 1, 1, 2, 2]))
        >>> c.points([True, False, True]).tolist(), c.points([1]).tolist()
        ([0, 1, 4, 5], [2, 3])
        """
        which = np.asarray(which)
        chosen = np.zeros(self.n_canaries, dtype=bool)
        if which.dtype == bool:
            if which.shape != (self.n_canaries,):
                raise ValueError(f"a mask over canaries needs {self.n_canaries} entries, got {which.shape}.")
            chosen = which
        else:
            chosen[which.astype(np.int64)] = True
        return np.flatnonzero(chosen[self.group])


def mislabeled_canaries(
    X, y, n_canaries: int, *, n_classes: int | None = None, repeats: int = 1, random_state: SeedLike = None
) -> Canaries:
    """Classifier canaries: real examples given a wrong label drawn uniformly from the other classes.

    A model predicts the planted label of such an example only if it memorised that example (Carlini et al.,
    S&P 2022, Sec. VI: mislabelled examples are the hardest to infer by generalisation, the easiest by
    memorisation). Draw them from examples no client holds (e.g. a held-out split), so that a non-member
    canary is truly unseen.

    Parameters
    ----------
    X : ndarray, shape (n_samples, ...)
        A pool of real examples (images keep their shape).
    y : array-like of int, shape (n_samples,)
        Their labels.
    n_canaries : int
        Canaries to draw, without replacement, at most ``n_samples``.
    n_classes : int, optional
        Classes; default ``max(y) + 1``; at least 2.
    repeats : int, default=1
        Copies of each canary in :attr:`Canaries.X` (a client holding a canary several times).
    random_state : int, numpy.random.Generator, numpy.random.SeedSequence or None, default=None
        Draws the examples and the wrong labels.

    Returns
    -------
    Canaries
        ``n_canaries × repeats`` points with their planted labels.

    Raises
    ------
    ValueError
        For ``n_canaries`` larger than the pool, fewer than two classes or labels out of range.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.audit import mislabeled_canaries
    >>> X, y = np.arange(20.0).reshape(10, 2), np.arange(10) % 3
    >>> c = mislabeled_canaries(X, y, 4, repeats=2, random_state=0)
    >>> c.X.shape, c.n_canaries, bool((c.y != np.repeat(c.true_y, 2)).all())
    ((8, 2), 4, True)
    """
    X = np.asarray(X)
    y = np.asarray(y).ravel()
    if X.shape[0] != y.size or not np.issubdtype(y.dtype, np.integer):
        raise ValueError(f"y must hold {X.shape[0]} integer labels, one per example of X.")
    n_canaries = check_scalar(n_canaries, "n_canaries", "int", min_val=1, max_val=y.size)
    repeats = check_scalar(repeats, "repeats", "int", min_val=1)
    classes = int(y.max()) + 1 if n_classes is None else check_scalar(n_classes, "n_classes", "int", min_val=2)
    if classes < 2 or y.min() < 0 or y.max() >= classes:
        raise ValueError(f"mislabelled canaries need at least 2 classes and labels in 0..{classes - 1}.")
    rng = check_random_state(random_state)
    rows = rng.choice(y.size, n_canaries, replace=False)
    wrong = (y[rows] + rng.integers(1, classes, n_canaries)) % classes
    repeat = np.repeat(np.arange(n_canaries), repeats)
    return Canaries(X[rows][repeat], wrong[repeat].astype(np.int64), repeat.astype(np.int64), y[rows].astype(np.int64))


def outlier_canaries(
    X,
    n_canaries: int,
    *,
    group_size: int = 5,
    distance: float = 3.0,
    spread: float = 0.05,
    random_state: SeedLike = None,
) -> Canaries:
    """Clustering canaries: small tight groups of points far out from the data, each able to pull a centre.

    Canary ``i`` is ``group_size`` points around ``m + distance · r · u_i``, with ``m`` the data's mean,
    ``r`` its root-mean-square distance to ``m``, and ``u_i`` a uniform random direction; the points scatter
    around it with standard deviation ``spread · r`` per feature, divided by ``√n_features``. K-means++ seeds a far-out
    group with high probability (its ``D²`` weight is large), so a clustering fitted with a canary tends to
    keep a centre near it, and one fitted without it does not. Random directions in many dimensions are
    nearly orthogonal, so canaries do not explain one another.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The data the canaries stand out from.
    n_canaries : int
        Canaries.
    group_size : int, default=5
        Points per canary.
    distance : float, default=3.0
        Distance from the mean, in units of ``r``.
    spread : float, default=0.05
        The group's spread, in units of ``r``.
    random_state : int, numpy.random.Generator, numpy.random.SeedSequence or None, default=None
        Draws directions and points.

    Returns
    -------
    Canaries
        ``n_canaries × group_size`` points, no labels.

    Raises
    ------
    ValueError
        For bad sizes, or data without spread.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.audit import outlier_canaries
    >>> X = np.random.default_rng(0).normal(size=(100, 3))
    >>> c = outlier_canaries(X, 4, group_size=3, random_state=0)
    >>> c.X.shape, c.group.tolist()[:6]
    ((12, 3), [0, 0, 0, 1, 1, 1])
    >>> r = np.sqrt(((X - X.mean(0)) ** 2).sum(1).mean())
    >>> bool(np.allclose(np.linalg.norm(c.X - X.mean(0), axis=1) / r, 3.0, atol=0.2))
    True
    """
    X = check_array(X)
    n_canaries = check_scalar(n_canaries, "n_canaries", "int", min_val=1)
    group_size = check_scalar(group_size, "group_size", "int", min_val=1)
    distance = check_scalar(distance, "distance", "real", min_val=0.0, include_min=False)
    spread = check_scalar(spread, "spread", "real", min_val=0.0)
    mean = X.mean(axis=0)
    radius = float(np.sqrt(((X - mean) ** 2).sum(axis=1).mean()))
    if not radius > 0:
        raise ValueError("X has no spread (every row equal): canaries cannot be placed relative to it.")
    rng = check_random_state(random_state)
    d = X.shape[1]
    directions = rng.normal(size=(n_canaries, d))
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    group = np.repeat(np.arange(n_canaries), group_size)
    noise = rng.normal(0.0, spread * radius / np.sqrt(d), (group.size, d))
    points = mean + distance * radius * directions[group] + noise
    return Canaries(points, None, group.astype(np.int64))
