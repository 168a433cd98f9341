"""Checks for the coding exercises of the chapter on KNOT's client-to-cluster assignment (Su & Li, Sec. IV)."""

from __future__ import annotations

import itertools

import numpy as np

from fedbook.course._feedback import Wrong, call, exercise, expect, expect_array

# --- ex-knot-ratings: the integer match ratings D_kn -----------------------------------------------------------------


def _rating_cases():
    """(name, T, S, N, levels): profiled-like clients and the edge cases of the rounding and the anchors."""
    rng = np.random.default_rng(20230517)
    T = 20.0 + np.minimum(rng.pareto(1.0, 12), 30.0)
    S = rng.uniform(0.3, 0.7, 12)
    yield "12 clients with Pareto training times, N = 5", T, S, 5, 100
    yield "the same clients rounded to 10 levels", T, S, 5, 10
    # Mathematically d_11 equals the smallest rating; in float64 it exceeds it by one ulp.
    yield "4 clients, N = 2, a rating tied with the smallest one", [5.0, 5.0, 3.0, 4.0], [0.5, 0.7, 0.2, 0.3], 2, 100
    yield "4 clients with equal training times, N = 2", [2.0, 2.0, 2.0, 2.0], [0.6, 0.8, 0.5, 0.5], 2, 100
    yield "3 identical clients, one cluster (every rating equal)", [3.0, 3.0, 3.0], [0.4, 0.4, 0.4], 1, 100


def _ratings_variant(T, S, N, levels, *, a=None, rounding="ceil-guarded"):
    """The ratings under a variant of the conventions, to recognise typical mistakes (None if undefined)."""
    from fedlib.cluster import match_ratings

    d = match_ratings(T, S, N, a=a)
    span = d.max() - d.min()
    if span == 0:
        return np.zeros(d.shape, dtype=np.int64)
    scaled = (d - d.min()) / span * levels
    if rounding == "ceil":
        return np.ceil(scaled).astype(np.int64)
    if rounding == "nearest":
        return np.rint(scaled).astype(np.int64)
    return np.ceil(scaled - 1e-9).astype(np.int64)


@exercise("ex-knot-ratings")
def _knot_ratings(answer) -> str:
    from fedlib.cluster import match_ratings, round_ratings

    for name, T, S, N, levels in _rating_cases():
        T, S = np.asarray(T, dtype=float), np.asarray(S, dtype=float)
        got = call(answer, T.copy(), S.copy(), N, levels, what=f"knot_ratings on {name}")
        want = round_ratings(match_ratings(T, S, N), levels=levels)
        try:
            arr = np.asarray(got)
        except Exception as exc:
            raise Wrong(f"knot_ratings on {name} did not return an array: {exc}") from None
        expect(
            arr.shape == want.shape,
            f"on {name}: the ratings have shape {arr.shape}; expected (K, N) = {want.shape}",
        )
        expect(
            np.issubdtype(arr.dtype, np.integer),
            f"on {name}: the ratings have dtype {arr.dtype}; they must be integers (int64): Meyer's lemma, "
            "and the exact costs built on it, need integer ratings",
        )
        if np.array_equal(arr, want):
            continue
        if np.array_equal(arr, _ratings_variant(T, S, N, levels, rounding="ceil")):
            bad = tuple(int(i) for i in np.argwhere(arr != want)[0])
            raise Wrong(
                f"on {name}: entry {bad} is {arr[bad]} where the rating is {want[bad]}: the scaled value is an "
                "integer up to float error, and a bare ceiling pushes it one level up. Apply the 1e-9 guard "
                "of the statement before taking the ceiling."
            )
        if np.array_equal(arr, _ratings_variant(T, S, N, levels, rounding="nearest")):
            raise Wrong(f"on {name}: your ratings are rounded to the nearest level; KNOT takes the ceiling")
        spread = float(T.max() - T.min())
        if spread not in (0.0, 1.0) and np.array_equal(arr, _ratings_variant(T, S, N, levels, a=1.0)):
            raise Wrong(
                f"on {name}: your ratings weigh time with a = 1 on raw seconds (Plato's weight); this chapter "
                "takes a = 1/(T^* - T_*)"
            )
        expect_array(arr, want, f"knot_ratings on {name}", exact=True)
    return (
        "integer ratings equal fedlib's round_ratings(match_ratings(...)) on 5 cases (10 and 100 levels, a float "
        "tie with the smallest rating, equal training times, one cluster with every rating equal)"
    )


# --- ex-knot-costs: exact integer costs whose sums order assignments like the sorted ratings ------------------------


def _cost_cases():
    rng = np.random.default_rng(1977)
    yield "one client, three clusters", np.array([[3, 0, 7]])
    yield "three clients, two clusters, ratings 0..2", np.array([[0, 2], [1, 1], [2, 0]])
    yield "two clients, three clusters, ratings 0..3", np.array([[1, 0, 3], [2, 3, 0]])
    yield "five clients, three clusters, ratings 0..100", rng.integers(0, 101, size=(5, 3))
    yield "four clients, two clusters, every rating 40", np.full((4, 2), 40)


def _lex_key(ratings) -> tuple:
    """The vector KNOT compares: the assigned ratings in non-increasing order."""
    return tuple(sorted(ratings, reverse=True))


def _describe(key: tuple) -> str:
    return "(" + ", ".join(str(v) for v in key) + ")"


@exercise("ex-knot-costs")
def _lexmin_costs(answer) -> str:
    for name, D in _cost_cases():
        K, N = D.shape
        got = call(answer, D.copy(), what=f"lexmin_costs on {name}")
        fixed_width = isinstance(got, np.ndarray) and got.dtype != object
        try:
            C = np.asarray(got, dtype=object)
        except Exception as exc:
            raise Wrong(f"lexmin_costs on {name} did not return an array: {exc}") from None
        expect(C.shape == (K, N), f"on {name}: the costs have shape {C.shape}; expected (K, N) = {(K, N)}")
        for value in C.ravel():
            if isinstance(value, float | np.floating):
                raise Wrong(
                    f"on {name}: the costs are floats: float64 keeps 53 bits, so a float sum of these powers loses "
                    "all but the top few rating levels (the section on floating point). Use exact Python integers."
                )
            expect(
                isinstance(value, int | np.integer) and not isinstance(value, bool),
                f"on {name}: a cost is a {type(value).__name__}; the costs must be integers",
            )
        rows = np.arange(K)
        scored = []
        for labels in itertools.product(range(N), repeat=K):
            ratings = D[rows, list(labels)].tolist()
            cost = sum(int(C[k, n]) for k, n in enumerate(labels))
            scored.append((_lex_key(ratings), cost))
        scored.sort(key=lambda item: item[0])
        for (key_a, cost_a), (key_b, cost_b) in itertools.pairwise(scored):
            if key_a == key_b and cost_a == cost_b:
                continue
            if key_a < key_b and cost_a < cost_b:
                continue
            hint = ""
            if fixed_width:
                hint = f" Your costs are fixed-width {got.dtype} numbers, which wrap around or round past 2^63."
            elif K == 1 and len({int(v) for v in C.ravel()}) == 1 and len(set(D.ravel().tolist())) > 1:
                hint = " Every cost is the same: with one client, a base of K = 1 makes every power 1."
            if key_a == key_b:
                raise Wrong(
                    f"on {name}: two assignments have the same sorted ratings {_describe(key_a)} but different total "
                    "costs: the costs must depend only on the ratings." + hint
                )
            relation = "the same total cost" if cost_a == cost_b else "a larger total cost"
            raise Wrong(
                f"on {name}: the assignment with sorted ratings {_describe(key_a)} is lexicographically smaller "
                f"than the one with {_describe(key_b)}, yet your costs give it {relation}." + hint
            )
    return (
        "on 5 rating matrices (one client; ties; ratings up to 100; all equal), every assignment's total cost "
        "orders it exactly as its sorted ratings, with exact integers"
    )


# --- ex-knot-constraints: the constraint matrix A and right-hand side b of problem (8) ------------------------------


_CONSTRAINT_CASES = (
    ("K = 3 clients, N = 2 clusters, sizes 1..2", 3, 2, 1, 2),
    ("K = 4 clients, N = 3 clusters, sizes 1..2", 4, 3, 1, 2),
    ("K = 5 clients, N = 2 clusters, sizes 0..5", 5, 2, 0, 5),
    ("one client, one cluster", 1, 1, 1, 1),
)


@exercise("ex-knot-constraints")
def _knot_constraints(answer) -> str:
    from fedlib.cluster import assignment_constraints

    for name, K, N, lo, hi in _CONSTRAINT_CASES:
        got = call(answer, K, N, lo, hi, what=f"knot_constraints on {name}")
        expect(
            isinstance(got, tuple) and len(got) == 2,
            f"knot_constraints should return a pair (A, b); on {name} it returned {type(got).__name__}",
        )
        A, b = got
        if hasattr(A, "toarray"):  # a scipy sparse matrix is fine
            A = A.toarray()
        A = np.asarray(A)
        want_A = assignment_constraints(K, N).toarray()
        want_b = np.concatenate([np.ones(K), -np.ones(K), np.full(N, hi), np.full(N, -lo)]).astype(np.int64)
        expect(
            A.shape == want_A.shape,
            f"on {name}: A has shape {A.shape}; expected (2K + 2N, K·N) = {want_A.shape}: rows A_1, -A_1, A_2, -A_2, "
            "one column per (client, cluster) pair",
        )
        if A.shape == want_A.shape and not np.array_equal(A, want_A):
            cluster_major = np.array([[k * N + n for n in range(N)] for k in range(K)]).T.ravel()
            if np.array_equal(A[:, np.argsort(cluster_major)], want_A):
                raise Wrong(
                    f"on {name}: your columns are cluster-major (n·K + k); column k·N + n must be the pair "
                    "(client k, cluster n), the order of x.ravel() for x of shape (K, N)"
                )
            A_1, A_2 = want_A[:K], want_A[2 * K : 2 * K + N]
            if np.array_equal(A, np.vstack([A_1, A_2, -A_1, -A_2])):
                raise Wrong(f"on {name}: your rows are A_1, A_2, -A_1, -A_2; the paper stacks A_1, -A_1, A_2, -A_2")
        expect_array(A, want_A, f"A on {name}", exact=True)
        expect(
            np.asarray(b).shape == want_b.shape,
            f"on {name}: b has shape {np.asarray(b).shape}; expected ({2 * K + 2 * N},), one entry per row of A",
        )
        if lo > 0 and np.array_equal(np.asarray(b)[2 * K + N :], np.full(N, lo)):
            raise Wrong(
                f"on {name}: the last N entries of b are +c_2: the lower bound Σ_k x_kn ≥ c_2 becomes the row "
                "-Σ_k x_kn ≤ -c_2 of A x ≤ b"
            )
        expect_array(b, want_b, f"b on {name}", exact=True)
    return (
        "A equals fedlib.cluster.assignment_constraints and b the bounds [1, -1, c3, -c2] on 4 sizes "
        "(down to one client and one cluster)"
    )


# --- ex-knot-brute: the lexicographic minimum by enumeration ----------------------------------------------------------


def _brute_cases():
    rng = np.random.default_rng(2023)
    yield "5 clients, 3 clusters, sizes 1..3, ratings 0..100", rng.integers(0, 101, size=(5, 3)), 1, 3
    yield "6 clients, 2 clusters, balanced sizes 3..3, ratings 0..100", rng.integers(0, 101, size=(6, 2)), 3, 3
    # Every assignment has worst rating 5 (client 0 rates both clusters 5): the second worst decides.
    tie = np.array([[5, 5], [0, 4], [0, 4], [0, 4]])
    yield "4 clients, 2 clusters, sizes 1..3, a tie on the worst rating", tie, 1, 3
    yield "5 clients, 2 clusters, sizes 1..4, ratings 0..9", rng.integers(0, 10, size=(5, 2)), 1, 4
    # Every client rates the last cluster worst, yet it must not stay empty.
    yield "3 clients, 3 clusters, sizes 1..3, the last cluster rated worst", np.array([[0, 1, 9]] * 3), 1, 3


@exercise("ex-knot-brute")
def _brute_lexmin(answer) -> str:
    from fedlib.cluster import lexmin_assignment

    for name, D, lo, hi in _brute_cases():
        got = call(answer, D.copy(), lo, hi, what=f"brute_lexmin on {name}")
        want = lexmin_assignment(D, lower=lo, upper=hi).sorted_ratings
        arr = np.asarray(got)
        expect(
            arr.shape == want.shape,
            f"on {name}: brute_lexmin returned shape {arr.shape}; expected the K = {len(want)} assigned ratings",
        )
        if np.array_equal(np.sort(arr), np.sort(want)) and not np.array_equal(arr, want):
            raise Wrong(f"on {name}: the right ratings come out in the wrong order: sort them worst (largest) first")
        if not np.array_equal(arr, want):
            K, N = D.shape
            sizes_ok = np.bincount(lexmin_assignment(D, lower=lo, upper=hi).labels, minlength=N)
            unbounded = lexmin_assignment(D, lower=0, upper=K).sorted_ratings
            if np.array_equal(arr, unbounded) and not np.array_equal(unbounded, want):
                raise Wrong(
                    f"on {name}: you found the lexicographic minimum without the size bounds: every cluster must "
                    f"hold {lo} to {hi} clients (the lexmin's sizes here are {sizes_ok.tolist()})"
                )
            raise Wrong(
                f"on {name}: brute_lexmin returned the sorted ratings {arr.tolist()}; the lexicographic minimum is "
                f"{want.tolist()} (its worst rating first)"
            )
    return (
        "the lexicographic minimum's sorted ratings equal fedlib's exact solver on 5 instances (size bounds, "
        "a tie on the worst match, a cluster everyone rates worst)"
    )
