"""KNOT's lexicographic client-to-cluster assignment (Su & Li 2023, Sec. IV) against brute force."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fedlib.cluster import (
    InfeasibleAssignment,
    lexmin_assignment,
    match_ratings,
    round_ratings,
    size_bounds,
)


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
