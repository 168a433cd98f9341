"""The Harary masking graph ``H(k, m)`` of SecAgg+ inside a cluster (Liu et al., TDSC 2025, Lemma 3, Requirement 3).

:func:`harary_degree` chooses ``m``: as printed (``m = ln k``) or so that Lemma 3's union bound holds;
:func:`harary_connected` decides whether ``H(k, m)`` minus the removed clients (adversaries, dropouts,
unlearned) stays connected, by the circular runs of removed vertices.
"""

from __future__ import annotations

import math

import numpy as np

from fedlib._validation import check_option, check_scalar
from fedlib.unlearn._params import LN2, VARIANTS, Variant


def harary_degree(k: int, p: float, sigma: float, variant: Variant = "printed", *, n_clusters: int = 1) -> int:
    """The Harary degree ``m`` of SecAgg+ inside a cluster of ``k`` clients (Liu et al. 2025, Lemma 3).

    ``"printed"``: ``m = ln k`` "as same to the setting in SecAgg+", rounded to
    the nearest even number (at least 2). ``"corrected"``: the smallest even
    ``m`` with ``n_clusters · k · p^{m/2} <= 2^-σ``, i.e.
    ``m = 2⌈(σ ln 2 + ln(n_clusters·k)) / (−ln p)⌉``: Lemma 3's union bound over
    the ``k`` circle positions of each of the ``n_clusters`` clusters (Requirement 3
    quantifies over all clusters; ``n_clusters=1`` is the per-cluster bound of the
    paper). A degree ``>= k − 1`` means the complete graph, i.e. plain SecAgg; the
    result is then capped at the smallest even number ``>= k − 1``.

    Parameters
    ----------
    k : int
        Cluster size, ``>= 1``.
    p : float
        Fraction of the cluster that is removed (adversarial, dropped or
        unlearned), ``γ + δ + ζ`` in the paper; in ``[0, 1)``. Unused by ``"printed"``.
    sigma : float
        ``σ`` in bits.
    variant : {"printed", "corrected"}, default="printed"
        ``m = ln k``, or the degree that meets the union bound.
    n_clusters : int, default=1
        Clusters the union bound runs over (``"corrected"`` only).

    Returns
    -------
    int
        An even degree ``m >= 2`` (``>= k − 1`` meaning the complete graph).

    Raises
    ------
    ValueError
        If ``p`` is not in ``[0, 1)`` or another argument is out of range.

    Examples
    --------
    >>> from fedlib.unlearn import harary_degree
    >>> harary_degree(60, 0.3, 40)
    4
    >>> harary_degree(60, 0.3, 40, "corrected")
    54
    >>> harary_degree(20, 0.3, 40, "corrected")  # the complete graph
    20
    """
    k = check_scalar(k, "k", "int", min_val=1)
    p = check_scalar(p, "p", "real", min_val=0.0, max_val=1.0, include_max=False)
    sigma = check_scalar(sigma, "sigma (σ)", "real", min_val=0.0)
    n_clusters = check_scalar(n_clusters, "n_clusters", "int", min_val=1)
    check_option(variant, "variant", VARIANTS)
    if variant == "printed":
        m = max(2, 2 * round(math.log(k) / 2))
    elif p == 0:
        m = 2
    else:
        m = max(2, 2 * math.ceil((sigma * LN2 + math.log(n_clusters * k)) / -math.log(p)))
    complete = (k - 1) + (k - 1) % 2
    return int(min(m, max(complete, 2)))


def harary_connected(removed, degree: int) -> np.ndarray:
    """Whether ``H(k, m)`` stays connected after removing vertices, from their places on the circle (Lemma 3).

    For even ``m < k − 1`` a vertex is joined to the ``m/2`` nearest vertices on
    either side of the circle, so two survivors are adjacent iff their circular
    distance is at most ``m/2``. The survivors are therefore connected iff at most
    one circular run of removed vertices has length ``>= m/2``. Fewer than two
    survivors count as connected, and so does a degree ``>= k − 1`` (the complete graph).

    Parameters
    ----------
    removed : array-like of bool of shape (..., k)
        ``removed[..., j]``: whether the vertex at circle position ``j`` is removed.
    degree : int
        The Harary degree ``m``: even, or ``>= k − 1``.

    Returns
    -------
    ndarray of bool of shape (...)
        True where the surviving vertices form one component.

    Raises
    ------
    ValueError
        If ``degree`` is odd and below ``k − 1`` (the opposite-vertex edges of odd
        ``m`` are not covered by the circular-run argument).

    Examples
    --------
    >>> from fedlib.unlearn import harary_connected
    >>> harary_connected([[0, 1, 0, 1, 0, 0], [0, 1, 1, 0, 1, 1]], 2).tolist()  # a ring of six
    [False, False]
    >>> harary_connected([0, 1, 1, 0, 0, 0], 4).item()
    True
    """
    flags = np.asarray(removed, dtype=bool)
    if flags.ndim < 1:
        raise ValueError("removed must have a circle axis.")
    k = flags.shape[-1]
    m = check_scalar(degree, "degree (m)", "int", min_val=1)
    if m >= k - 1:
        return np.ones(flags.shape[:-1], dtype=bool)
    if m % 2:
        raise ValueError(f"degree m = {m} is odd and below k − 1 = {k - 1}: the circular-run test needs an even m.")
    return _long_runs(flags, np.full(flags.shape[:-1], k), m // 2) <= 1


def _long_runs(removed: np.ndarray, lengths: np.ndarray, run: int) -> np.ndarray:
    """Number of maximal circular runs of removed vertices of length ``>= run``, per circle.

    ``removed`` has shape (..., W); circle ``c`` uses its first ``lengths[c]`` entries.
    A circle with no survivor has no maximal run (and is reported as 0).
    """
    width = removed.shape[-1]
    j = np.arange(2 * width)
    lengths = np.maximum(lengths, 1)[..., None]
    doubled = np.take_along_axis(removed, j % lengths, axis=-1).astype(np.int32)
    csum = np.concatenate([np.zeros((*doubled.shape[:-1], 1), dtype=np.int32), np.cumsum(doubled, axis=-1)], axis=-1)
    start = np.arange(width)
    window = csum[..., start + run] - csum[..., start] == run  # positions start..start+run-1 all removed
    previous = np.take_along_axis(removed, (start - 1) % lengths, axis=-1)
    begins = window & ~previous & (start < lengths)
    return begins.sum(axis=-1)
