"""Cluster sizes, sums and the sparse membership matrix (fedlib/cluster/_membership.py) against a Python loop."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from fedlib.cluster import cluster_sizes, cluster_sums, membership_matrix


@st.composite
def clusterings(draw, max_n=25):
    """Labels in -1..k-1 (-1: in no cluster) for n points."""
    k = draw(st.integers(1, 6))
    n = draw(st.integers(1, max_n))
    labels = np.array(draw(st.lists(st.integers(-1, k - 1), min_size=n, max_size=n)), dtype=np.int64)
    return labels, k


@given(clusterings())
def test_cluster_sizes_count_each_label_and_skip_minus_one(clustering):
    labels, k = clustering
    got = cluster_sizes(labels, k)
    assert got.dtype == np.int64
    assert got.tolist() == [sum(1 for v in labels.tolist() if v == h) for h in range(k)]


@given(clusterings(), st.data())
def test_membership_matrix_equals_a_loop(clustering, data):
    labels, k = clustering
    n = labels.size
    weights = data.draw(st.none() | arrays(np.float64, n, elements=st.floats(0, 10)))
    M = membership_matrix(labels, k, weights=weights)
    assert M.shape == (k, n)
    expected = np.zeros((k, n))
    for i, h in enumerate(labels.tolist()):
        if h >= 0:
            expected[h, i] = 1.0 if weights is None else weights[i]
    np.testing.assert_array_equal(M.toarray(), expected)
    if weights is None:
        assert M.dtype == np.int64


@given(clusterings(), st.data())
def test_float_cluster_sums_equal_a_loop(clustering, data):
    labels, k = clustering
    n = labels.size
    d = data.draw(st.integers(1, 4))
    X = data.draw(arrays(np.float64, (n, d), elements=st.floats(-1e3, 1e3)))
    w = data.draw(arrays(np.float64, n, elements=st.floats(0, 5)))
    expected = np.zeros((k, d))
    weighted = np.zeros((k, d))
    for i, h in enumerate(labels.tolist()):
        if h >= 0:
            expected[h] += X[i]
            weighted[h] += w[i] * X[i]
    np.testing.assert_allclose(cluster_sums(X, labels, k), expected, rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(cluster_sums(X, labels, k, weights=w), weighted, rtol=1e-12, atol=1e-9)


@given(clusterings(max_n=8), st.data())
def test_integer_cluster_sums_are_exact_python_integers(clustering, data):
    """int64 accumulation: sums of up to eight values near 2**59 are exact (a float64 sum would not be)."""
    labels, k = clustering
    n = labels.size
    X = data.draw(arrays(np.int64, (n, 2), elements=st.integers(-(2**59), 2**59)))
    got = cluster_sums(X, labels, k)
    assert got.dtype == np.int64
    expected = [[sum(int(X[i, c]) for i in range(n) if labels[i] == h) for c in range(2)] for h in range(k)]
    assert got.tolist() == expected


def test_empty_cluster_has_zero_size_and_zero_sum():
    X = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    labels = np.array([2, -1, 2])
    assert cluster_sizes(labels, 4).tolist() == [0, 0, 2, 0]
    assert cluster_sums(X, labels, 4).tolist() == [[0.0, 0.0], [0.0, 0.0], [6.0, 8.0], [0.0, 0.0]]
