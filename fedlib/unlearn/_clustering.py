"""Random clusterings of the clients (Liu et al., TDSC 2025, Alg. 1 lines 2-3).

A uniformly random permutation fills ``s = ⌊N/k⌋`` clusters of ``k`` clients (line 2); the ``N − sk``
leftovers join clusters at random or round robin (line 3). :func:`assign_clusters` draws one clustering;
the Monte Carlo draws many at once, with each client's place on its cluster's Harary circle.
:func:`balanced_cluster_sizes` gives the sizes when the leftovers go one per cluster.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Literal

import numpy as np

from fedlib._random import check_random_state
from fedlib._typing import SeedLike
from fedlib._validation import check_option, check_scalar
from fedlib.exceptions import InfeasibleParameters

#: How Alg. 1 line 3 places the ``N - sk`` leftover clients.
LEFTOVERS = ("random", "round_robin")
Leftovers = Literal["random", "round_robin"]


def _require_fits(n_clients: int, k: int) -> None:
    """Raise :class:`~fedlib.exceptions.InfeasibleParameters` if a cluster of ``k`` exceeds ``N`` clients (Remark 6)."""
    if k > n_clients:
        raise InfeasibleParameters(
            f"cluster size k = {k} exceeds the N = {n_clients} clients: no cluster fits (Remark 6)."
        )


def balanced_cluster_sizes(n_clients: int, k: int) -> tuple[int, ...]:
    """Cluster sizes when the ``N − sk`` leftover clients go one per cluster (round robin), largest first.

    Parameters
    ----------
    n_clients : int
        ``N``.
    k : int
        Designed cluster size, ``1 <= k <= N``.

    Returns
    -------
    tuple of int
        ``s = ⌊N/k⌋`` sizes that sum to ``N``. More than ``s`` leftovers give
        some clusters several extra clients.

    Raises
    ------
    InfeasibleParameters
        If ``k > N`` (no cluster fits, Remark 6).

    Examples
    --------
    >>> from fedlib.unlearn import balanced_cluster_sizes
    >>> balanced_cluster_sizes(500, 42)
    (46, 46, 46, 46, 46, 45, 45, 45, 45, 45, 45)
    """
    n = check_scalar(n_clients, "n_clients (N)", "int", min_val=1)
    k = check_scalar(k, "k", "int", min_val=1)
    _require_fits(n, k)
    s = n // k
    base, extra = divmod(n, s)
    return tuple([base + 1] * extra + [base] * (s - extra))


def _cluster_layout(
    rng: np.random.Generator, n_trials: int, n_clients: int, k: int, leftovers: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Random clusterings of clients ``0..N-1``: cluster label and slot on the cluster's circle, per trial.

    Alg. 1: a random permutation fills ``s`` clusters of ``k`` (line 2); the
    ``N − sk`` leftovers go to independent uniform clusters, or round robin over
    a random order of the clusters (line 3). The slot orders a cluster's members
    (the first ``k`` in permutation order, then its leftovers), which is a
    uniformly random order: the Harary circle of Lemma 3.

    Returns ``labels`` and ``slots`` of shape (n_trials, N) and ``sizes`` of shape (n_trials, s).
    """
    s = n_clients // k
    r = n_clients - s * k
    client_at = rng.permuted(np.tile(np.arange(n_clients), (n_trials, 1)), axis=1)
    block = np.arange(s * k)
    pos_labels = np.empty((n_trials, n_clients), dtype=np.int64)
    pos_slots = np.empty((n_trials, n_clients), dtype=np.int64)
    pos_labels[:, : s * k] = block // k
    pos_slots[:, : s * k] = block % k
    if r:
        if leftovers == "random":
            extra = rng.integers(0, s, size=(n_trials, r))
        else:
            order = rng.permuted(np.tile(np.arange(s), (n_trials, 1)), axis=1)
            extra = order[:, np.arange(r) % s]
        onehot = extra[:, :, None] == np.arange(s)[None, None, :]
        rank = np.take_along_axis(np.cumsum(onehot, axis=1), extra[:, :, None], axis=2)[:, :, 0] - 1
        pos_labels[:, s * k :] = extra
        pos_slots[:, s * k :] = k + rank
    rows = np.arange(n_trials)[:, None]
    labels = np.empty_like(pos_labels)
    slots = np.empty_like(pos_slots)
    labels[rows, client_at] = pos_labels
    slots[rows, client_at] = pos_slots
    sizes = np.full((n_trials, s), k, dtype=np.int64)
    if r:
        sizes += (pos_labels[:, s * k :, None] == np.arange(s)[None, None, :]).sum(axis=1)
    return labels, slots, sizes


def _layout_batches(
    rng: np.random.Generator, n_trials: int, n_clients: int, k: int, leftovers: str, batch: int
) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """``_cluster_layout`` for ``n_trials`` trials, at most ``batch`` at a time, in the order of the draws.

    The Monte Carlo runs of Requirements 1-4 and of Remark 1 bound their memory this way; each batch
    is ``(labels, slots, sizes)`` with ``len(labels)`` trials.
    """
    done = 0
    while done < n_trials:
        size = min(batch, n_trials - done)
        yield _cluster_layout(rng, size, n_clients, k, leftovers)
        done += size


def assign_clusters(
    n_clients: int, k: int, *, leftovers: Leftovers = "random", random_state: SeedLike = None
) -> list[np.ndarray]:
    """Split clients ``0..N-1`` into ``s = ⌊N/k⌋`` random clusters (Liu et al. 2025, Alg. 1 lines 2-3).

    A uniformly random permutation fills ``s`` clusters of ``k`` clients; the
    ``N − sk`` leftover clients then join clusters either independently and
    uniformly at random (``"random"``, the paper's line 3, which can give one
    cluster several extra clients) or round robin over a random order of the
    clusters (``"round_robin"``, sizes differ by at most one when ``N − sk < s``).

    Parameters
    ----------
    n_clients : int
        ``N >= 1``.
    k : int
        Designed cluster size, ``1 <= k <= N``.
    leftovers : {"random", "round_robin"}, default="random"
        How the leftover clients are placed.
    random_state : int, numpy.random.Generator or None, default=None
        Draws the permutation and the placement; an int gives the same clusters every time.

    Returns
    -------
    list of ndarray of int64
        ``s`` arrays of sorted client ids that partition ``range(N)``.

    Raises
    ------
    InfeasibleParameters
        If ``k > N``: no cluster fits (Remark 6).

    Examples
    --------
    >>> from fedlib.unlearn import assign_clusters
    >>> clusters = assign_clusters(10, 3, leftovers="round_robin", random_state=0)
    >>> sorted(len(c) for c in clusters), sorted(int(u) for c in clusters for u in c) == list(range(10))
    ([3, 3, 4], True)
    """
    n = check_scalar(n_clients, "n_clients (N)", "int", min_val=1)
    k = check_scalar(k, "k", "int", min_val=1)
    check_option(leftovers, "leftovers", LEFTOVERS)
    _require_fits(n, k)
    rng = check_random_state(random_state)
    labels, _, _ = _cluster_layout(rng, 1, n, k, leftovers)
    return [np.flatnonzero(labels[0] == c) for c in range(n // k)]
