"""Drivers of the chapter on KNOT's client-to-cluster assignment (Su & Li, INFOCOM 2023, Sec. IV).

The clients' features come from a real profiling round (:func:`profile_mnist`: LeNet-5 on the MNIST test set,
split over the clients by a per-class Dirichlet draw; training times from Plato's latency model). Every
algorithm is in :mod:`fedlib.cluster` (anchors, ratings, the exact lexicographic assignment, the constraint
matrix, exact determinants, the surrogate objectives); every published value in :mod:`fedbook.papers.knot`.
The functions here arrange the runs into DataFrames, time the solvers and compute the verdicts.
"""

from __future__ import annotations

import itertools
import math
import re
import sys
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd

from fedbook.papers import knot as paper
from fedlib import data
from fedlib.cluster import (
    Assignment,
    assignment_constraints,
    cluster_anchors,
    lambda_lp_objective,
    lexmin_assignment,
    match_ratings,
    round_ratings,
    sample_subdeterminants,
    separable_objective,
    size_bounds,
)
from fedlib.learn import LocalSGD, get_flat, make_model, pareto_training_times, profile_clients
from fedlib.utils import SeedLike, check_random_state

#: Meyer's lemma fails for real vectors: α = (0.5, 0.5) is lexicographically smaller than β = (0.6, 0),
#: yet φ(α) = 2·2^0.5 > φ(β) = 2^0.6 + 1 (our counterexample, with the vectors' length n = 2 as the base).
MEYER_COUNTEREXAMPLE = ((0.5, 0.5), (0.6, 0.0))

#: Local training of the profiling round: Plato's LeNet-5 configuration for MNIST in KNOT's example
#: (``examples/unlearning/knot/knot_mnist_lenet5.yml``: SGD, lr 0.01, momentum 0.9, batch 32, one epoch).
PLATO_LOCAL_SGD = LocalSGD(lr=0.01, momentum=0.9, batch_size=32, epochs=1)

#: The rows of :func:`method_table`: (label, c2 rule, solver), in display order.
METHOD_ROWS = (
    ("lexmin_flow (exact, ours)", "paper", "lexmin_flow"),
    ("network_simplex (exact, cross-check)", "paper", "network_simplex"),
    ("minsum_flow (min Σ D)", "paper", "minsum_flow"),
    ("paper_lp (the paper's λ-LP in float64, GLOP)", "paper", "paper_lp"),
    ("lexmin_flow, balanced c2 = K/N", "plato", "lexmin_flow"),
    ("Plato's LP as intended (min Σ d, c2 = K/N)", "plato", "plato_min"),
    ("Plato's LP as published (max Σ d, c2 = K/N)", "plato", "plato_max"),
)

#: Resolution of the float ratings that stand in for Plato's LP on raw distances ``d``.
FINE_LEVELS = 10**6


def plato_lower(n_clients: int, n_clusters: int) -> float:
    """Plato's smallest cluster size ``K/N`` (``workload_min`` in ``knot_server.py``): balanced clusters."""
    return n_clients / n_clusters


# --- the profiled clients -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ProfiledClients:
    """KNOT's features of ``K`` clients from one profiling round (Sec. IV-A).

    Parameters
    ----------
    times : ndarray of float64, shape (K,)
        ``T_k``, simulated seconds (Plato's latency model, :func:`fedlib.learn.pareto_training_times`).
    disparity : ndarray of float64, shape (K,)
        ``S_k = (1 − Θ(ω_1 − ω_0, Δ_k))/2``: the paper's sign, corrected (small = representative).
    similarity : ndarray of float64, shape (K,)
        Plato's ``(1 + Θ(ω_1 − ω_0, Δ_k))/2`` with ``Δ_k`` from a second round (large = representative).
    n_samples : ndarray of int64, shape (K,)
        Images per client.
    label_skew : ndarray of float64, shape (K,)
        Total-variation distance between a client's label histogram and the whole data's.
    source : str
        Data set, split and model, in words.
    is_standin : bool
        Whether the data are a stand-in for MNIST.
    """

    times: np.ndarray
    disparity: np.ndarray
    similarity: np.ndarray
    n_samples: np.ndarray
    label_skew: np.ndarray
    source: str
    is_standin: bool

    @property
    def n_clients(self) -> int:
        """``K``."""
        return int(self.times.size)

    def frame(self) -> pd.DataFrame:
        """One row per client: ``T_k``, both disparities, size and label skew."""
        return pd.DataFrame(
            {
                "T_k (s)": self.times,
                "S_k (paper, corrected)": self.disparity,
                "S_k (Plato: similarity)": self.similarity,
                "images": self.n_samples,
                "label skew (TV)": self.label_skew,
            }
        ).rename_axis("client")


def profile_mnist(
    n_clients: int,
    *,
    n_images: int | None = None,
    dirichlet: float = float(paper.FIG4_SETUP["dirichlet"]),
    model: str = "lenet5",
    local: LocalSGD = PLATO_LOCAL_SGD,
    min_size: int = 10,
    random_state: SeedLike = 0,
) -> ProfiledClients:
    """Profile ``K`` clients holding the MNIST test set as KNOT does before clustering (Sec. IV-A).

    The images (all, or a uniform subsample of ``n_images``) are split by a per-class Dirichlet draw
    (the paper's Fig. 4 concentration by default); ``T_k`` comes from Plato's latency model with the
    paper's Pareto index; ``S_k`` from one real round of local training of LeNet-5 from a random
    ``ω_0`` (:func:`fedlib.learn.profile_clients`), once with the paper's sign and once as Plato computes it.

    Parameters
    ----------
    n_clients : int
        ``K``.
    n_images : int, optional
        Use a uniform subsample of this many images (all 10,000 by default).
    dirichlet : float, default=paper.FIG4_SETUP["dirichlet"]
        Concentration of the split.
    model : str, default="lenet5"
        The architecture (:func:`fedlib.learn.make_model`).
    local : LocalSGD, default=PLATO_LOCAL_SGD
        Local training.
    min_size : int, default=10
        Fewest images per client.
    random_state : int, numpy.random.Generator or None, default=0
        The subsample, split, times, model and training.

    Returns
    -------
    ProfiledClients
        The features.
    """
    rng = check_random_state(random_state)
    full = data.load_or_standin("mnist_test", random_state=rng)
    X, y = data.image_array(full), np.asarray(full.y, dtype=np.int64)
    if n_images is not None and n_images < y.size:
        keep = np.sort(rng.choice(y.size, size=n_images, replace=False))
        X, y = X[keep], y[keep]
    clients = data.dirichlet_partition(y, n_clients, dirichlet, min_size=min_size, random_state=rng)
    times = pareto_training_times(n_clients, alpha=paper.PARETO_ALPHA, random_state=rng)
    net = make_model(model, int(y.max()) + 1, input_shape=X.shape[1:], random_state=int(rng.integers(2**31)))
    start = get_flat(net)
    seed = int(rng.integers(2**31))
    features = {
        variant: profile_clients(
            net, start, X, y, clients, training_times=times, local=local, variant=variant, random_state=seed
        )
        for variant in ("paper", "plato")
    }
    overall = np.bincount(y, minlength=int(y.max()) + 1) / y.size
    skew = np.array([0.5 * np.abs(np.bincount(y[c], minlength=overall.size) / c.size - overall).sum() for c in clients])
    return ProfiledClients(
        times=times,
        disparity=features["paper"].disparity,
        similarity=features["plato"].disparity,
        n_samples=np.array([c.size for c in clients], dtype=np.int64),
        label_skew=skew,
        source=(
            f"{full.name}{' (stand-in)' if full.is_standin else ''}: {y.size} images split over {n_clients} clients "
            f"by a per-class Dirichlet({dirichlet:g}) draw; {model}, one local epoch (lr {local.lr:g}, "
            f"momentum {local.momentum:g}, batch {local.batch_size})"
        ),
        is_standin=bool(full.is_standin),
    )


def feature_summary(clients: ProfiledClients, *, n_clusters: int = paper.N_CLUSTERS) -> pd.Series:
    """Facts about the profiled features that the chapter states: ranges, correlations, anchors.

    Parameters
    ----------
    clients : ProfiledClients
        The features.
    n_clusters : int, default=paper.N_CLUSTERS
        ``N``.

    Returns
    -------
    pandas.Series
        Ranges of ``T_k`` and of both ``S_k``; the Spearman correlations of the paper's ``S_k`` with the
        label skew and with Plato's similarity; the number of the paper's disparity anchors ``S̃_n = n/N``
        above every client's ``S_k``; the share of clients within 10% of the range above the fastest.
    """
    from scipy.stats import spearmanr

    T, S = clients.times, clients.disparity
    _, S_anchor = cluster_anchors(T, S, n_clusters)
    return pd.Series(
        {
            "K": clients.n_clients,
            "T min (s)": float(T.min()),
            "T max (s)": float(T.max()),
            "S min": float(S.min()),
            "S max": float(S.max()),
            "similarity min": float(clients.similarity.min()),
            "similarity max": float(clients.similarity.max()),
            "Spearman(S, label skew)": float(spearmanr(S, clients.label_skew).statistic),
            "Spearman(S, similarity)": float(spearmanr(S, clients.similarity).statistic),
            "anchors S̃ above every S_k": int((S_anchor > S.max()).sum()),
            "share of T within 10% of the range above T_*": float(np.mean(T <= T.min() + 0.1 * (T.max() - T.min()))),
        }
    )


# --- one assignment -------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AssignedInstance:
    """One client-to-cluster assignment with everything that produced it.

    Parameters
    ----------
    times, disparity : ndarray of float64, shape (K,)
        The features used (``disparity`` is whichever ``S_k`` the setting uses).
    T_anchor, S_anchor : ndarray of float64, shape (N,)
        The anchors.
    d : ndarray of float64, shape (K, N)
        Match ratings.
    D : ndarray of int64, shape (K, N)
        Integer ratings ``0..100``.
    assignment : Assignment
        The solution.
    lower, upper : int
        The integer cluster-size bounds.
    seconds : float
        Solver time.
    """

    times: np.ndarray
    disparity: np.ndarray
    T_anchor: np.ndarray
    S_anchor: np.ndarray
    d: np.ndarray
    D: np.ndarray
    assignment: Assignment
    lower: int
    upper: int
    seconds: float

    @property
    def labels(self) -> np.ndarray:
        """Each client's cluster (cluster ``n`` is anchor ``n``: the ``n``-th fastest)."""
        return self.assignment.labels

    def client_order(self) -> np.ndarray:
        """Clients sorted by cluster, then by training time: the rows of the heat maps."""
        return np.lexsort((self.times, self.labels))


def assign_clients(
    times,
    disparity,
    *,
    n_clusters: int = paper.N_CLUSTERS,
    anchors: str = "paper",
    a: float | None = None,
    b: float = 1.0,
    c2: str | float = "paper",
    method: str = "lexmin_flow",
) -> AssignedInstance:
    """Anchors, ratings and one solver on given features.

    Parameters
    ----------
    times, disparity : array-like of float, shape (K,)
        ``T_k`` and ``S_k``.
    n_clusters : int, default=paper.N_CLUSTERS
        ``N``.
    anchors : {"paper", "code"}, default="paper"
        :func:`fedlib.cluster.cluster_anchors`.
    a : float, optional
        Weight of time in ``d_kn``; default ``1/(T^* − T_*)`` (Plato: 1).
    b : float, default=1.0
        Weight of disparity.
    c2 : {"paper", "plato"} or float, default="paper"
        Smallest cluster size: ``K/(2N)`` (the paper), ``K/N`` (Plato) or a number.
    method : str, default="lexmin_flow"
        A method of :func:`fedlib.cluster.lexmin_assignment`, or ``"plato_min"`` / ``"plato_max"``:
        min-sum / max-sum of the raw ratings ``d`` (Plato's LP as meant / as published), solved as a
        min-sum flow on ratings rounded to ``1/FINE_LEVELS`` of their range.

    Returns
    -------
    AssignedInstance
        The assignment and its inputs.
    """
    T, S = np.asarray(times, dtype=np.float64), np.asarray(disparity, dtype=np.float64)
    K = T.size
    lower = {"paper": paper.c2(K, n_clusters), "plato": plato_lower(K, n_clusters)}.get(c2, c2)
    T_anchor, S_anchor = cluster_anchors(T, S, n_clusters, anchors=anchors)
    d = match_ratings(T, S, n_clusters, a=a, b=b, anchors=anchors)
    D = round_ratings(d, levels=paper.RATING_LEVELS)
    lo, hi = size_bounds(K, n_clusters, lower, paper.c3(K, n_clusters))
    start = time.perf_counter()
    if method in ("plato_min", "plato_max"):
        fine = round_ratings(d, levels=FINE_LEVELS)
        costs = fine if method == "plato_min" else FINE_LEVELS - fine
        solved = lexmin_assignment(costs, lower=lower, upper=paper.c3(K, n_clusters), method="minsum_flow")
        solved = Assignment(solved.labels, solved.sizes, D[np.arange(K), solved.labels], method)
    else:
        solved = lexmin_assignment(D, lower=lower, upper=paper.c3(K, n_clusters), method=method)
    seconds = time.perf_counter() - start
    return AssignedInstance(T, S, T_anchor, S_anchor, d, D, solved, lo, hi, seconds)


def _lex_compare(ours: np.ndarray, reference: np.ndarray) -> str:
    a, b = tuple(ours.tolist()), tuple(reference.tolist())
    return "equal" if a == b else ("worse" if a > b else "better")


def method_table(clients: ProfiledClients, *, n_clusters: int = paper.N_CLUSTERS, top: int = 6) -> pd.DataFrame:
    """Every solver on the profiled clients (paper's anchors and sign), set against the exact lexmin.

    Parameters
    ----------
    clients : ProfiledClients
        The features.
    n_clusters : int, default=paper.N_CLUSTERS
        ``N``.
    top : int, default=6
        How many of the largest assigned ratings to list.

    Returns
    -------
    pandas.DataFrame
        One row per :data:`METHOD_ROWS` entry: bounds, status (the float LP's error), seconds, sizes,
        the largest ratings, their sum, and the sorted ratings against the lexmin's.
    """
    rows, reference = [], None
    K = clients.n_clients
    for label, c2, method in METHOD_ROWS:
        lower = paper.c2(K, n_clusters) if c2 == "paper" else plato_lower(K, n_clusters)
        lo, _ = size_bounds(K, n_clusters, lower, paper.c3(K, n_clusters))
        row = {"method": label, "c2": f"{lo} ({'K/(2N)' if c2 == 'paper' else 'K/N'})"}
        try:
            inst = assign_clients(clients.times, clients.disparity, n_clusters=n_clusters, c2=c2, method=method)
        except (OverflowError, ArithmeticError) as exc:
            rows.append({**row, "status": _failure(exc)})
            continue
        out = inst.assignment
        if reference is None:
            reference = out.sorted_ratings
        rows.append(
            {
                **row,
                "status": "solved",
                "seconds": inst.seconds,
                "sizes": out.sizes.tolist(),
                "largest D": out.sorted_ratings[:top].tolist(),
                "sum D": int(out.ratings.sum()),
                "sorted D vs lexmin": _lex_compare(out.sorted_ratings, reference),
            }
        )
    return pd.DataFrame(rows).set_index("method")


def sorted_ratings_frame(instances: dict[str, AssignedInstance]) -> pd.DataFrame:
    """The assigned ratings of each instance in non-increasing order, one column each (rank as index)."""
    return pd.DataFrame({name: inst.assignment.sorted_ratings for name, inst in instances.items()}).rename_axis("rank")


# --- Meyer's lemma, total unimodularity, brute force ----------------------------------------------------------------


def _lex_key(v) -> tuple:
    return tuple(sorted((float(x) for x in v), reverse=True))


def lemma_table(*, n_pairs: int, length: int = 3, levels: int = 3, random_state: SeedLike = 0) -> pd.DataFrame:
    """Meyer's lemma, ``⟨α⟩ ⪯ ⟨β⟩ ⟺ Σ n^{α_m} ≤ Σ n^{β_m}``, on reals and on integers.

    Rows: the counterexample :data:`MEYER_COUNTEREXAMPLE`; ``n_pairs`` random pairs of real vectors in
    ``[0, levels]^length``; every pair of integer vectors in ``{0..levels}^length`` (exhaustive). The base
    is the vectors' length, as in the paper's (7).

    Parameters
    ----------
    n_pairs : int
        Random real pairs.
    length : int, default=3
        ``n``.
    levels : int, default=3
        Largest value.
    random_state : int, numpy.random.Generator or None, default=0
        The real pairs.

    Returns
    -------
    pandas.DataFrame
        Pairs checked, pairs where the order of φ and the lexicographic order disagree, and an example
        with its ``φ(α)`` and ``φ(β)``.
    """
    rng = check_random_state(random_state)
    alpha, beta = MEYER_COUNTEREXAMPLE
    n = len(alpha)
    phi_a, phi_b = sum(n**v for v in alpha), sum(n**v for v in beta)
    rows = [
        {
            "vectors": f"α = {alpha}, β = {beta}",
            "pairs": 1,
            "disagreements": int((_lex_key(alpha) < _lex_key(beta)) != (phi_a < phi_b)),
            "example": f"⟨α⟩ ≺ ⟨β⟩: {_lex_key(alpha) < _lex_key(beta)}",
            "φ(α)": phi_a,
            "φ(β)": phi_b,
        }
    ]
    reals = rng.uniform(0, levels, (n_pairs, 2, length))
    wrong = [
        (u, v)
        for u, v in reals
        if (_lex_key(u) <= _lex_key(v)) != (sum(length**x for x in u) <= sum(length**x for x in v))
    ]
    example = f"α = {np.round(wrong[0][0], 3).tolist()}, β = {np.round(wrong[0][1], 3).tolist()}" if wrong else ""
    rows.append(
        {
            "vectors": f"random reals in [0, {levels}]^{length}",
            "pairs": n_pairs,
            "disagreements": len(wrong),
            "example": example,
            "φ(α)": float(sum(length**x for x in wrong[0][0])) if wrong else np.nan,
            "φ(β)": float(sum(length**x for x in wrong[0][1])) if wrong else np.nan,
        }
    )
    grid = list(itertools.product(range(levels + 1), repeat=length))
    bad = sum(
        (_lex_key(u) <= _lex_key(v)) != (sum(length**x for x in u) <= sum(length**x for x in v))
        for u in grid
        for v in grid
    )
    rows.append(
        {
            "vectors": f"all integer vectors in {{0..{levels}}}^{length}",
            "pairs": len(grid) ** 2,
            "disagreements": int(bad),
            "example": "",
        }
    )
    return pd.DataFrame(rows).set_index("vectors")


def tu_table(
    n_clients: int,
    *,
    n_clusters: int = paper.N_CLUSTERS,
    n_samples: int,
    max_size: int = 8,
    random_state: SeedLike = 0,
) -> pd.DataFrame:
    """Determinants of square submatrices of KNOT's constraint matrix and of a non-TU control.

    The control appends one conflict row per client, ``x_{k, k+1 mod N} + x_{k+1 mod K, k mod N} ≤ 1``,
    each of which closes an odd cycle with a client row and a cluster row (a 3×3 submatrix of
    determinant 2). Rows: both matrices at ``K = 3, N = 2`` exhaustively (every square submatrix), and at
    ``K = 6, N = 3`` and ``(n_clients, n_clusters)`` by ``n_samples`` connected random submatrices of order up
    to ``max_size``.

    Parameters
    ----------
    n_clients : int
        ``K`` of the sampled check.
    n_clusters : int, default=paper.N_CLUSTERS
        ``N`` of the sampled check.
    n_samples : int
        Random submatrices per sampled row.
    max_size : int, default=8
        Largest order sampled.
    random_state : int, numpy.random.Generator or None, default=0
        The samples.

    Returns
    -------
    pandas.DataFrame
        Matrix, shape, how checked, submatrices, counts of determinant values, the largest ``|det|`` and
        whether every determinant lies in ``{−1, 0, 1}``.
    """
    rng = check_random_state(random_state)
    rows = []
    for K, N, sampled in ((3, 2, False), (6, 3, True), (n_clients, n_clusters, True)):
        chain = [((k, (k + 1) % N), ((k + 1) % K, k % N)) for k in range(K)]
        for name, conflicts in (("KNOT's A", ()), ("control: A + conflict rows", chain)):
            A = assignment_constraints(K, N, conflicts=conflicts)
            if sampled:
                result = sample_subdeterminants(A, max_size=max_size, n_samples=n_samples, random_state=rng)
            else:
                result = sample_subdeterminants(A, max_size=min(A.shape))
            counts = result.counts
            rows.append(
                {
                    "matrix": name,
                    "K": K,
                    "N": N,
                    "shape": f"{A.shape[0]} × {A.shape[1]}",
                    "check": "sampled" if sampled else "exhaustive",
                    "orders": f"1..{int(result.sizes.max())}",
                    "submatrices": int(result.sizes.size),
                    "det = 0": counts.get(0, 0),
                    "det = ±1": counts.get(1, 0) + counts.get(-1, 0),
                    "|det| ≥ 2": sum(c for v, c in counts.items() if abs(v) >= 2),
                    "largest |det|": max(abs(v) for v in counts),
                    "all in {−1, 0, 1}": result.unimodular,
                }
            )
    return pd.DataFrame(rows)


def _brute_force(D: np.ndarray, lo: int, hi: int) -> tuple[tuple, int]:
    """The lexicographically smallest sorted ratings and the smallest sum over every feasible assignment."""
    K, N = D.shape
    labels = np.array(list(itertools.product(range(N), repeat=K)), dtype=np.int64)
    sizes = np.stack([(labels == n).sum(axis=1) for n in range(N)], axis=1)
    labels = labels[(sizes >= lo).all(axis=1) & (sizes <= hi).all(axis=1)]
    ratings = -np.sort(-D[np.arange(K), labels], axis=1)
    order = np.lexsort(ratings.T[::-1])
    return tuple(ratings[order[0]].tolist()), int(ratings.sum(axis=1).min())


def brute_force_table(
    *, n_instances: int, n_clients: int = 8, n_clusters: int = 3, levels: int = 100, random_state: SeedLike = 0
) -> pd.DataFrame:
    """Every exact solver against enumeration of all ``N^K`` assignments, on random integer ratings.

    Parameters
    ----------
    n_instances : int
        Random instances.
    n_clients : int, default=8
        ``K`` (``N^K`` assignments are enumerated).
    n_clusters : int, default=3
        ``N``.
    levels : int, default=100
        Ratings are uniform in ``0..levels``.
    random_state : int, numpy.random.Generator or None, default=0
        The instances.

    Returns
    -------
    pandas.DataFrame
        One row per instance: whether lexmin_flow and network_simplex reach the enumerated
        lexicographic minimum, whether minsum_flow reaches the smallest sum, and whether minsum's
        sorted ratings happen to be the lexicographic minimum too.
    """
    rng = check_random_state(random_state)
    lo, hi = size_bounds(n_clients, n_clusters, paper.c2(n_clients, n_clusters), paper.c3(n_clients, n_clusters))
    rows = []
    for i in range(n_instances):
        D = rng.integers(0, levels + 1, (n_clients, n_clusters))
        best_lex, best_sum = _brute_force(D, lo, hi)
        out = {m: lexmin_assignment(D, method=m) for m in ("lexmin_flow", "network_simplex", "minsum_flow")}
        rows.append(
            {
                "instance": i,
                "lexmin_flow = brute force": tuple(out["lexmin_flow"].sorted_ratings.tolist()) == best_lex,
                "network_simplex = brute force": tuple(out["network_simplex"].sorted_ratings.tolist()) == best_lex,
                "minsum_flow = smallest sum": int(out["minsum_flow"].ratings.sum()) == best_sum,
                "minsum is also the lexmin": tuple(out["minsum_flow"].sorted_ratings.tolist()) == best_lex,
            }
        )
    return pd.DataFrame(rows).set_index("instance")


# --- floating point -------------------------------------------------------------------------------------------------

FLOAT64_MAX = sys.float_info.max


def overflow_clients(n_clusters: int = paper.N_CLUSTERS, levels: int = paper.RATING_LEVELS) -> int:
    """The smallest ``K`` whose largest weight ``(KN)^levels`` exceeds float64's largest value.

    Found by exact integer comparison, and checked against ``numpy.power`` in float64 (``inf`` there,
    finite one client earlier).

    Parameters
    ----------
    n_clusters : int, default=paper.N_CLUSTERS
        ``N``.
    levels : int, default=paper.RATING_LEVELS
        The largest rating.

    Returns
    -------
    int
        ``K``.
    """
    limit = int(FLOAT64_MAX)
    K = 1
    while (K * n_clusters) ** levels <= limit:
        K += 1
    with np.errstate(over="ignore"):
        assert np.isinf(np.power(float(K * n_clusters), float(levels)))
        assert np.isfinite(np.power(float((K - 1) * n_clusters), float(levels)))
    return K


def float64_levels(n_clients: int, *, base: int, levels: int = paper.RATING_LEVELS) -> int:
    """How many rating levels, counted down from the largest, a float64 sum of ``K`` weights ``base^D`` tells apart.

    A level ``Δ`` below the largest still counts when ``K`` weights at it change
    the largest weight in float64; the first ``Δ`` at which ``base^top +
    K·base^(top−Δ) == base^top`` is the answer, so the levels told apart are
    ``top, …, top − Δ + 1``. A double carries 53 bits, so this is about
    ``1 + log(K·2^53) / log(base)``; the float computation decides the cases
    near the boundary, where the mantissa of ``base^top`` matters. ``top`` is
    ``levels``, or the largest level whose weight is finite in float64.

    Parameters
    ----------
    n_clients : int
        ``K``, the number of weights summed.
    base : int
        ``KN`` for the paper's λ-LP, ``K + 1`` for :func:`fedlib.cluster.lexmin_assignment`'s exact costs.
    levels : int, default=paper.RATING_LEVELS
        The largest rating.

    Returns
    -------
    int
        The number of levels, at most ``top + 1`` (every level told apart).

    Examples
    --------
    >>> float64_levels(100, base=500), float64_levels(100, base=101)
    (7, 10)
    """
    with np.errstate(over="ignore"):
        weights = np.power(float(base), np.arange(levels + 1, dtype=np.float64))
    top = int(np.flatnonzero(np.isfinite(weights)).max())
    with np.errstate(over="ignore"):  # near float64's top, the sum itself overflows: resolved, not absorbed
        return next(
            (delta for delta in range(1, top + 1) if weights[top] + n_clients * weights[top - delta] == weights[top]),
            top + 1,
        )


def float_weights_table(
    n_clients,
    *,
    n_clusters: int = paper.N_CLUSTERS,
    levels: int = paper.RATING_LEVELS,
    solve: bool = False,
    random_state: SeedLike = 0,
) -> pd.DataFrame:
    """The paper's weights ``(KN)^D`` in float64 against exact integers, per ``K``.

    Columns: ``log10 (KN)^levels``; its float64 value (``inf`` past the range); the smallest ``D`` with
    ``(KN)^D + 1 == (KN)^D`` in float64 (weights that far apart cannot be told from their sum); the
    *resolution* ``Δ``: ratings ``Δ`` or more levels below the largest one change a float64 sum of the
    ``K`` weights by nothing at all; and the length of the exact integer ``(K+1)^levels`` that
    :func:`fedlib.cluster.lexmin_assignment` uses instead. With ``solve``, the paper's float LP
    (``method="paper_lp"``) is run on random ratings ``0..levels`` of each size and its outcome recorded.

    Parameters
    ----------
    n_clients : iterable of int
        The ``K`` values.
    n_clusters : int, default=paper.N_CLUSTERS
        ``N``.
    levels : int, default=paper.RATING_LEVELS
        The largest rating.
    solve : bool, default=False
        Also run the float LP.
    random_state : int, numpy.random.Generator or None, default=0
        The random ratings of ``solve``.

    Returns
    -------
    pandas.DataFrame
        One row per ``K``.
    """
    rng = check_random_state(random_state)
    rows = []
    for K in n_clients:
        base = float(K * n_clusters)
        with np.errstate(over="ignore"):
            weights = np.power(base, np.arange(levels + 1, dtype=np.float64))
        absorbed = next(D for D in range(levels + 1) if weights[D] + 1.0 == weights[D])
        resolution = float64_levels(K, base=K * n_clusters, levels=levels)
        rows.append(
            {
                "K": K,
                "KN": K * n_clusters,
                f"log10 (KN)^{levels}": levels * math.log10(K * n_clusters),
                f"(KN)^{levels} in float64": float(weights[levels]),
                "first D with (KN)^D + 1 == (KN)^D": absorbed,
                "resolution Δ (levels)": resolution,
                f"digits of (K+1)^{levels}, exact": len(str((K + 1) ** levels)),
            }
        )
        if solve:
            D = rng.integers(0, levels + 1, (K, n_clusters))
            D[0, 0] = levels
            try:
                lexmin_assignment(D, method="paper_lp")
                rows[-1]["paper_lp"] = "solved"
            except (OverflowError, ArithmeticError) as exc:
                rows[-1]["paper_lp"] = _failure(exc)
    return pd.DataFrame(rows).set_index("K")


def _failure(exc: Exception) -> str:
    """A float LP failure in a few words: overflow, or the solver's status."""
    if isinstance(exc, OverflowError):
        return "overflow: weights past float64"
    status = re.search(r"status \d+", str(exc))
    return f"no solution (GLOP {status.group(0)})" if status else f"no solution ({exc})"


def float_lp_table(clients: ProfiledClients, levels, *, n_clusters: int = paper.N_CLUSTERS) -> pd.DataFrame:
    """The paper's λ-LP in float64 (GLOP) with the ratings rounded to ``0..R`` instead of ``0..100``.

    Parameters
    ----------
    clients : ProfiledClients
        The features (paper's anchors and sign).
    levels : iterable of int
        The values of ``R``.
    n_clusters : int, default=paper.N_CLUSTERS
        ``N``.

    Returns
    -------
    pandas.DataFrame
        One row per ``R``: the largest weight ``(KN)^R``, the float LP's status, and whether its
        solution has the exact lexmin's sorted ratings.
    """
    d = match_ratings(clients.times, clients.disparity, n_clusters)
    K = clients.n_clients
    rows = []
    for R in levels:
        D = round_ratings(d, levels=R)
        exact = lexmin_assignment(D)
        row = {"R": R, "log10 (KN)^R": R * math.log10(K * n_clusters)}
        try:
            lp = lexmin_assignment(D, method="paper_lp")
        except (OverflowError, ArithmeticError) as exc:
            rows.append({**row, "float LP": _failure(exc), "same sorted ratings as lexmin": False})
            continue
        same = lp.sorted_ratings.tolist() == exact.sorted_ratings.tolist()
        rows.append({**row, "float LP": "solved", "same sorted ratings as lexmin": same})
    return pd.DataFrame(rows).set_index("R")


def objective_forms(instance: AssignedInstance) -> pd.Series:
    """The paper's objective at an integral assignment in its three forms, as exact integers.

    Part A's ``Σ (KN)^{D_kn x_kn}``, the λ-LP's ``Σ λ⁰ + (KN)^{D_kn} λ¹`` (typo fixed) and the linear
    ``KN + Σ ((KN)^{D_kn} − 1) x_kn``.

    Parameters
    ----------
    instance : AssignedInstance
        The assignment.

    Returns
    -------
    pandas.Series of int
        The three values, by form (Python integers, object dtype).
    """
    D, labels = instance.D, instance.labels
    K, N = D.shape
    base = K * N
    return pd.Series(
        {
            "Σ (KN)^(D x)  (Part A)": separable_objective(D, labels),
            "Σ λ0 + (KN)^D λ1  (λ-LP)": lambda_lp_objective(D, labels),
            "KN + Σ ((KN)^D − 1) x": base + sum(base ** int(v) - 1 for v in D[np.arange(K), labels].tolist()),
        },
        dtype=object,
    )


def float_blind_swap(instance: AssignedInstance) -> pd.DataFrame:
    """Two assignments that float64 cannot tell apart although the exact objective can.

    Starting from the exact lexmin, swap two clients of different clusters (sizes stay) so that the sorted
    ratings get lexicographically worse, i.e. the exact ``Σ (KN)^{D_kn x_kn}`` grows, while the paper's
    objective summed in float64 stays bit for bit the same. Of all such swaps, the one that raises one
    client's rating the most is shown.

    Parameters
    ----------
    instance : AssignedInstance
        An exact lexmin solution.

    Returns
    -------
    pandas.DataFrame
        Rows "lexmin" and "swapped": the two clients' ratings, the largest rating, the sorted ratings against
        the lexmin's, the exact objective (a Python integer; its excess over the lexmin's, exactly and as a
        decimal logarithm, NaN for the lexmin's own zero excess; whether it equals the lexmin's), and the
        float64 objective (its excess; whether it equals the lexmin's bit for bit). Empty if no such swap
        exists.
    """
    D, labels = instance.D, instance.labels
    K, N = D.shape
    base = K * N
    values = D[np.arange(K), labels]
    weights = np.power(float(base), values.astype(np.float64))
    float0 = float(np.sum(weights))
    best = None
    for i, j in itertools.combinations(range(K), 2):
        a, b = labels[i], labels[j]
        if a == b:
            continue
        new_i, new_j = int(D[i, b]), int(D[j, a])
        rise = max(new_i - int(values[i]), new_j - int(values[j]))
        excess = base**new_i + base**new_j - base ** int(values[i]) - base ** int(values[j])
        if excess <= 0 or (best is not None and rise <= best[0]):
            continue
        trial = weights.copy()
        trial[i], trial[j] = float(base) ** new_i, float(base) ** new_j
        if float(np.sum(trial)) == float0:
            best = (rise, i, j, new_i, new_j, excess)
    if best is None:
        return pd.DataFrame()
    _, i, j, new_i, new_j, excess = best
    exact0 = separable_objective(D, labels)
    swapped = labels.copy()
    swapped[i], swapped[j] = labels[j], labels[i]
    new_values = D[np.arange(K), swapped]
    assert separable_objective(D, swapped) - exact0 == excess
    trial = np.power(float(base), new_values.astype(np.float64))
    float1 = float(np.sum(trial))
    return pd.DataFrame(
        {
            "clients": [f"{i}, {j}"] * 2,
            "their ratings D": [[int(values[i]), int(values[j])], [new_i, new_j]],
            "largest rating": [int(values.max()), int(new_values.max())],
            "sorted D vs lexmin": ["equal", _lex_compare(np.sort(new_values)[::-1], np.sort(values)[::-1])],
            "exact Σ (KN)^D": [exact0, exact0 + excess],
            "exact excess over lexmin": [0, excess],
            "exact Σ equals the lexmin's": [True, excess == 0],
            "log10 exact Σ (KN)^D": [math.log10(exact0), math.log10(exact0 + excess)],
            "log10 exact excess over lexmin": [np.nan, math.log10(excess)],
            "float64 Σ (KN)^D": [float0, float1],
            "float64 excess over lexmin": [0.0, float1 - float0],
            "float64 Σ equals the lexmin's": [True, float1 == float0],
        },
        index=["lexmin", "swapped"],
    )


# --- solve time against K -------------------------------------------------------------------------------------------


def timing_table(
    n_clients,
    *,
    disparity_pool,
    n_clusters: int = paper.N_CLUSTERS,
    simplex_max: int = 1000,
    repeat: int = 3,
    random_state: SeedLike = 0,
) -> pd.DataFrame:
    """Seconds to assign ``K`` clients, per solver: the median of ``repeat`` runs.

    Each ``K`` draws training times from Plato's latency model and disparities by resampling
    ``disparity_pool`` (the profiled clients'), then solves the paper's problem (anchors, ``K/(2N)``,
    ``K/2``). networkx's network simplex is timed only up to ``simplex_max`` clients.

    Parameters
    ----------
    n_clients : iterable of int
        The ``K`` values.
    disparity_pool : array-like of float
        Disparities to resample.
    n_clusters : int, default=paper.N_CLUSTERS
        ``N``.
    simplex_max : int, default=1000
        Largest ``K`` for network simplex.
    repeat : int, default=3
        Runs per (K, solver).
    random_state : int, numpy.random.Generator or None, default=0
        The instances.

    Returns
    -------
    pandas.DataFrame
        One row per (K, solver): seconds, cluster sizes, the largest assigned rating.
    """
    rng = check_random_state(random_state)
    pool = np.asarray(disparity_pool, dtype=np.float64)
    rows = []
    for K in n_clients:
        T = pareto_training_times(K, alpha=paper.PARETO_ALPHA, random_state=rng)
        S = rng.choice(pool, size=K, replace=True)
        D = round_ratings(match_ratings(T, S, n_clusters), levels=paper.RATING_LEVELS)
        for method in ("lexmin_flow", "minsum_flow", "network_simplex"):
            if method == "network_simplex" and K > simplex_max:
                continue
            seconds = []
            for _ in range(repeat):
                start = time.perf_counter()
                out = lexmin_assignment(D, method=method)
                seconds.append(time.perf_counter() - start)
            rows.append(
                {
                    "K": K,
                    "method": method,
                    "seconds": float(np.median(seconds)),
                    "sizes": out.sizes.tolist(),
                    "largest D": int(out.ratings.max()),
                }
            )
    return pd.DataFrame(rows)


def solve_time_verdicts(timing: pd.DataFrame) -> pd.DataFrame:
    """The paper's "less than a second" (Mosek 9, Sec. V) against each solver's time at each ``K``.

    Parameters
    ----------
    timing : pandas.DataFrame
        :func:`timing_table`'s output.

    Returns
    -------
    pandas.DataFrame
        One row per ``K``, one column per solver: "yes (0.002 s)" when under the paper's bound, "no (…)"
        otherwise, "not run" where a solver was skipped.
    """
    table = timing.pivot(index="K", columns="method", values="seconds")
    verdicts = table.apply(
        lambda column: [
            "not run" if np.isnan(v) else f"{'yes' if v < paper.SOLVE_SECONDS else 'no'} ({v:.3g} s)" for v in column
        ]
    )
    verdicts.columns.name = f"under the paper's {paper.SOLVE_SECONDS:g} s"
    return verdicts[[m for m in ("lexmin_flow", "minsum_flow", "network_simplex") if m in verdicts.columns]]


# --- the paper's setting against Plato's ----------------------------------------------------------------------------

_PLATO = {"S": "plato", "anchors": "code", "a": 1.0, "c2": "plato"}

#: The setting that ignores the disparity.
TIME_ONLY = "time only (b = 0)"

#: The settings of :func:`variants_table`: label and keyword arguments of :func:`assign_clients`
#: (``"S"`` picks the disparity: "paper" or "plato").
VARIANTS: dict[str, dict] = {
    "paper (corrected S, anchors n/N, a = 1/(T*−T_*), c2 = K/2N)": {},
    "Plato's S (similarity)": {"S": "plato"},
    "Plato's anchors": {"anchors": "code"},
    "Plato's weights a = b = 1 (raw seconds)": {"a": 1.0},
    "balanced clusters c2 = K/N (Plato)": {"c2": "plato"},
    TIME_ONLY: {"b": 0.0},
    "Plato as intended (all four, min Σ d)": {**_PLATO, "method": "plato_min"},
    "Plato as published (all four, max Σ d)": {**_PLATO, "method": "plato_max"},
}


def variant_instances(clients: ProfiledClients, *, n_clusters: int = paper.N_CLUSTERS) -> dict[str, AssignedInstance]:
    """:func:`assign_clients` for every setting of :data:`VARIANTS`, by label."""
    out = {}
    for label, setting in VARIANTS.items():
        kwargs = dict(setting)
        S = clients.similarity if kwargs.pop("S", "paper") == "plato" else clients.disparity
        out[label] = assign_clients(clients.times, S, n_clusters=n_clusters, **kwargs)
    return out


def variants_table(clients: ProfiledClients, instances: dict[str, AssignedInstance]) -> pd.DataFrame:
    """What each setting does to the clusters, against the paper's setting (the first one).

    Parameters
    ----------
    clients : ProfiledClients
        The features (the paper's ``S_k`` is used to describe every setting's clusters).
    instances : dict of str to AssignedInstance
        :func:`variant_instances`'s output.

    Returns
    -------
    pandas.DataFrame
        One row per setting: cluster sizes; the share of clients in the same cluster as under the
        paper's setting and as with time alone (``b = 0``); the mean ``T_k`` and mean (paper's) ``S_k``
        of the fastest cluster (anchor 1); the mean within-cluster standard deviations of ``T_k`` and ``S_k``.
    """
    reference = next(iter(instances.values())).labels
    time_only = instances[TIME_ONLY].labels if TIME_ONLY in instances else None
    T, S = clients.times, clients.disparity
    rows = []
    for label, inst in instances.items():
        lab = inst.labels
        used = [n for n in range(inst.T_anchor.size) if (lab == n).any()]
        rows.append(
            {
                "setting": label,
                "sizes": inst.assignment.sizes.tolist(),
                "same cluster as the paper's": float(np.mean(lab == reference)),
                "same cluster as time only": np.nan if time_only is None else float(np.mean(lab == time_only)),
                "fastest cluster: mean T_k (s)": float(T[lab == 0].mean()) if (lab == 0).any() else np.nan,
                "fastest cluster: mean S_k": float(S[lab == 0].mean()) if (lab == 0).any() else np.nan,
                "within-cluster std of T_k (s)": float(np.mean([T[lab == n].std() for n in used])),
                "within-cluster std of S_k": float(np.mean([S[lab == n].std() for n in used])),
            }
        )
    return pd.DataFrame(rows).set_index("setting")
