"""Squared distances and nearest-centre assignment (fedlib/cluster/_distance.py) against brute force."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from fedlib.cluster import assign_to_nearest, row_norms_squared, squared_distances

floats = st.floats(-100, 100, allow_nan=False, width=32)
small_ints = st.integers(-20, 20)


def brute_squared_distances(X, C):
    """``||x_i − c_j||²`` by differences, one pair at a time."""
    return np.array([[float(np.sum((x - c) ** 2)) for c in C] for x in X])


@given(arrays(np.float64, st.tuples(st.integers(1, 20), st.integers(1, 6)), elements=floats))
def test_row_norms_squared_equal_sums_of_squares(X):
    np.testing.assert_allclose(row_norms_squared(X), [sum(v * v for v in row) for row in X.tolist()], rtol=1e-12)


@given(st.integers(1, 15), st.integers(1, 8), st.integers(1, 5), st.data())
def test_squared_distances_equal_brute_force(n, k, d, data):
    X = data.draw(arrays(np.float64, (n, d), elements=floats))
    C = data.draw(arrays(np.float64, (k, d), elements=floats))
    got = squared_distances(X, C)
    assert got.shape == (n, k) and np.all(got >= 0.0)
    scale = max(1.0, float(np.max(np.abs(X))) ** 2 + float(np.max(np.abs(C))) ** 2)
    np.testing.assert_allclose(got, brute_squared_distances(X, C), rtol=1e-9, atol=1e-9 * scale)
    # precomputed norms give the same bits
    np.testing.assert_array_equal(squared_distances(X, C, x_squared_norms=row_norms_squared(X)), got)


@given(st.integers(1, 30), st.integers(1, 10), st.integers(1, 4), st.data())
def test_assignment_on_integer_points_equals_brute_argmin_with_ties_to_the_lowest_index(n, k, d, data):
    """Small integer coordinates make every float operation exact, so labels and ties must match exactly."""
    X = data.draw(arrays(np.float64, (n, d), elements=small_ints))
    C = data.draw(arrays(np.float64, (k, d), elements=small_ints))
    labels, d2 = assign_to_nearest(X, C)
    brute = brute_squared_distances(X, C)
    np.testing.assert_array_equal(labels, [min(range(k), key=lambda j, r=r: (r[j], j)) for r in brute])
    np.testing.assert_array_equal(d2, brute.min(axis=1))
    assert labels.dtype == np.int64


def test_assignment_in_row_chunks_equals_brute_force():
    """2**15 centres: rows are processed in chunks of 128, so 300 rows take three chunks."""
    rng = np.random.default_rng(0)
    X = rng.integers(-50, 50, size=(300, 2)).astype(np.float64)
    C = rng.integers(-50, 50, size=(2**15, 2)).astype(np.float64)
    labels, d2 = assign_to_nearest(X, C)
    for i, x in enumerate(X):
        row = np.sum((C - x) ** 2, axis=1)
        assert labels[i] == np.argmin(row) and d2[i] == row.min()


def test_identical_points_are_at_distance_zero_not_below():
    X = np.array([[1e8 + 0.1, -3.3], [0.7, 1e-3]])
    d2 = squared_distances(X, X)
    assert np.all(d2 >= 0.0)  # round-off negatives are clipped
    assert np.all(np.diag(d2) <= 8 * np.finfo(np.float64).eps * row_norms_squared(X))  # only round-off is left
