"""KNOT's lexicographic client-to-cluster assignment (Su & Li 2023, Sec. IV) against brute force."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fedlib.cluster import (
    assignment_constraints,
    cluster_anchors,
    integer_determinant,
    lambda_lp_objective,
    lexmin_assignment,
    match_ratings,
    round_ratings,
    sample_subdeterminants,
    separable_objective,
    size_bounds,
)
from fedlib.exceptions import InfeasibleAssignment


def brute_force(D, lo, hi):
    """Every assignment with sizes in [lo, hi]: the lexicographically smallest sorted ratings, and the smallest sum."""
    K, N = D.shape
    best_lex, best_sum = None, None
    for labels in itertools.product(range(N), repeat=K):
        sizes = np.bincount(labels, minlength=N)
        if sizes.min() < lo or sizes.max() > hi:
            continue
        ratings = D[np.arange(K), labels]
        key = tuple(sorted(ratings.tolist(), reverse=True))
        best_lex = key if best_lex is None or key < best_lex else best_lex
        total = int(ratings.sum())
        best_sum = total if best_sum is None or total < best_sum else best_sum
    return best_lex, best_sum


@settings(max_examples=80, deadline=None)
@given(
    K=st.integers(2, 7),
    N=st.integers(1, 3),
    levels=st.sampled_from([2, 5, 100]),
    seed=st.integers(0, 2**31 - 1),
    bounds=st.sampled_from(["knot", "balanced", "loose"]),
)
def test_lexmin_and_minsum_are_optimal_against_brute_force(K, N, levels, seed, bounds):
    D = np.random.default_rng(seed).integers(0, levels + 1, (K, N))
    lower, upper = {"knot": (None, None), "balanced": (K // N, -(-K // N)), "loose": (0, K)}[bounds]
    try:
        lo, hi = size_bounds(K, N, lower, upper)
    except InfeasibleAssignment:
        with pytest.raises(InfeasibleAssignment):
            lexmin_assignment(D, lower=lower, upper=upper)
        return
    best_lex, best_sum = brute_force(D, lo, hi)
    lex = lexmin_assignment(D, lower=lower, upper=upper)
    assert tuple(lex.sorted_ratings.tolist()) == best_lex
    assert lo <= lex.sizes.min() and lex.sizes.max() <= hi and lex.sizes.sum() == K
    np.testing.assert_array_equal(lex.ratings, D[np.arange(K), lex.labels])
    assert int(lexmin_assignment(D, lower=lower, upper=upper, method="minsum_flow").ratings.sum()) == best_sum
    simplex = lexmin_assignment(D, lower=lower, upper=upper, method="network_simplex")
    assert tuple(simplex.sorted_ratings.tolist()) == best_lex


def test_lexmin_is_not_minsum():
    # the first random instance on which the two objectives disagree: lexmin pays in the sum to lower the worst match
    rng = np.random.default_rng(1)
    for _ in range(1000):
        D = rng.integers(0, 10, (6, 2))
        lex = lexmin_assignment(D, lower=2, upper=4)
        minsum = lexmin_assignment(D, lower=2, upper=4, method="minsum_flow")
        if lex.sorted_ratings.tolist() != minsum.sorted_ratings.tolist():
            break
    else:
        pytest.fail("no instance where lexmin and minsum differ")
    assert lex.sorted_ratings.max() <= minsum.sorted_ratings.max()
    assert tuple(lex.sorted_ratings) < tuple(minsum.sorted_ratings)
    assert lex.ratings.sum() >= minsum.ratings.sum()


def test_the_exact_solver_handles_sizes_where_the_papers_float_weights_overflow():
    rng = np.random.default_rng(0)
    K, N = 250, 5
    D = rng.integers(0, 101, (K, N))
    out = lexmin_assignment(D)
    assert out.sizes.sum() == K and out.sizes.min() >= 25 and out.sizes.max() <= 125
    with pytest.raises(OverflowError, match="past float64"):
        lexmin_assignment(D, method="paper_lp")
    small = rng.integers(0, 4, (8, 2))  # (KN)^3 = 4096: the float LP is fine at this range
    np.testing.assert_array_equal(
        np.sort(lexmin_assignment(small, method="paper_lp").ratings), np.sort(lexmin_assignment(small).ratings)
    )


def test_successive_shortest_paths_agree_with_network_simplex_at_scale():
    rng = np.random.default_rng(3)
    T, S = 10.0 * (1.0 + rng.pareto(1.5, 300)), rng.random(300)
    D = round_ratings(match_ratings(T, S, 6))
    fast, simplex = lexmin_assignment(D), lexmin_assignment(D, method="network_simplex")
    np.testing.assert_array_equal(fast.sorted_ratings, simplex.sorted_ratings)
    assert fast.sizes.min() >= 25 and fast.sizes.max() <= 150  # ties may seat clients differently


def test_infeasible_bounds_raise_naming_them():
    with pytest.raises(InfeasibleAssignment, match=r"\[c2, c3\] = \[4, 5\]"):
        lexmin_assignment(np.zeros((7, 2), dtype=int), lower=4, upper=5)
    with pytest.raises(ValueError, match="non-negative integers"):
        lexmin_assignment(np.array([[0.5, 1.0]]))


def test_ratings_and_anchors():
    T, S = np.array([10.0, 20.0, 30.0]), np.array([0.2, 0.5, 1.0])
    d = match_ratings(T, S, 3)
    # anchors: T 10, 20, 30 (a = 1/20) and S 1/3, 2/3, 1
    assert d[0, 0] == pytest.approx(np.hypot(0.0, 1 / 3 - 0.2))
    assert d[2, 2] == pytest.approx(0.0)
    D = round_ratings(d)
    assert D.min() == 0 and D.max() == 100 and D.dtype == np.int64
    code = match_ratings(T, S, 3, anchors="code", a=1.0)
    assert code[0, 0] == pytest.approx(0.0)  # Plato's first anchor sits at the minima
    with pytest.raises(ValueError, match="one length"):
        match_ratings(T, S[:2], 3)


# --- the pieces of the paper's reduction: anchors, constraint matrix, total unimodularity, objectives ---------------


def test_cluster_anchors_paper_and_code():
    T, S = np.array([20.0, 50.0, 30.0, 26.0]), np.array([0.3, 0.4, 0.35, 0.5])
    t_paper, s_paper = cluster_anchors(T, S, 4)
    np.testing.assert_allclose(t_paper, [20.0, 30.0, 40.0, 50.0])  # T_* to T^*: the top anchor at the slowest
    np.testing.assert_allclose(s_paper, [0.25, 0.5, 0.75, 1.0])  # n/N whatever the S_k
    t_code, s_code = cluster_anchors(T, S, 4, anchors="code")
    np.testing.assert_allclose(t_code, [20.0, 27.5, 35.0, 42.5])  # Plato: never at the maximum
    np.testing.assert_allclose(s_code, [0.3, 0.35, 0.4, 0.45])
    d = match_ratings(T, S, 4)
    a = 1 / 30
    assert d[1, 3] == pytest.approx(np.hypot(a * 0.0, 1.0 - 0.4))
    with pytest.raises(ValueError, match="one length"):
        cluster_anchors(T, S[:3], 4)


def test_assignment_constraints_encode_problem_2_to_5():
    K, N = 4, 3
    A = assignment_constraints(K, N)
    assert A.shape == (2 * K + 2 * N, K * N) and A.dtype == np.int64
    dense = A.toarray()
    np.testing.assert_array_equal(dense[K : 2 * K], -dense[:K])
    np.testing.assert_array_equal(dense[2 * K + N :], -dense[2 * K : 2 * K + N])
    assert (np.abs(dense).sum(axis=0) == 4).all()  # every pair: its client twice, its cluster twice
    x = np.zeros((K, N), dtype=np.int64)
    x[np.arange(K), [0, 1, 2, 2]] = 1
    lo, hi = 1, 2
    b = np.concatenate([np.ones(K), -np.ones(K), np.full(N, hi), np.full(N, -lo)])
    assert (A @ x.ravel() <= b).all()
    x[3] = [1, 0, 1]  # client 3 in two clusters breaks (2)
    assert not (A @ x.ravel() <= b).all()
    with pytest.raises(ValueError, match="two different"):
        assignment_constraints(K, N, conflicts=[((0, 0), (0, 0))])
    with pytest.raises(ValueError, match="two different"):
        assignment_constraints(K, N, conflicts=[((0, 0), (K, 0))])


@settings(max_examples=60, deadline=None)
@given(nodes=st.lists(st.integers(-6, 6), min_size=0, max_size=7, unique=True))
def test_integer_determinant_is_exact_on_vandermonde_matrices(nodes):
    V = np.array([[x**j for j in range(len(nodes))] for x in nodes], dtype=np.int64).reshape(len(nodes), len(nodes))
    expected = 1
    for i, j in itertools.combinations(range(len(nodes)), 2):
        expected *= nodes[j] - nodes[i]
    assert integer_determinant(V) == expected


def test_integer_determinant_against_float_and_beyond_it():
    rng = np.random.default_rng(0)
    for _ in range(50):
        M = rng.integers(-3, 4, (5, 5))
        assert integer_determinant(M) == round(np.linalg.det(M))
    big = np.diag([10**12, 10**12, 3]).astype(object)
    assert integer_determinant(big) == 3 * 10**24  # past 2^53: float64 could not hold it exactly
    assert integer_determinant(np.zeros((0, 0), dtype=int)) == 1
    assert integer_determinant([[0, 1], [1, 0]]) == -1  # a row swap
    with pytest.raises(ValueError, match="integers"):
        integer_determinant([[0.5, 1.0], [1.0, 0.0]])
    with pytest.raises(ValueError, match="square"):
        integer_determinant([[1, 2, 3]])


def test_knots_matrix_is_totally_unimodular_and_the_control_is_not():
    exhaustive = sample_subdeterminants(assignment_constraints(3, 2), max_size=6)
    assert exhaustive.exhaustive and exhaustive.unimodular
    assert len(exhaustive.sizes) == sum(math.comb(10, s) * math.comb(6, s) for s in range(1, 7))
    assert set(exhaustive.counts) == {-1, 0, 1}
    control = sample_subdeterminants(assignment_constraints(3, 2, conflicts=[((0, 1), (1, 0))]), max_size=3)
    assert not control.unimodular and control.counts[2] > 0  # the 3x3 odd cycle of the docstring
    sampled = sample_subdeterminants(assignment_constraints(30, 5), max_size=8, n_samples=400, random_state=1)
    assert not sampled.exhaustive and sampled.unimodular and sampled.counts[1] > 50  # connected samples: non-zero
    chain = [((k, (k + 1) % 2), ((k + 1) % 3, k % 2)) for k in range(3)]
    assert not sample_subdeterminants(
        assignment_constraints(3, 2, conflicts=chain), max_size=4, n_samples=300, random_state=0
    ).unimodular
    with pytest.raises(ValueError, match="max_exhaustive"):
        sample_subdeterminants(assignment_constraints(30, 5), max_size=4)


@settings(max_examples=60, deadline=None)
@given(
    K=st.integers(1, 6),
    N=st.integers(1, 3),
    seed=st.integers(0, 2**31 - 1),
)
def test_lambda_lp_objective_is_linear_and_equals_the_surrogate_on_integral_points(K, N, seed):
    rng = np.random.default_rng(seed)
    D = rng.integers(0, 9, (K, N))
    labels = rng.integers(0, N, K)
    x = np.zeros((K, N), dtype=np.int64)
    x[np.arange(K), labels] = 1
    KN = K * N
    linear = KN + sum((KN ** int(d) - 1) * int(v) for d, v in zip(D.ravel(), x.ravel(), strict=True))
    assert lambda_lp_objective(D, x) == separable_objective(D, x) == separable_objective(D, labels) == linear
    y = rng.integers(0, 5, (K, N)) / 4  # a fractional point: the λ-LP stays linear in x
    expected = KN + sum((KN ** int(d) - 1) * Fraction(v) for d, v in zip(D.ravel(), y.ravel(), strict=True))
    assert lambda_lp_objective(D, y) == expected
    with pytest.raises(ValueError, match="0/1"):
        separable_objective(D, np.full((K, N), 0.5))


@settings(max_examples=60, deadline=None)
@given(K=st.integers(2, 6), N=st.integers(2, 3), levels=st.integers(1, 12), seed=st.integers(0, 2**31 - 1))
def test_separable_objective_orders_like_the_sorted_ratings(K, N, levels, seed):
    # Meyer's lemma on integer ratings with the paper's base KN: φ(α) ≤ φ(β) iff ⟨α⟩ ⪯ ⟨β⟩
    rng = np.random.default_rng(seed)
    D = rng.integers(0, levels + 1, (K, N))
    a, b = rng.integers(0, N, K), rng.integers(0, N, K)
    va = sorted(D[np.arange(K), a].tolist(), reverse=True)
    vb = sorted(D[np.arange(K), b].tolist(), reverse=True)
    fa, fb = separable_objective(D, a), separable_objective(D, b)
    assert (fa < fb) == (va < vb) and (fa == fb) == (va == vb)
    lex = lexmin_assignment(D, lower=0, upper=K)
    assert separable_objective(D, lex.labels) == min(
        separable_objective(D, np.array(labels)) for labels in itertools.product(range(N), repeat=K)
    )


# -- refused inputs and rating ranks -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("levels", "kind"), [(10**20, ValueError), (2**53 + 1, ValueError), (-5, ValueError),
                                              (0, ValueError), (2.5, TypeError), (True, TypeError)])  # fmt: skip
def test_round_ratings_refuses_levels_out_of_range(levels, kind):
    with pytest.raises(kind, match="levels"):
        round_ratings([[0.0, 0.5], [0.26, 1.0]], levels=levels)


def test_round_ratings_largest_levels_still_fit_int64():
    D = round_ratings([[0.0, 0.5], [0.25, 1.0]], levels=2**53)
    assert D.dtype == np.int64 and D.max() == 2**53 and D.min() == 0


@pytest.mark.parametrize("bound", ["upper", "lower"])
@pytest.mark.parametrize(("value", "kind"), [(float("inf"), ValueError), (float("nan"), ValueError),
                                             ("1", TypeError), (True, TypeError)])  # fmt: skip
def test_lexmin_assignment_refuses_non_finite_or_non_numeric_bounds(bound, value, kind):
    D = np.array([[0, 5], [0, 5], [0, 9], [1, 2]])
    with pytest.raises(kind, match=bound):
        lexmin_assignment(D, **{bound: value})
    with pytest.raises(kind, match=bound):
        size_bounds(4, 2, **{bound: value})


def _lexmin_reference(D, lo, hi):
    """The solver on the integer weights (K+1)^D of the ratings themselves (before ranking)."""
    from fedlib.cluster._assignment import _successive_shortest_paths

    base = D.shape[0] + 1
    return _successive_shortest_paths([[base**v for v in row] for row in D.tolist()], lo, hi)


@settings(max_examples=150, deadline=None)
@given(
    st.integers(1, 7).flatmap(
        lambda K: st.tuples(
            st.just(K),
            st.integers(1, 3),
            st.lists(st.integers(0, 40), min_size=K * 3, max_size=K * 3),
            st.integers(0, 3),
            st.integers(0, 7),
        )
    )
)
def test_ranked_ratings_give_the_same_assignment_as_the_ratings(case):
    K, N, values, lower, extra = case
    D = np.array(values[: K * N], dtype=np.int64).reshape(K, N)
    try:
        lo, hi = size_bounds(K, N, lower, lower + extra)
    except InfeasibleAssignment:
        return
    for method in ("lexmin_flow", "network_simplex"):
        got = lexmin_assignment(D, lower=lower, upper=lower + extra, method=method)
        expected = _lexmin_reference(D, lo, hi)
        np.testing.assert_array_equal(np.sort(got.ratings)[::-1], np.sort(D[np.arange(K), expected])[::-1])
        if method == "lexmin_flow":
            np.testing.assert_array_equal(got.labels, expected)  # the same bits, not just the same optimum
        np.testing.assert_array_equal(got.ratings, D[np.arange(K), got.labels])


def test_huge_ratings_are_ranked_not_exponentiated():
    import time

    D = np.array([[0, 10**8], [1, 0], [2, 3], [4, 1]])
    began = time.perf_counter()
    result = lexmin_assignment(D, lower=1, upper=3)
    assert time.perf_counter() - began < 5.0
    assert result.sorted_ratings.max() < 10**8  # the worst match avoids the huge rating
    np.testing.assert_array_equal(result.labels, _lexmin_reference(np.array([[0, 5], [1, 0], [2, 3], [4, 1]]), 1, 3))
    assert result.ratings.tolist() == D[np.arange(4), result.labels].tolist()
