"""Splitting a dataset over clients: iid, MUFC/K-FED non-iid, per-class Dirichlet, natural groups (all or a sample)."""

from __future__ import annotations

import numpy as np

from fedlib._random import check_random_state
from fedlib._typing import NDArrayInt, SeedLike
from fedlib._validation import check_scalar


def _check_n_clients(n_clients: int, n_samples: int) -> int:
    if int(n_clients) < 1:
        raise ValueError(f"n_clients={n_clients} should be >= 1.")
    if n_samples < n_clients:
        raise ValueError(f"n_samples={n_samples} should be >= n_clients={n_clients}.")
    return int(n_clients)


def iid_partition(n_samples: int, n_clients: int, *, random_state: SeedLike = None) -> list[NDArrayInt]:
    """Shuffle ``range(n_samples)`` and cut it into ``n_clients`` near-equal parts.

    Parameters
    ----------
    n_samples : int
        Number of points.
    n_clients : int
        Number of clients, between 1 and ``n_samples``.
    random_state : int, numpy.random.Generator or None, default=None
        Pass an int for reproducible output across multiple function calls.

    Returns
    -------
    list of ndarray of int64
        One sorted index array per client; sizes differ by at most one.

    Raises
    ------
    ValueError
        If ``n_clients < 1`` or ``n_clients > n_samples``.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.data import iid_partition
    >>> parts = iid_partition(10, 3, random_state=0)
    >>> [len(p) for p in parts], sorted(np.concatenate(parts).tolist()) == list(range(10))
    ([4, 3, 3], True)
    """
    n_clients = _check_n_clients(n_clients, n_samples)
    rng = check_random_state(random_state)
    perm = rng.permutation(n_samples)
    return [np.sort(part) for part in np.array_split(perm, n_clients)]


def non_iid_partition(
    labels,
    n_clients: int,
    *,
    max_clusters_per_client: int,
    random_state: SeedLike = None,
    max_tries: int = 1000,
) -> list[NDArrayInt]:
    """The non-iid split of MUFC and K-FED: each client holds at most K' clusters.

    MUFC says only that the data are split non-i.i.d.; this follows
    ``utils.split_data`` of the MUFC authors' code
    (https://github.com/thupchnsky/mufc): the target client size is
    ``floor(n / L)``; each of the first ``L - 1`` clients picks
    ``min(K', #clusters left)`` clusters at random and takes from each, in data
    order, a chunk of ``randint(floor(size / K') - 1, size)`` points (capped by
    what the client and the cluster have left); the last client takes all the
    leftovers. The authors' code asserts that the leftovers come from at most
    K' clusters; here the split is redrawn from the same generator until they do.

    Parameters
    ----------
    labels : array-like of shape (n_samples,)
        Cluster of each point (MUFC: K-means labels on the full data).
    n_clients : int
        L.
    max_clusters_per_client : int
        K'; MUFC uses K' = round(sqrt(K)).
    random_state : int, numpy.random.Generator or None, default=None
        Pass an int for reproducible output across multiple function calls.
    max_tries : int, default=1000
        Redraws allowed before giving up.

    Returns
    -------
    list of ndarray
        Index arrays, one per client. Client sizes vary; the last one is often large.

    Raises
    ------
    ValueError
        If ``labels`` is not 1-D, K' is not in ``[1, K]``, ``n_clients`` is out
        of range, or no valid split is found in ``max_tries`` draws.

    Notes
    -----
    Used in :doc:`/notebooks/foundations/kmeans` and :doc:`/notebooks/mufc/training`.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.data import non_iid_partition
    >>> labels = np.repeat([0, 1, 2, 3], 10)
    >>> parts = non_iid_partition(labels, 4, max_clusters_per_client=2, random_state=0)
    >>> all(len(np.unique(labels[p])) <= 2 for p in parts), sum(len(p) for p in parts)
    (True, 40)
    """
    labels = np.asarray(labels)
    if labels.ndim != 1:
        raise ValueError(f"labels must be 1-D, got shape {labels.shape}.")
    n = labels.shape[0]
    n_clients = _check_n_clients(n_clients, n)
    classes = np.unique(labels)
    k_prime = int(max_clusters_per_client)
    if not 1 <= k_prime <= classes.size:
        raise ValueError(f"max_clusters_per_client={k_prime} should lie in [1, n_clusters={classes.size}].")
    members = [np.flatnonzero(labels == c) for c in classes]
    size = n // n_clients
    low = max(0, size // k_prime - 1)
    rng = check_random_state(random_state)
    for _ in range(max_tries):
        parts = _draw_non_iid(members, n_clients, size, low, k_prime, rng)
        if parts is not None:
            return parts
    raise ValueError(
        f"no non-iid split with at most K'={k_prime} clusters on the last client after {max_tries} draws "
        f"(n_samples={n}, n_clients={n_clients}); lower n_clients or raise max_clusters_per_client."
    )


def _draw_non_iid(members, n_clients, size, low, k_prime, rng) -> list[NDArrayInt] | None:
    used = [0] * len(members)
    valid = list(range(len(members)))
    parts: list[NDArrayInt] = []
    for _ in range(n_clients - 1):
        chosen = rng.choice(valid, size=min(k_prime, len(valid)), replace=False) if valid else []
        taken: list[NDArrayInt] = []
        filled = 0
        for c in chosen:
            remaining = members[c].size - used[c]
            if filled >= size or remaining <= 0:
                continue
            count = min(int(rng.integers(low, size)) if size > low else size, size - filled, remaining)
            taken.append(members[c][used[c] : used[c] + count])
            used[c] += count
            filled += count
            if used[c] == members[c].size:
                valid.remove(c)
            if filled == size:
                break
        parts.append(np.sort(np.concatenate(taken)) if taken else np.empty(0, dtype=np.int64))
    leftovers = [m[u:] for m, u in zip(members, used, strict=True) if u < m.size]
    if len(leftovers) > k_prime or not leftovers:
        return None
    parts.append(np.sort(np.concatenate(leftovers)))
    if any(p.size == 0 for p in parts):
        return None
    return parts


def k_prime_partition(labels, n_clients: int, k_prime: int, *, random_state: SeedLike = None) -> list[NDArrayInt]:
    """SecFC's non-iid split: client j holds points of the k' clusters ``(j·k' + s) mod k``, ``s < k'``.

    SecFC §5.1 calls k' "the maximum number of clusters a client can have data
    points in" but gives no partitioner. Here client j takes clusters
    ``{(j·k' + s) mod k : 0 <= s < k'}``, a cyclic assignment that gives every
    cluster to nearly the same number of clients even when ``n`` is not a
    multiple of ``k``; each cluster's points are shuffled and split as evenly
    as possible among the clients that take it. For k=4, n=10, k'=1 the
    clusters go to 3, 3, 2 and 2 clients; k'=k gives iid-like data
    ("corresponds to i.i.d. data distribution").

    Parameters
    ----------
    labels : array-like of shape (n_samples,)
        Cluster of each point. The k distinct values are numbered 0..k-1 in
        sorted order (the usual labels 0..k-1 keep their numbers).
    n_clients : int
        n, the number of clients.
    k_prime : int
        k', the number of clusters per client, in ``[1, k]``.
    random_state : int, numpy.random.Generator or None, default=None
        Pass an int for reproducible output across multiple function calls.

    Returns
    -------
    list of ndarray of int64
        ``n_clients`` sorted index arrays, disjoint and covering
        ``range(n_samples)``; client j holds points of at most k' clusters.

    Raises
    ------
    ValueError
        If k' is not in ``[1, k]``, if ``n_clients·k' < k`` (some cluster would
        go to no client), or if a client would receive no point.

    Notes
    -----
    Cost O(n_samples + n_clients·k'). Used
    for the Tables 1-3 runs of :doc:`/notebooks/secfc/secure_clustering`.

    References
    ----------
    S. Li, S. Hou, B. Buyukates, S. Avestimehr. "Secure Federated Clustering", 2022.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.data import k_prime_partition
    >>> labels = np.repeat([0, 1, 2, 3], 6)
    >>> parts = k_prime_partition(labels, 4, 2, random_state=0)
    >>> [sorted(set(labels[p].tolist())) for p in parts]
    [[0, 1], [2, 3], [0, 1], [2, 3]]
    """
    labels = np.asarray(labels)
    if labels.ndim != 1:
        raise ValueError(f"labels must be 1-D, got shape {labels.shape}.")
    n = labels.shape[0]
    n_clients = _check_n_clients(n_clients, n)
    classes, codes = np.unique(labels, return_inverse=True)
    k = classes.size
    k_prime = int(k_prime)
    if not 1 <= k_prime <= k:
        raise ValueError(f"k_prime={k_prime} should lie in [1, k={k}] (k = number of distinct labels).")
    if n_clients * k_prime < k:
        raise ValueError(
            f"every cluster needs a client: n_clients * k_prime >= k, got n_clients={n_clients}, "
            f"k_prime={k_prime}, k={k} ({n_clients * k_prime} < {k})."
        )
    # client j takes clusters (j*k' + s) mod k, s < k'
    takes = (np.arange(n_clients)[:, None] * k_prime + np.arange(k_prime)[None, :]) % k
    rng = check_random_state(random_state)
    order = np.argsort(codes, kind="stable")
    members = np.split(order, np.cumsum(np.bincount(codes, minlength=k))[:-1])
    pieces: list[list[NDArrayInt]] = [[] for _ in range(n_clients)]
    for c in range(k):
        clients = np.flatnonzero((takes == c).any(axis=1))
        for j, chunk in zip(clients, np.array_split(rng.permutation(members[c]), clients.size), strict=True):
            pieces[j].append(chunk)
    parts = [np.sort(np.concatenate(p)).astype(np.int64) for p in pieces]
    empty = [j for j, p in enumerate(parts) if p.size == 0]
    if empty:
        raise ValueError(
            f"client {empty[0]} would hold no points: its clusters {sorted(takes[empty[0]].tolist())} have fewer "
            f"points than clients taking them; lower n_clients={n_clients} or raise k_prime={k_prime}."
        )
    return parts


def dirichlet_partition(
    labels,
    n_clients: int,
    alpha: float,
    *,
    min_size: int = 10,
    max_tries: int = 100,
    random_state: SeedLike = None,
) -> list[NDArrayInt]:
    """The per-class Dirichlet split: each class spread over the clients in Dirichlet(alpha) proportions.

    For every class ``k``, proportions ``p_k ~ Dir_J(alpha, ..., alpha)``
    over the ``J = n_clients`` clients are drawn, the class's ``n_k`` indices
    are shuffled and cut at ``floor(n_k · (p_k1 + ... + p_kj) + u_k)``,
    ``u_k ~ U(0, 1)``: client ``j`` takes the piece between its cuts, within
    one of ``n_k p_kj`` and equal to it on average (without ``u_k`` the cuts
    starve the first client and feed the last when classes are small). This is the heterogeneous
    partition of Yurochkin et al. (ICML 2019), which Wang et al. (ICLR 2020)
    use for CIFAR-10 too; Hsu et al. (2019) draw each client's class
    distribution from a Dirichlet instead. Small ``alpha`` gives each client
    few classes; large ``alpha`` tends to each class's iid share. Until every
    client holds at least ``min_size`` samples, the whole split is drawn again
    from the same generator, at most ``max_tries`` times. (Some code bases
    also stop giving a class to clients already above the average size; this
    does not.)

    Parameters
    ----------
    labels : array-like of shape (n_samples,)
        Class of each sample (any sortable values).
    n_clients : int
        ``J``, between 1 and ``n_samples``.
    alpha : float
        Concentration of the symmetric Dirichlet, > 0.
    min_size : int, default=10
        Fewest samples a client may hold, at least 1; ``n_clients · min_size``
        must not exceed ``n_samples``.
    max_tries : int, default=100
        Draws allowed before giving up.
    random_state : int, numpy.random.Generator or None, default=None
        Pass an int for reproducible output across multiple function calls.

    Returns
    -------
    list of ndarray of int64
        ``n_clients`` sorted index arrays, disjoint and covering ``range(n_samples)``.

    Raises
    ------
    TypeError
        If ``n_clients``, ``min_size`` or ``max_tries`` is not an int, or ``alpha`` not a real number.
    ValueError
        If ``labels`` is not 1-D, an argument is out of range, ``n_clients · min_size > n_samples``,
        or no draw in ``max_tries`` gives every client ``min_size`` samples.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.data import dirichlet_partition
    >>> labels = np.repeat([0, 1, 2], 40)
    >>> parts = dirichlet_partition(labels, 4, alpha=0.5, min_size=5, random_state=0)
    >>> sorted(np.concatenate(parts).tolist()) == list(range(120)), min(len(p) for p in parts) >= 5
    (True, True)
    """
    labels = np.asarray(labels)
    if labels.ndim != 1:
        raise ValueError(f"labels must be 1-D, got shape {labels.shape}.")
    n = labels.shape[0]
    n_clients = check_scalar(n_clients, "n_clients", "int", min_val=1)
    n_clients = _check_n_clients(n_clients, n)
    alpha = check_scalar(alpha, "alpha", "real", min_val=0.0, include_min=False)
    if not np.isfinite(alpha):
        raise ValueError(f"alpha={alpha!r} should be finite.")
    min_size = check_scalar(min_size, "min_size", "int", min_val=1)
    max_tries = check_scalar(max_tries, "max_tries", "int", min_val=1)
    if n_clients * min_size > n:
        raise ValueError(
            f"n_clients * min_size = {n_clients} * {min_size} = {n_clients * min_size} exceeds n_samples={n}: "
            "no split gives every client min_size samples; lower min_size or n_clients."
        )
    _, codes = np.unique(labels, return_inverse=True)
    class_sizes = np.bincount(codes)
    rng = check_random_state(random_state)
    for _ in range(max_tries):
        sizes, client_of = _draw_dirichlet(codes, class_sizes, n_clients, alpha, rng)
        if sizes.min() >= min_size:
            rows = np.argsort(client_of, kind="stable")  # by client, each client's indices sorted
            return [part.astype(np.int64) for part in np.split(rows, np.cumsum(sizes)[:-1])]
    raise ValueError(
        f"no Dirichlet split gave every client at least min_size={min_size} samples in max_tries={max_tries} draws "
        f"(n_samples={n}, n_clients={n_clients}, alpha={alpha}); lower min_size or n_clients, or raise alpha."
    )


def _draw_dirichlet(codes, class_sizes, n_clients, alpha, rng) -> tuple[np.ndarray, np.ndarray]:
    """One draw: each sample's client, and the clients' sizes. Shuffle, proportions, then cuts; no loop."""
    order = rng.permutation(codes.size)
    order = order[np.argsort(codes[order], kind="stable")]  # class by class, each class's indices shuffled
    proportions = rng.dirichlet(np.full(n_clients, alpha), size=class_sizes.size)  # (n_classes, n_clients)
    # Cuts at floor(n_k * cumulative share + u_k), u_k ~ U(0, 1) per class (systematic rounding): each count is
    # within one of n_k p_kj and equals it on average. Without u_k the first client loses a fractional part per
    # class and the last gets every remainder, a bias that dominates when classes are small against the number
    # of clients (8 samples per class over 20 clients: 1 sample for the first client against 100 for the last).
    shift = rng.random(class_sizes.size)[:, None]
    cuts = np.floor(np.cumsum(proportions, axis=1) * class_sizes[:, None] + shift).astype(np.int64)
    cuts = np.minimum(cuts, class_sizes[:, None])
    cuts[:, -1] = class_sizes  # the cumulative sum may round to just below 1
    counts = np.diff(cuts, axis=1, prepend=0)  # (n_classes, n_clients): samples of class k for client j
    client_of = np.empty(codes.size, dtype=np.int64)
    client_of[order] = np.repeat(np.tile(np.arange(n_clients), class_sizes.size), counts.ravel())
    return counts.sum(axis=0), client_of


def partition_by_group(groups) -> list[NDArrayInt]:
    """One client per distinct value of ``groups`` (e.g. FEMNIST's writers), in sorted group order.

    MUFC keeps FEMNIST's natural split: its 100 clients are writers (App. M.1).

    Parameters
    ----------
    groups : array-like of shape (n_samples,)
        Group of each point (any sortable values).

    Returns
    -------
    list of ndarray of int64
        One sorted index array per group.

    Raises
    ------
    ValueError
        If ``groups`` is not 1-D.

    Examples
    --------
    >>> from fedlib.data import partition_by_group
    >>> [p.tolist() for p in partition_by_group(["b", "a", "b"])]
    [[1], [0, 2]]
    """
    groups = np.asarray(groups)
    if groups.ndim != 1:
        raise ValueError(f"groups must be 1-D, got shape {groups.shape}.")
    order = np.argsort(groups, kind="stable")
    _, starts = np.unique(groups[order], return_index=True)
    return [np.sort(part) for part in np.split(order, starts[1:])]


def split_by_group(
    groups,
    is_test,
    n_clients: int,
    *,
    max_per_client: int,
    test_size: int,
    min_train_size: int = 1,
    random_state: SeedLike = None,
) -> tuple[NDArrayInt, list[NDArrayInt], NDArrayInt]:
    """``n_clients`` random groups as clients (e.g. FEMNIST's writers), each with its own training rows, and a test set.

    LEAF's FEMNIST divides every writer's images into a training and a test
    part. The clients are ``n_clients`` groups drawn without replacement among
    those with at least ``min_train_size`` training rows; each keeps at most
    ``max_per_client`` of its training rows, drawn at random, and the test set
    is at most ``test_size`` rows drawn from the chosen groups' test parts.
    The draws come in this order from one generator: the groups, each group's
    rows (in sorted group order), the test rows.

    Parameters
    ----------
    groups : array-like of int of shape (n_samples,)
        Group of each row (FEMNIST: ``extras["user_index"]``).
    is_test : array-like of bool of shape (n_samples,)
        Whether a row belongs to its group's test part (FEMNIST: ``extras["is_test"]``).
    n_clients : int
        Groups to draw, >= 1.
    max_per_client : int
        Most training rows a client keeps, >= 1.
    test_size : int
        Most test rows, >= 0.
    min_train_size : int, default=1
        Fewest training rows a group needs to be drawn, >= 0.
    random_state : int, numpy.random.Generator or None, default=None
        Pass an int for reproducible output across multiple function calls.

    Returns
    -------
    train_rows : ndarray of int64
        The clients' training rows, client after client (clients in sorted group order, each client's
        rows sorted).
    clients : list of ndarray of int64
        Client ``c``'s positions in ``train_rows``: consecutive blocks, one per client.
    test_rows : ndarray of int64
        Sorted test rows, from the chosen groups' test parts.

    Raises
    ------
    ValueError
        If ``groups`` and ``is_test`` are not 1-D of one length, or fewer than
        ``n_clients`` groups (writers) have ``min_train_size`` training rows.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.data import split_by_group
    >>> groups = np.array([0, 0, 0, 1, 1, 2, 2, 2])
    >>> is_test = np.array([0, 0, 1, 0, 1, 0, 0, 1], dtype=bool)
    >>> rows, clients, test = split_by_group(groups, is_test, 2, max_per_client=1, test_size=5, random_state=0)
    >>> len(rows), [c.tolist() for c in clients], len(test)
    (2, [[0], [1]], 2)
    """
    groups = np.asarray(groups)
    is_test = np.asarray(is_test, dtype=bool)
    if groups.ndim != 1 or is_test.shape != groups.shape:
        raise ValueError(
            f"groups and is_test must be 1-D of one length, got shapes {groups.shape} and {is_test.shape}."
        )
    n_clients = check_scalar(n_clients, "n_clients", "int", min_val=1)
    max_per_client = check_scalar(max_per_client, "max_per_client", "int", min_val=1)
    test_size = check_scalar(test_size, "test_size", "int", min_val=0)
    min_train_size = check_scalar(min_train_size, "min_train_size", "int", min_val=0)
    names, codes = np.unique(groups, return_inverse=True)
    eligible = names[np.bincount(codes[~is_test], minlength=names.size) >= min_train_size]
    if n_clients > eligible.size:
        raise ValueError(
            f"{eligible.size} groups (writers) have at least {min_train_size} training rows; "
            f"n_clients={n_clients} asked for."
        )
    rng = check_random_state(random_state)
    chosen = np.sort(rng.choice(eligible, size=n_clients, replace=False))
    train_rows, clients, start = [], [], 0
    for group in chosen.tolist():
        own = np.flatnonzero((groups == group) & ~is_test)
        own = np.sort(rng.permutation(own)[:max_per_client])
        train_rows.append(own)
        clients.append(np.arange(start, start + own.size, dtype=np.int64))
        start += own.size
    test_pool = np.flatnonzero(is_test & np.isin(groups, chosen))
    test_rows = np.sort(rng.choice(test_pool, size=min(test_size, test_pool.size), replace=False))
    return np.concatenate(train_rows), clients, test_rows


def client_cluster_counts(parts: list[NDArrayInt], labels) -> np.ndarray:
    """Matrix of shape (n_clients, n_clusters): how many points of each cluster each client holds.

    Parameters
    ----------
    parts : list of ndarray of int
        Index arrays, one per client.
    labels : array-like of shape (n_samples,)
        Cluster of each point; the distinct values are numbered in sorted order.

    Returns
    -------
    ndarray of int64, shape (n_clients, n_clusters)
        Counts per client and cluster.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.data import client_cluster_counts
    >>> client_cluster_counts([np.array([0, 1]), np.array([2])], [5, 7, 7]).tolist()
    [[1, 1], [0, 1]]
    """
    labels = np.asarray(labels)
    classes, codes = np.unique(labels, return_inverse=True)
    counts = np.zeros((len(parts), classes.size), dtype=np.int64)
    for i, idx in enumerate(parts):
        counts[i] = np.bincount(codes[idx], minlength=classes.size)
    return counts


def subsample_indices(n_samples: int, max_samples: int | None, *, random_state: SeedLike = None) -> NDArrayInt:
    """Sorted indices of a uniform subsample of at most ``max_samples`` rows (all rows if ``None``).

    Chapters use it to shrink datasets at CI scale; the full data runs the same code.

    Parameters
    ----------
    n_samples : int
        Number of rows.
    max_samples : int or None
        Most rows to keep; ``None`` keeps all.
    random_state : int, numpy.random.Generator or None, default=None
        Pass an int for reproducible output across multiple function calls.

    Returns
    -------
    ndarray of int64
        Sorted row indices, without repetition.

    Raises
    ------
    ValueError
        If ``max_samples < 1`` (and below ``n_samples``).

    Examples
    --------
    >>> from fedlib.data import subsample_indices
    >>> subsample_indices(5, None).tolist(), len(subsample_indices(100, 10, random_state=0))
    ([0, 1, 2, 3, 4], 10)
    """
    if max_samples is None or n_samples <= max_samples:
        return np.arange(n_samples)
    if max_samples < 1:
        raise ValueError(f"max_samples={max_samples} should be >= 1 or None.")
    rng = check_random_state(random_state)
    return np.sort(rng.choice(n_samples, size=max_samples, replace=False))
