"""Per-example statistics an attacker reads from a model: losses and LiRA's statistics, for classifiers and K-means."""

from __future__ import annotations

import numpy as np
from scipy.special import logsumexp

from fedlib._validation import check_array
from fedlib.cluster import squared_distances


def _logits_and_labels(logits, y) -> tuple[np.ndarray, np.ndarray]:
    logits = np.asarray(logits, dtype=np.float64)
    y = np.asarray(y).ravel()
    if logits.ndim != 2 or logits.shape[0] != y.size:
        raise ValueError(f"logits must have shape (n, n_classes) with n = len(y) = {y.size}; got {logits.shape}.")
    if not np.issubdtype(y.dtype, np.integer) or (y.size and (y.min() < 0 or y.max() >= logits.shape[1])):
        raise ValueError(f"y must hold integer classes in 0..{logits.shape[1] - 1}.")
    if not np.isfinite(logits).all():
        raise ValueError("logits must be finite; got NaN or infinity.")
    return logits, y.astype(np.int64)


def cross_entropy(logits, y) -> np.ndarray:
    """Each example's cross-entropy loss ``log Σ_j exp z_j − z_y``: the loss-threshold attack's statistic.

    Parameters
    ----------
    logits : array-like of float, shape (n, n_classes)
        The model's logits (e.g. :func:`fedlib.learn.predict_logits`).
    y : array-like of int, shape (n,)
        The labels the model was (or was not) trained on.

    Returns
    -------
    ndarray of float64, shape (n,)
        The losses.

    Raises
    ------
    ValueError
        For shapes that do not match, labels out of range, or logits that are not finite.

    Examples
    --------
    >>> from fedlib.audit import cross_entropy
    >>> cross_entropy([[0.0, 0.0], [2.0, 0.0]], [0, 0]).round(3).tolist()
    [0.693, 0.127]
    """
    logits, y = _logits_and_labels(logits, y)
    return logsumexp(logits, axis=1) - logits[np.arange(y.size), y]


def logit_confidence(logits, y) -> np.ndarray:
    """LiRA's statistic: the scaled logit ``log(p_y / (1 − p_y))`` of the true class, computed stably.

    Carlini et al. (S&P 2022), Sec. IV-B: the softmax confidence ``p_y`` is squashed near 0 and 1; its logit
    is closer to Gaussian across shadow models. From logits ``z`` it is ``z_y − log Σ_{j≠y} exp z_j``, which
    never rounds ``p_y`` to 1.

    Parameters
    ----------
    logits : array-like of float, shape (n, n_classes)
        The model's logits; at least two classes.
    y : array-like of int, shape (n,)
        The labels.

    Returns
    -------
    ndarray of float64, shape (n,)
        The scaled logits.

    Raises
    ------
    ValueError
        As :func:`cross_entropy`, and for a single class.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.audit import logit_confidence
    >>> p = np.array([0.9, 0.1])
    >>> float(logit_confidence(np.log(p)[None], [0]).round(6)[0]) == round(float(np.log(0.9 / 0.1)), 6)
    True
    >>> float(logit_confidence([[60.0, 0.0]], [0])[0])  # p_y rounds to 1.0 in float64, the statistic does not
    60.0
    """
    logits, y = _logits_and_labels(logits, y)
    if logits.shape[1] < 2:
        raise ValueError("logit_confidence needs at least two classes.")
    rows = np.arange(y.size)
    others = logits.copy()
    others[rows, y] = -np.inf
    return logits[rows, y] - logsumexp(others, axis=1)


def _per_group(values: np.ndarray, groups) -> np.ndarray:
    if groups is None:
        return values
    groups = np.asarray(groups).ravel()
    if groups.shape != values.shape or not np.issubdtype(groups.dtype, np.integer) or (groups < 0).any():
        raise ValueError(f"groups must hold {values.size} non-negative integer canary ids.")
    counts = np.bincount(groups)
    if (counts == 0).any():
        raise ValueError("groups must number the canaries 0, 1, ..., n_canaries - 1 without gaps.")
    return np.bincount(groups, weights=values) / counts


def nearest_center_distances(X, centers, *, groups=None) -> np.ndarray:
    """Squared distance of each point to its nearest centre: the K-means loss, per point or per canary.

    Parameters
    ----------
    X : array-like of shape (n, n_features)
        Points.
    centers : array-like of shape (K, n_features)
        A clustering's centres.
    groups : array-like of int, shape (n,), optional
        The canary of each point (``0 .. n_canaries − 1``): the result is then each canary's mean.

    Returns
    -------
    ndarray of float64, shape (n,) or (n_canaries,)
        The squared distances.

    Raises
    ------
    ValueError
        For bad shapes or ``groups``.

    Examples
    --------
    >>> from fedlib.audit import nearest_center_distances
    >>> nearest_center_distances([[0.0], [3.0], [10.0]], [[0.0], [4.0]]).tolist()
    [0.0, 1.0, 36.0]
    >>> nearest_center_distances([[0.0], [3.0], [10.0]], [[0.0], [4.0]], groups=[0, 0, 1]).tolist()
    [0.5, 36.0]
    """
    X = check_array(X)
    centers = check_array(centers, name="centers")
    if centers.shape[1] != X.shape[1]:
        raise ValueError(f"centers have {centers.shape[1]} features; X has {X.shape[1]}.")
    return _per_group(squared_distances(X, centers).min(axis=1), groups)


def nearest_center_scores(X, centers, *, groups=None) -> np.ndarray:
    """LiRA's statistic for clustering: minus the log squared distance to the nearest centre.

    A centre pulled onto a canary leaves it at a small distance; the logarithm spreads the small distances
    out so that, across shadow clusterings, the statistic is closer to Gaussian. Per canary, the mean over
    its points.

    Parameters
    ----------
    X : array-like of shape (n, n_features)
        Points.
    centers : array-like of shape (K, n_features)
        A clustering's centres.
    groups : array-like of int, shape (n,), optional
        As :func:`nearest_center_distances`.

    Returns
    -------
    ndarray of float64, shape (n,) or (n_canaries,)
        Higher: closer to a centre.

    Raises
    ------
    ValueError
        As :func:`nearest_center_distances`.

    Examples
    --------
    >>> from fedlib.audit import nearest_center_scores
    >>> nearest_center_scores([[1.0], [10.0]], [[0.0]]).round(3).tolist()
    [-0.0, -4.605]
    """
    X = check_array(X)
    centers = check_array(centers, name="centers")
    if centers.shape[1] != X.shape[1]:
        raise ValueError(f"centers have {centers.shape[1]} features; X has {X.shape[1]}.")
    distances = squared_distances(X, centers).min(axis=1)
    tiny = np.finfo(np.float64).tiny
    return _per_group(-np.log(np.maximum(distances, tiny)), groups)
