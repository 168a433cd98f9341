"""KNOT's client-to-cluster assignment (Su & Li, INFOCOM 2023, Sec. IV), solved exactly.

Clients ``k`` with a training time ``T_k`` and a model disparity ``S_k`` are
matched to ``N`` cluster *anchors* ``(T̃_n, S̃_n)`` by a rating ``d_kn`` (smaller
is better), rounded to integers ``D_kn ∈ {0..100}``. KNOT picks the assignment
``x`` whose vector of assigned ratings is *lexicographically smallest once
sorted in non-increasing order* (problem (1)-(6)): minimise the worst match,
then the second worst, and so on, with every client in exactly one cluster and
cluster sizes in ``[c2, c3]``.

The paper turns the lexicographic objective into the separable cost
``Σ (KN)^{D_kn} x_kn`` (its Lemma, valid for integer ratings) over a totally
unimodular constraint matrix, and hands Meyer's λ-LP to a float LP solver.
Those weights reach ``(KN)^100``: about ``10^270`` at ``K = 100`` and past the
float64 range at ``K = 250``. Here the same costs are exact Python integers in
a min-cost flow, the transportation problem's natural form; any base of at
least ``K`` preserves the order (only ``K`` entries are non-zero), and ``K + 1``,
the smallest that also works at ``K = 1``, keeps the integers short.

The flow is solved by successive shortest paths, one client at a time (as
Jonker and Volgenant do for assignment): with only ``N`` clusters, a path that
seats a new client moves at most ``N − 1`` others, so Dijkstra runs on the ``N``
cluster nodes, each edge ``n → m`` the cheapest move of a member of ``n`` to
``m`` (kept in a heap per pair), with node potentials that keep reduced costs
non-negative. Cluster lower bounds are met first by a cost ``−M`` on a
cluster's first ``⌈c2⌉`` seats. That is ``O(K N² log K)`` big-integer
operations: 0.04 s for ``K = 1,000`` against 0.8 s for networkx's network
simplex on the same costs (``method="network_simplex"``, kept as a cross-check).

The paper's argument can be checked piece by piece: :func:`cluster_anchors`
places the anchors, :func:`assignment_constraints` builds its constraint matrix
``A = [A_1; −A_1; A_2; −A_2]`` (optionally with side constraints that break total
unimodularity), :func:`sample_subdeterminants` computes exact determinants of
its square submatrices (:func:`integer_determinant`, Bareiss on Python ints),
and :func:`separable_objective` and :func:`lambda_lp_objective` evaluate the
surrogate ``Σ (KN)^{D_kn x_kn}`` and Meyer's λ-LP exactly.
"""

from __future__ import annotations

import heapq
import itertools
import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from scipy import sparse

from fedlib._optional import import_optional
from fedlib._random import check_random_state
from fedlib._typing import SeedLike
from fedlib._validation import check_option, check_scalar
from fedlib.exceptions import InfeasibleAssignment

#: Solvers of :func:`lexmin_assignment`.
ASSIGNMENT_METHODS = ("lexmin_flow", "minsum_flow", "network_simplex", "paper_lp")


@dataclass(frozen=True)
class Assignment:
    """A client-to-cluster assignment.

    Parameters
    ----------
    labels : ndarray of int64, shape (K,)
        The cluster of each client.
    sizes : ndarray of int64, shape (N,)
        Clients per cluster.
    ratings : ndarray of int64, shape (K,)
        The integer rating ``D_kn`` of each client's match.
    method : str
        The solver.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.cluster import lexmin_assignment
    >>> assignment = lexmin_assignment(np.array([[0, 5], [0, 5], [0, 9], [1, 2]]), lower=1, upper=3)
    >>> assignment.labels.tolist(), assignment.sizes.tolist(), assignment.method
    ([0, 0, 0, 1], [3, 1], 'lexmin_flow')
    >>> assignment.sorted_ratings.tolist()  # the vector KNOT minimises lexicographically
    [2, 0, 0, 0]
    """

    labels: np.ndarray
    sizes: np.ndarray
    ratings: np.ndarray
    method: str

    @property
    def sorted_ratings(self) -> np.ndarray:
        """The assigned ratings in non-increasing order: the vector KNOT minimises lexicographically."""
        return np.sort(self.ratings)[::-1]


def size_bounds(n_clients: int, n_clusters: int, lower: float | None = None, upper: float | None = None):
    """Integer cluster-size bounds ``⌈c2⌉ .. ⌊c3⌋``, by default KNOT's ``c2 = K/(2N)`` and ``c3 = K/2``.

    Parameters
    ----------
    n_clients : int
        ``K``.
    n_clusters : int
        ``N``.
    lower : float, optional
        ``c2``; default ``K/(2N)``.
    upper : float, optional
        ``c3``; default ``K/2``.

    Returns
    -------
    (int, int)
        The smallest and largest allowed cluster size.

    Raises
    ------
    InfeasibleAssignment
        If no partition of ``K`` clients into ``N`` clusters fits the bounds.
    TypeError
        If ``lower`` or ``upper`` is not a real number (a string, a bool).
    ValueError
        If ``lower`` or ``upper`` is NaN or infinite (for no cap, pass ``upper=K``).

    Examples
    --------
    >>> from fedlib.cluster import size_bounds
    >>> size_bounds(100, 5)
    (10, 50)
    """
    K = check_scalar(n_clients, "n_clients (K)", "int", min_val=1)
    N = check_scalar(n_clusters, "n_clusters (N)", "int", min_val=1)
    c2 = K / (2 * N) if lower is None else _finite_bound(lower, "lower (c2)")
    c3 = K / 2 if upper is None else _finite_bound(upper, "upper (c3)")
    lo, hi = max(0, math.ceil(c2 - 1e-9)), math.floor(c3 + 1e-9)
    if lo > hi or N * lo > K or N * hi < K:
        raise InfeasibleAssignment(
            f"no assignment of K={K} clients to N={N} clusters has every size in [c2, c3] = [{c2:g}, {c3:g}]: "
            f"sizes {lo}..{hi} give totals {N * lo}..{N * hi}."
        )
    return lo, hi


def _finite_bound(value, name: str) -> float:
    """A cluster-size bound as a float: a real number (``TypeError`` otherwise) that is finite."""
    value = check_scalar(value, name, "real")
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value!r}; pass upper=K (the number of clients) for no cap.")
    return value


#: The largest ``levels`` of :func:`round_ratings`: every integer up to it is exact in float64 and fits int64.
MAX_LEVELS = 2**53


def round_ratings(d, levels: int = 100) -> np.ndarray:
    """KNOT's integer ratings ``D_kn = ⌈(d_kn − d_*)/(d^* − d_*) · levels⌉`` (Sec. IV-B).

    Parameters
    ----------
    d : array-like of float, shape (K, N)
        Match ratings.
    levels : int, default=100
        The top integer (the paper's 100), in ``1..2**53``.

    Returns
    -------
    ndarray of int64, shape (K, N)
        Values in ``0..levels``; all 0 when every rating is equal.

    Raises
    ------
    TypeError
        If ``levels`` is not an int.
    ValueError
        If ``d`` is not a finite 2-D array, or ``levels`` lies outside ``1..2**53``.

    Examples
    --------
    >>> from fedlib.cluster import round_ratings
    >>> round_ratings([[0.0, 0.5], [0.26, 1.0]], levels=10).tolist()
    [[0, 5], [3, 10]]
    """
    levels = check_scalar(levels, "levels", "int", min_val=1, max_val=MAX_LEVELS)
    d = np.asarray(d, dtype=np.float64)
    if d.ndim != 2 or not np.isfinite(d).all():
        raise ValueError(f"d must be a finite (K, N) array, got shape {d.shape}.")
    span = d.max() - d.min()
    if span == 0:
        return np.zeros(d.shape, dtype=np.int64)
    return np.ceil((d - d.min()) / span * levels - 1e-9).astype(np.int64)


def _features(T, S) -> tuple[np.ndarray, np.ndarray]:
    T, S = np.asarray(T, dtype=np.float64), np.asarray(S, dtype=np.float64)
    if T.shape != S.shape or T.ndim != 1 or T.size == 0:
        raise ValueError(f"T and S must be 1-D of one length, got {T.shape} and {S.shape}.")
    return T, S


def cluster_anchors(T, S, n_clusters: int, *, anchors: str = "paper") -> tuple[np.ndarray, np.ndarray]:
    """KNOT's cluster anchors ``(T̃_n, S̃_n)``: target training times and disparities spread evenly (Sec. IV-A).

    Parameters
    ----------
    T : array-like of float, shape (K,)
        Training times.
    S : array-like of float, shape (K,)
        Model disparities in ``[0, 1]``.
    n_clusters : int
        ``N``.
    anchors : {"paper", "code"}, default="paper"
        ``"paper"``: ``T̃_n = T_* + (T^* − T_*)(n−1)/(N−1)`` and ``S̃_n = n/N``, n = 1..N (the paper
        prints ``S_*, S^*`` for the range of T; read ``T_*, T^*``), so ``S̃`` ignores where the ``S_k``
        lie; ``"code"``: Plato's ``min + (max − min)·n/N``, n = 0..N−1, for both coordinates, so no
        anchor sits at the maxima.

    Returns
    -------
    (ndarray, ndarray) of float64, shape (N,) each
        ``T̃`` and ``S̃``; anchor ``n`` pairs the ``n``-th fastest time with the ``n``-th smallest disparity.

    Examples
    --------
    >>> from fedlib.cluster import cluster_anchors
    >>> T_anchor, S_anchor = cluster_anchors([10.0, 30.0], [0.2, 0.6], 3)
    >>> T_anchor.tolist(), S_anchor.round(3).tolist()
    ([10.0, 20.0, 30.0], [0.333, 0.667, 1.0])
    """
    T, S = _features(T, S)
    N = check_scalar(n_clusters, "n_clusters (N)", "int", min_val=1)
    check_option(anchors, "anchors", ("paper", "code"))
    t_lo, t_hi = T.min(), T.max()
    if anchors == "paper":
        return t_lo + (t_hi - t_lo) * np.arange(N) / max(N - 1, 1), np.arange(1, N + 1) / N
    steps = np.arange(N) / N
    return t_lo + (t_hi - t_lo) * steps, S.min() + (S.max() - S.min()) * steps


def match_ratings(T, S, n_clusters: int, *, a: float | None = None, b: float = 1.0, anchors: str = "paper"):
    """KNOT's match ratings ``d_kn = ‖(a(T̃_n − T_k), b(S̃_n − S_k))‖₂`` against evenly spread anchors.

    Parameters
    ----------
    T : array-like of float, shape (K,)
        Training times.
    S : array-like of float, shape (K,)
        Model disparities in ``[0, 1]``.
    n_clusters : int
        ``N``.
    a : float, optional
        Weight of time; default ``1/(T^* − T_*)``, which puts both coordinates on ``[0, 1]``
        (the paper gives no value; Plato uses 1 on raw seconds).
    b : float, default=1.0
        Weight of disparity.
    anchors : {"paper", "code"}, default="paper"
        Where the anchors sit (:func:`cluster_anchors`): ``"paper"``, ``T̃_n`` from ``T_*`` to ``T^*``
        and ``S̃_n = n/N``; ``"code"``, Plato's ``min + (max − min)·n/N``, n = 0..N−1.

    Returns
    -------
    ndarray of float64, shape (K, N)
        ``d_kn``.

    Examples
    --------
    >>> from fedlib.cluster import match_ratings
    >>> match_ratings([1.0, 3.0], [0.5, 1.0], 2).round(3).tolist()
    [[0.0, 1.118], [1.118, 0.0]]
    """
    T, S = _features(T, S)
    T_anchor, S_anchor = cluster_anchors(T, S, n_clusters, anchors=anchors)
    t_lo, t_hi = T.min(), T.max()
    if a is None:
        a = 1.0 / (t_hi - t_lo) if t_hi > t_lo else 1.0
    return np.hypot(a * (T_anchor[None, :] - T[:, None]), b * (S_anchor[None, :] - S[:, None]))


def _flow(costs: list[list[int]], lo: int, hi: int) -> np.ndarray:
    """Min-cost flow source → client → cluster → sink with exact integer costs; the (K, N) 0/1 solution."""
    nx = import_optional("networkx", "assignment", feature="lexmin_assignment(method='network_simplex')")
    K, N = len(costs), len(costs[0])
    G = nx.DiGraph()
    G.add_node("source", demand=-K)
    G.add_node("sink", demand=K - N * lo)
    for n in range(N):
        G.add_node(("cluster", n), demand=lo)  # lo of its clients stay; the rest flow on to the sink
        if hi > lo:
            G.add_edge(("cluster", n), "sink", capacity=hi - lo, weight=0)
    for k in range(K):
        G.add_edge("source", ("client", k), capacity=1, weight=0)
        for n in range(N):
            G.add_edge(("client", k), ("cluster", n), capacity=1, weight=costs[k][n])
    _, flow = nx.network_simplex(G)
    return np.array([[flow[("client", k)][("cluster", n)] for n in range(N)] for k in range(K)], dtype=np.int64)


def _successive_shortest_paths(costs: list[list[int]], lo: int, hi: int) -> np.ndarray:
    """Min-cost assignment of K clients to N clusters with sizes in [lo, hi]; the cluster of each client.

    Successive shortest paths, one client at a time, on the residual graph condensed to the cluster nodes plus
    a sink ``T``. Potentials ``pi`` keep every reduced cost ``c(u, v) − pi(u) + pi(v)`` non-negative; the ``lo``
    first seats of a cluster cost ``−M`` (``M`` beats any sum of K costs), so lower bounds are met whenever the
    bounds are feasible. Exact for any integer costs.
    """
    K, N = len(costs), len(costs[0])
    M = (max(max(row) for row in costs) - min(min(row) for row in costs) + 1) * (K + 1)
    T = N
    pi = [0] * N + [M]
    size = [0] * N
    cluster_of = [-1] * K
    moves = [[[] for _ in range(N)] for _ in range(N)]  # moves[n][m]: heap of (c_jm − c_jn, j) for members j of n

    def cheapest_move(n: int, m: int):
        heap = moves[n][m]
        while heap and cluster_of[heap[0][1]] != n:  # lazy deletion of clients who left n
            heapq.heappop(heap)
        return heap[0] if heap else None

    def seat(j: int, n: int) -> None:
        cluster_of[j] = n
        row = costs[j]
        for m in range(N):
            if m != n:
                heapq.heappush(moves[n][m], (row[m] - row[n], j))

    for k in range(K):
        row = costs[k]
        dist: list[int | None] = [row[n] + pi[n] for n in range(N)] + [None]
        pred: list[tuple[int, int | None] | None] = [None] * (N + 1)
        settled = [False] * (N + 1)
        while True:
            v, best = -1, None
            for u in range(N + 1):
                if not settled[u] and dist[u] is not None and (best is None or dist[u] < best):
                    v, best = u, dist[u]
            if v in (T, -1):
                break
            settled[v] = True
            if size[v] < hi:
                label = best + (-M if size[v] < lo else 0) - pi[v] + pi[T]
                if dist[T] is None or label < dist[T]:
                    dist[T], pred[T] = label, (v, None)
            for m in range(N):
                if m != v and not settled[m]:
                    move = cheapest_move(v, m)
                    if move is not None:
                        label = best + move[0] - pi[v] + pi[m]
                        if dist[m] is None or label < dist[m]:
                            dist[m], pred[m] = label, (v, move[1])
        to_sink = dist[T]
        if to_sink is None:
            raise InfeasibleAssignment(f"client {k} cannot be seated: every cluster is full (c3 = {hi}).")
        for u in range(N + 1):
            pi[u] -= dist[u] if dist[u] is not None and dist[u] < to_sink else to_sink
        v = pred[T][0]
        size[v] += 1
        while pred[v] is not None:  # walk back: each moved client goes one cluster down the path
            previous, client = pred[v]
            seat(client, v)
            v = previous
        seat(k, v)
    if min(size) < lo:
        raise InfeasibleAssignment(f"cluster sizes {size} miss the lower bound c2 = {lo}.")
    return np.asarray(cluster_of, dtype=np.int64)


def _paper_lp(D: np.ndarray, lo: int, hi: int) -> np.ndarray:
    """The paper's λ-LP in floating point (GLOP): weights (KN)^D as floats, to show how it fails."""
    feature = "lexmin_assignment(method='paper_lp')"
    pywraplp = import_optional("ortools.linear_solver.pywraplp", "assignment", feature=feature)
    K, N = D.shape
    with np.errstate(over="ignore"):
        weights = np.power(float(K * N), D.astype(np.float64))  # inf past float64's range
    if not np.isfinite(weights).all():
        raise OverflowError(
            f"the paper's weights (KN)^D_kn reach {K * N}^{int(D.max())} = 10^{int(D.max()) * math.log10(K * N):.1f}, "
            "past float64's largest value 1.8e308: the LP cannot even be written down."
        )
    solver = pywraplp.Solver.CreateSolver("GLOP")
    x = [[solver.NumVar(0.0, 1.0, f"x_{k}_{n}") for n in range(N)] for k in range(K)]
    for k in range(K):
        solver.Add(sum(x[k]) == 1)
    for n in range(N):
        column = sum(x[k][n] for k in range(K))
        solver.Add(column >= lo)
        solver.Add(column <= hi)
    solver.Minimize(sum(float(weights[k, n]) * x[k][n] for k in range(K) for n in range(N)))
    status = solver.Solve()
    if status != pywraplp.Solver.OPTIMAL:
        raise ArithmeticError(f"GLOP did not solve the paper's LP in floating point (status {status}).")
    values = np.array([[x[k][n].solution_value() for n in range(N)] for k in range(K)])
    return np.rint(values).astype(np.int64)


def lexmin_assignment(
    D,
    *,
    lower: float | None = None,
    upper: float | None = None,
    method: str = "lexmin_flow",
) -> Assignment:
    """Assign each client to one cluster, lexicographically minimising the sorted ratings (KNOT, problem (1)-(6)).

    Parameters
    ----------
    D : array-like of int, shape (K, N)
        Integer match ratings ``D_kn >= 0`` (:func:`round_ratings`); smaller is better.
    lower : float, optional
        ``c2``, the fewest clients per cluster; default ``K/(2N)``.
    upper : float, optional
        ``c3``, the most clients per cluster; default ``K/2``.
    method : {"lexmin_flow", "minsum_flow", "network_simplex", "paper_lp"}, default="lexmin_flow"
        ``"lexmin_flow"``: exact lexicographic minimum, a min-cost flow with integer costs
        ``(K+1)^{r_kn}`` by successive shortest paths, ``r_kn`` the rank of ``D_kn`` among the
        distinct ratings (the lexicographic order depends only on the ratings' order); ``"minsum_flow"``: minimum of
        ``Σ D_kn x_kn`` (what Plato's code means to solve), same solver; ``"network_simplex"``:
        the lexicographic minimum by networkx's network simplex (slower; a cross-check);
        ``"paper_lp"``: the paper's LP with float weights ``(KN)^{D_kn}`` (fails for realistic
        sizes, kept to show it).

    Returns
    -------
    Assignment
        Labels, sizes and assigned ratings.

    Raises
    ------
    InfeasibleAssignment
        If the size bounds admit no assignment.
    TypeError
        If ``lower`` or ``upper`` is not a real number.
    ValueError
        If ``D`` is not a non-negative integer matrix, or ``lower`` or ``upper`` is NaN or infinite.
    OverflowError, ArithmeticError
        ``"paper_lp"`` only: weights past float64, or a solver failure.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.cluster import lexmin_assignment
    >>> D = np.array([[0, 5], [0, 5], [0, 9], [1, 2]])
    >>> lexmin_assignment(D, lower=1, upper=3).labels.tolist()  # cluster 1 needs a client: the cheapest is 3's 2
    [0, 0, 0, 1]
    """
    D = np.asarray(D)
    if D.ndim != 2 or D.size == 0 or not np.issubdtype(D.dtype, np.integer) or (D < 0).any():
        raise ValueError("D must be a non-empty (K, N) array of non-negative integers (see round_ratings).")
    check_option(method, "method", ASSIGNMENT_METHODS)
    K, N = D.shape
    lo, hi = size_bounds(K, N, lower, upper)
    base = K + 1  # any base >= K orders sums of K powers like sorted vectors (the Lemma); K + 1 also at K = 1
    # The lexicographic order of sorted vectors depends only on the order of the ratings: weigh each rating's
    # rank among the distinct values, not the rating, so the exponents stay below K·N whatever the ratings.
    ranks = np.unique(D, return_inverse=True)[1].reshape(D.shape).tolist()
    if method == "paper_lp":
        x = _paper_lp(D, lo, hi)
    elif method == "network_simplex":
        x = _flow([[base**v for v in row] for row in ranks], lo, hi)
    else:
        costs = [[base**v for v in row] for row in ranks] if method == "lexmin_flow" else D.tolist()
        labels = _successive_shortest_paths(costs, lo, hi)
        x = np.zeros((K, N), dtype=np.int64)
        x[np.arange(K), labels] = 1
    labels = x.argmax(axis=1).astype(np.int64)
    if not (x.sum(axis=1) == 1).all():
        raise ArithmeticError(f"{method} returned a fractional or partial assignment.")
    return Assignment(
        labels=labels,
        sizes=np.bincount(labels, minlength=N).astype(np.int64),
        ratings=D[np.arange(K), labels].astype(np.int64),
        method=method,
    )


def assignment_constraints(n_clients: int, n_clusters: int, *, conflicts=()):
    """KNOT's constraint matrix ``A = [A_1; −A_1; A_2; −A_2]`` of problem (8), ``A x ≤ b`` (Sec. IV-C, Part B).

    Column ``j = k·N + n`` is the pair (client ``k``, cluster ``n``), the order of ``x.ravel()`` for an
    ``x`` of shape (K, N). ``A_1`` (K rows) has a 1 where the pair's client is the row's: rows ``0..K−1``
    bound ``Σ_n x_kn ≤ c_1`` and rows ``K..2K−1`` give ``Σ_n x_kn ≥ 1``. ``A_2`` (N rows) does the same
    for clusters: rows ``2K..2K+N−1`` bound sizes by ``c_3``, rows ``2K+N..2K+2N−1`` by ``c_2``. Such a
    matrix, the incidence matrix of a bipartite graph stacked with its negative, is totally unimodular.

    Parameters
    ----------
    n_clients : int
        ``K``.
    n_clusters : int
        ``N``.
    conflicts : sequence of ((int, int), (int, int)), default=()
        Side constraints outside KNOT's model, one row ``x_kn + x_k'n' ≤ 1`` per pair of (client,
        cluster) pairs ("these two placements exclude each other"), appended below ``A``. With
        ``((k, n'), (k', n))``, ``k ≠ k'``, ``n ≠ n'``, the rows of client ``k`` and cluster ``n`` and the
        conflict row hold a 3×3 submatrix of determinant 2: the control that is *not* totally unimodular.

    Returns
    -------
    scipy.sparse.csr_array of int64, shape (2K + 2N + len(conflicts), K·N)
        ``A``.

    Raises
    ------
    ValueError
        If a conflict names a client or cluster out of range, or the same pair twice.

    Examples
    --------
    >>> from fedlib.cluster import assignment_constraints
    >>> A = assignment_constraints(2, 2).toarray()
    >>> A[:2].tolist(), A[4:6].tolist()  # A_1 (clients) and A_2 (clusters); the other rows are their negatives
    ([[1, 1, 0, 0], [0, 0, 1, 1]], [[1, 0, 1, 0], [0, 1, 0, 1]])
    """
    K = check_scalar(n_clients, "n_clients (K)", "int", min_val=1)
    N = check_scalar(n_clusters, "n_clusters (N)", "int", min_val=1)
    pairs = np.arange(K * N)
    client, cluster = pairs // N, pairs % N
    rows = [client, K + client, 2 * K + cluster, 2 * K + N + cluster]
    values = [np.ones(K * N), -np.ones(K * N), np.ones(K * N), -np.ones(K * N)]
    cols = [pairs] * 4
    for i, conflict in enumerate(conflicts):
        ends = [(int(k), int(n)) for k, n in conflict]
        if len(ends) != 2 or ends[0] == ends[1] or any(not (0 <= k < K and 0 <= n < N) for k, n in ends):
            raise ValueError(f"conflict {conflict!r} must name two different (client, cluster) pairs of K={K}, N={N}.")
        rows.append(np.full(2, 2 * K + 2 * N + i))
        cols.append(np.array([k * N + n for k, n in ends]))
        values.append(np.ones(2))
    shape = (2 * K + 2 * N + len(conflicts), K * N)
    A = sparse.csr_array(
        (np.concatenate(values).astype(np.int64), (np.concatenate(rows), np.concatenate(cols))), shape=shape
    )
    A.sum_duplicates()
    return A


def integer_determinant(M) -> int:
    """The exact determinant of a square integer matrix, by Bareiss's fraction-free elimination on Python ints.

    Every intermediate value is itself a minor of ``M`` and every division is exact, so the result has
    no rounding error whatever its size (``numpy.linalg.det`` works in float64 and returns, e.g.,
    ``0.9999999999999998`` for a unimodular matrix, or loses digits past ``2^53``).

    Parameters
    ----------
    M : array-like of int, shape (n, n)
        The matrix (a scipy sparse matrix is accepted).

    Returns
    -------
    int
        ``det M`` (1 for an empty matrix).

    Raises
    ------
    ValueError
        If ``M`` is not square or holds non-integers.

    Examples
    --------
    >>> from fedlib.cluster import integer_determinant
    >>> integer_determinant([[1, 1, 0], [0, 1, 1], [1, 0, 1]])
    2
    """
    if hasattr(M, "toarray"):
        M = M.toarray()
    M = np.asarray(M)
    if M.ndim != 2 or M.shape[0] != M.shape[1]:
        raise ValueError(f"M must be a square matrix, got shape {M.shape}.")
    integral = np.issubdtype(M.dtype, np.integer) or np.issubdtype(M.dtype, np.bool_)
    if M.size and not (integral or all(isinstance(v, (int, np.integer)) for v in M.ravel())):
        raise ValueError(f"M must hold integers, got dtype {M.dtype}.")
    a = [[int(v) for v in row] for row in M.tolist()]
    n, sign, previous = len(a), 1, 1
    for k in range(n - 1):
        if a[k][k] == 0:
            swap = next((i for i in range(k + 1, n) if a[i][k] != 0), None)
            if swap is None:
                return 0
            a[k], a[swap] = a[swap], a[k]
            sign = -sign
        pivot = a[k][k]
        for i in range(k + 1, n):
            row, factor = a[i], a[i][k]
            for j in range(k + 1, n):
                row[j] = (row[j] * pivot - factor * a[k][j]) // previous
        previous = pivot
    return sign * a[n - 1][n - 1] if n else 1


@dataclass(frozen=True)
class SubdeterminantSample:
    """Determinants of square submatrices of one matrix (:func:`sample_subdeterminants`).

    Parameters
    ----------
    sizes : ndarray of int64, shape (m,)
        The order of each submatrix.
    determinants : ndarray of int64 (object if a value exceeds int64), shape (m,)
        Their exact determinants.
    exhaustive : bool
        Whether these are all square submatrices up to the largest size, not a sample.

    Examples
    --------
    >>> from fedlib.cluster import assignment_constraints, sample_subdeterminants
    >>> sample = sample_subdeterminants(assignment_constraints(2, 2), max_size=2)
    >>> sample.exhaustive, sample.sizes.size, sample.counts, sample.unimodular
    (True, 200, {-1: 42, 0: 104, 1: 54}, True)
    """

    sizes: np.ndarray
    determinants: np.ndarray
    exhaustive: bool

    @property
    def unimodular(self) -> bool:
        """Whether every determinant lies in ``{−1, 0, 1}`` (all of them: total unimodularity up to that size)."""
        return bool(all(-1 <= int(v) <= 1 for v in self.determinants))

    @property
    def counts(self) -> dict[int, int]:
        """How often each determinant value occurs, by value."""
        values, counts = np.unique(np.asarray([int(v) for v in self.determinants], dtype=object), return_counts=True)
        return {int(v): int(c) for v, c in zip(values, counts, strict=True)}


def _grow(touching: np.ndarray, chosen: list[int], rng: np.random.Generator) -> int:
    """A random index with ``touching`` true and not yet chosen (any unchosen index if there is none)."""
    free = np.ones(touching.size, dtype=bool)
    free[chosen] = False
    candidates = np.flatnonzero(touching & free)
    if candidates.size == 0:
        candidates = np.flatnonzero(free)
    return int(rng.choice(candidates))


def sample_subdeterminants(
    A, *, max_size: int, n_samples: int | None = None, random_state: SeedLike = None, max_exhaustive: int = 200_000
) -> SubdeterminantSample:
    """Exact determinants of square submatrices of ``A``: all of them, or a random sample, to test total unimodularity.

    A matrix is totally unimodular when every square submatrix has determinant −1, 0 or 1. Without
    ``n_samples`` every square submatrix of order ``1..max_size`` is checked (a proof up to that order,
    for small matrices). With it, each sample draws an order ``s`` uniformly from ``1..max_size`` and
    grows a *connected* submatrix from a random non-zero entry: it adds, in turn, a random row with a
    non-zero in the chosen columns and a random column with a non-zero in the chosen rows (any unused
    row or column when there is none). Uniform rows and columns of a sparse matrix would give almost
    only zero determinants, and a disconnected submatrix's determinant is the product of its blocks'
    anyway. Determinants are exact (:func:`integer_determinant`).

    Parameters
    ----------
    A : array-like or scipy sparse matrix of int, shape (m, n)
        The matrix.
    max_size : int
        The largest order, at most ``min(m, n)``.
    n_samples : int, optional
        Random submatrices; all of them when omitted.
    random_state : int, numpy.random.Generator or None, default=None
        The sample's seed.
    max_exhaustive : int, default=200_000
        The most submatrices an exhaustive check may enumerate.

    Returns
    -------
    SubdeterminantSample
        Orders and determinants.

    Raises
    ------
    ValueError
        If ``max_size`` is out of range, or an exhaustive check would exceed ``max_exhaustive``.

    Examples
    --------
    >>> from fedlib.cluster import assignment_constraints, sample_subdeterminants
    >>> sample_subdeterminants(assignment_constraints(2, 2), max_size=4).unimodular
    True
    >>> sample_subdeterminants(assignment_constraints(2, 2, conflicts=[((0, 1), (1, 0))]), max_size=3).counts
    {-2: 4, -1: 154, 0: 266, 1: 160, 2: 4}
    """
    dense = np.asarray(A.toarray() if hasattr(A, "toarray") else A)
    if dense.ndim != 2 or not np.issubdtype(dense.dtype, np.integer):
        raise ValueError(f"A must be a 2-D integer matrix, got shape {dense.shape} and dtype {dense.dtype}.")
    m, n = dense.shape
    top = check_scalar(max_size, "max_size", "int", min_val=1, max_val=min(m, n))
    sizes: list[int] = []
    dets: list[int] = []
    if n_samples is None:
        total = sum(math.comb(m, s) * math.comb(n, s) for s in range(1, top + 1))
        if total > max_exhaustive:
            raise ValueError(
                f"{total} square submatrices of order up to {top} in a {m}x{n} matrix: more than "
                f"max_exhaustive={max_exhaustive}; pass n_samples or a smaller max_size."
            )
        for s in range(1, top + 1):
            for rows in itertools.combinations(range(m), s):
                block = dense[list(rows)]
                for cols in itertools.combinations(range(n), s):
                    sizes.append(s)
                    dets.append(integer_determinant(block[:, list(cols)]))
    else:
        n_samples = check_scalar(n_samples, "n_samples", "int", min_val=1)
        rng = check_random_state(random_state)
        nonzero = dense != 0
        entries = np.argwhere(nonzero)
        if entries.size == 0:
            raise ValueError("A has no non-zero entry: every determinant is 0.")
        for _ in range(n_samples):
            s = int(rng.integers(1, top + 1))
            r0, c0 = entries[rng.integers(len(entries))]
            rows, cols = [int(r0)], [int(c0)]
            while len(rows) < s:
                rows.append(_grow(nonzero[:, cols].any(axis=1), rows, rng))
                cols.append(_grow(nonzero[rows].any(axis=0), cols, rng))
            sizes.append(s)
            dets.append(integer_determinant(dense[np.ix_(rows, cols)]))
    fits = all(-(2**63) <= d < 2**63 for d in dets)
    return SubdeterminantSample(
        sizes=np.asarray(sizes, dtype=np.int64),
        determinants=np.asarray(dets, dtype=np.int64 if fits else object),
        exhaustive=n_samples is None,
    )


def _zero_one(x, shape: tuple[int, int]) -> np.ndarray:
    x = np.asarray(x)
    if x.shape == (shape[0],):  # cluster labels
        labels = x.astype(np.int64)
        if (labels < 0).any() or (labels >= shape[1]).any() or not np.array_equal(labels, x):
            raise ValueError(f"labels must be integers in 0..{shape[1] - 1}.")
        x = np.zeros(shape, dtype=np.int64)
        x[np.arange(shape[0]), labels] = 1
    if x.shape != shape:
        raise ValueError(f"x must have shape {shape} (or be {shape[0]} cluster labels), got {x.shape}.")
    return x


def separable_objective(D, x, *, base: int | None = None) -> int:
    """KNOT's separable surrogate ``Σ_k Σ_n base^{D_kn x_kn}`` of an integral assignment, exactly (Sec. IV-C, Part A).

    For integer ratings, comparing these sums compares the sorted vectors ``⟨(D_kn x_kn)⟩``
    lexicographically (Meyer's lemma) as long as ``base`` is at least the vector's length ``K·N``.

    Parameters
    ----------
    D : array-like of int, shape (K, N)
        Integer ratings.
    x : array-like of {0, 1}, shape (K, N), or array-like of int, shape (K,)
        The assignment, as a 0/1 matrix or as each client's cluster.
    base : int, optional
        Default ``K·N``, the paper's.

    Returns
    -------
    int
        The exact sum, a Python integer.

    Raises
    ------
    ValueError
        If ``x`` is not 0/1 or has the wrong shape.

    Examples
    --------
    >>> from fedlib.cluster import separable_objective
    >>> separable_objective([[2, 0], [1, 3]], [0, 0])  # (KN)^2 + (KN)^0 + (KN)^1 + (KN)^0 with KN = 4
    22
    """
    D = np.asarray(D)
    if D.ndim != 2 or not np.issubdtype(D.dtype, np.integer) or (D < 0).any():
        raise ValueError("D must be a (K, N) array of non-negative integers.")
    x = _zero_one(x, D.shape)
    if not np.isin(x, (0, 1)).all():
        raise ValueError("x must be 0/1: base^(D x) is the paper's objective only for integral x.")
    b = D.size if base is None else check_scalar(base, "base", "int", min_val=2)
    return sum(b ** int(v) for v in (D * x).ravel().tolist())


def lambda_lp_objective(D, x, *, base: int | None = None):
    """The objective of Meyer's λ-LP at ``x``, exactly: ``Σ λ⁰_kn + base^{D_kn} λ¹_kn`` with ``λ¹ = x``, ``λ⁰ = 1 − x``.

    The paper prints the coefficient of ``λ¹_kn`` as ``(KN)^{D_kn x_kn}``, which makes the "LP"
    nonlinear; with ``(KN)^{D_kn}`` it is ``K·N + Σ (base^{D_kn} − 1) x_kn``, a linear transportation
    objective, and on integral ``x`` it equals :func:`separable_objective`.

    Parameters
    ----------
    D : array-like of int, shape (K, N)
        Integer ratings.
    x : array-like of float, shape (K, N), or array-like of int, shape (K,)
        A point of the LP (entries in ``[0, 1]``; floats are taken at their exact binary value), or
        each client's cluster.
    base : int, optional
        Default ``K·N``, the paper's.

    Returns
    -------
    int or fractions.Fraction
        The exact value; an ``int`` when ``x`` is integral.

    Raises
    ------
    ValueError
        If an entry of ``x`` is outside ``[0, 1]`` or ``x`` has the wrong shape.

    Examples
    --------
    >>> from fedlib.cluster import lambda_lp_objective
    >>> lambda_lp_objective([[2, 0], [1, 3]], [0, 0])
    22
    >>> lambda_lp_objective([[2, 0], [1, 3]], [[0.5, 0.5], [1, 0]])
    Fraction(29, 2)
    """
    D = np.asarray(D)
    if D.ndim != 2 or not np.issubdtype(D.dtype, np.integer) or (D < 0).any():
        raise ValueError("D must be a (K, N) array of non-negative integers.")
    x = _zero_one(x, D.shape)
    b = D.size if base is None else check_scalar(base, "base", "int", min_val=2)
    total = Fraction(0)
    for d, value in zip(D.ravel().tolist(), x.ravel().tolist(), strict=True):
        lam1 = Fraction(value)
        if not 0 <= lam1 <= 1:
            raise ValueError(f"x must lie in [0, 1], got {value}.")
        total += (1 - lam1) + b**d * lam1
    return int(total) if total.denominator == 1 else total
