"""Lloyd from distances alone (fedlib/cluster/_distance_lloyd.py): oracles, assignment, center separation, drivers."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from fedlib.cluster import (
    FloatDistances,
    OracleColumns,
    PlainIntegerDistances,
    assign_from_distances,
    centralized_lloyd,
    distance_lloyd,
    lloyd,
    separate,
    squared_distances,
)
from fedlib.data import make_blobs
from fedlib.exceptions import FieldOverflowError
from fedlib.field import to_fixed_point
from fedlib.utils import spawn_generators


def _blobs(m, d, k, std, seed):
    sizes = np.full(k, m // k) + (np.arange(k) < m % k)
    return make_blobs(sizes, d, cluster_std=std, center_box=(-10.0, 10.0), random_state=seed)


def python_seed_distances(X_int, seeds):
    """``||x̄_i − x̄_c||²`` in Python integers."""
    rows = X_int.tolist()
    return [[sum((a - b) ** 2 for a, b in zip(x, rows[c], strict=True)) for c in seeds] for x in rows]


def separation_by_definition(d, seeds):
    """SecFC Sec. 5 by the letter: h where 9 d[i][h] <= d[i][s] for every s != h (lowest h), else -1;
    then every empty S'_h becomes {seed_h}."""
    m, k = len(d), len(seeds)
    if k == 1:
        return [0] * m
    labels = []
    for row in d:
        qualifying = [h for h in range(k) if all(9 * row[h] <= row[s] for s in range(k) if s != h)]
        labels.append(min(qualifying) if qualifying else -1)
    empty = [h for h in range(k) if h not in labels]
    for h in empty:
        labels[seeds[h]] = h
    return labels


# --- the oracles ----------------------------------------------------------------------------------------------


def test_oracles_return_scaled_squared_distances_to_the_means(global_random_seed):
    X, _ = _blobs(90, 4, 3, 2.0, global_random_seed)
    labels = np.random.default_rng(global_random_seed).integers(-1, 3, 90)
    labels[:3] = [0, 1, 2]  # no empty cluster
    sizes = np.bincount(labels[labels >= 0], minlength=3)
    means = np.stack([X[labels == h].mean(axis=0) for h in range(3)])
    np.testing.assert_allclose(FloatDistances(X)(labels, 3), squared_distances(X, means) * sizes**2, rtol=1e-9)
    Xq = to_fixed_point(X, 10.0)
    sums = [[int(v) for v in Xq[labels == h].sum(axis=0)] for h in range(3)]  # Python integers
    expected = np.array(
        [
            [sum((t - int(sizes[h]) * v) ** 2 for t, v in zip(sums[h], x, strict=True)) for h in range(3)]
            for x in Xq.tolist()
        ]
    )
    np.testing.assert_array_equal(PlainIntegerDistances(Xq)(labels, 3), expected)


def test_integer_oracle_is_exact_beyond_float_precision():
    """Entries near 2**25 make m·d·max|x̄|² pass 2**53 (no exact float path): int64 must equal Python integers."""
    rng = np.random.default_rng(1)
    X_int = rng.integers(-(2**25), 2**25, size=(12, 3))
    X_int[0, 0] = 2**25 - 1
    labels = np.array([0, 1] * 6)
    oracle = PlainIntegerDistances(X_int)
    rows = X_int.tolist()
    expected = []
    for x in rows:
        row = []
        for h in range(2):
            members = [r for r, lab in zip(rows, labels.tolist(), strict=True) if lab == h]
            total = [sum(col) for col in zip(*members, strict=True)]
            row.append(sum((t - len(members) * v) ** 2 for t, v in zip(total, x, strict=True)))
        expected.append(row)
    assert oracle(labels, 2).tolist() == expected


def test_integer_oracle_refuses_data_that_could_overflow_int64():
    with pytest.raises(FieldOverflowError, match="too large for exact int64 distances"):
        PlainIntegerDistances(np.full((100, 4), 2**27))


def test_oracle_columns_are_squared_distances_to_the_seeds(global_random_seed):
    X, _ = _blobs(40, 3, 2, 1.0, global_random_seed)
    seeds = np.array([5, 0, 17])
    expected = ((X[:, None, :] - X[None, seeds, :]) ** 2).sum(axis=2)
    np.testing.assert_allclose(OracleColumns(FloatDistances(X))(seeds), expected, rtol=1e-9, atol=1e-9)
    X_int = to_fixed_point(X, 100.0)
    columns = OracleColumns(PlainIntegerDistances(X_int))
    assert columns.n_samples == 40
    assert columns(seeds).tolist() == python_seed_distances(X_int, seeds.tolist())


# --- assignment and separation --------------------------------------------------------------------------------


@given(st.integers(1, 12), st.integers(1, 5), st.data())
def test_assignment_from_distances_equals_exact_rational_argmin(m, k, data):
    """d_{i,h} = d'_{i,h} / |S_h|² compared as exact fractions; empty clusters never win; ties to the lowest h."""
    distances = data.draw(arrays(np.int64, (m, k), elements=st.integers(0, 1000)))
    sizes = data.draw(arrays(np.int64, k, elements=st.integers(0, 10)).filter(lambda s: s.any()))
    expected = []
    for row in distances.tolist():
        alive = [h for h in range(k) if sizes[h] > 0]
        expected.append(min(alive, key=lambda h, row=row: (Fraction(row[h], int(sizes[h]) ** 2), h)))
    got = assign_from_distances(distances, sizes)
    assert got.dtype == np.int64 and got.tolist() == expected


@given(st.integers(2, 15), st.data())
def test_separation_equals_its_definition(m, data):
    k = data.draw(st.integers(1, min(5, m)))
    seeds = data.draw(st.lists(st.integers(0, m - 1), min_size=k, max_size=k, unique=True))
    d = data.draw(arrays(np.int64, (m, k), elements=st.integers(0, 200)))
    assert separate(d, np.array(seeds)).tolist() == separation_by_definition(d.tolist(), seeds)


def test_separation_examples():
    d = np.array([[0, 100], [50, 60], [100, 0], [10, 90], [11, 99]])
    # 9·10 = 90 <= 90 qualifies (the bound is inclusive); 9·11 = 99 <= 99 too; 50 vs 60 does not
    assert separate(d, np.array([0, 2])).tolist() == [0, -1, 1, 0, 0]
    nobody = np.array([[5, 6], [6, 5], [5, 5]])  # no point is three times closer to one seed
    assert separate(nobody, np.array([2, 0])).tolist() == [1, -1, 0]  # empty S'_h become {seed_h}
    assert separate(nobody[:, :1], np.array([0])).tolist() == [0, 0, 0]


# --- the drivers ----------------------------------------------------------------------------------------------


def test_float_reference_matches_plain_lloyd_from_the_same_start():
    X, _ = _blobs(500, 10, 4, 1.0, 5)
    run = centralized_lloyd(X, 4, random_state=0)
    start = np.array([X[run.history[1] == h].mean(axis=0) for h in range(4)])
    np.testing.assert_array_equal(lloyd(X, start, tol=0.0).labels, run.labels)


def test_separation_initialisation_starts_from_seed_neighbourhoods(global_random_seed):
    """history[0] is center separation of the K-means++ seeds, recomputed here in Python integers."""
    X, _ = _blobs(200, 5, 4, 0.5, global_random_seed)
    run = centralized_lloyd(X, 4, scale=10.0, random_state=global_random_seed)
    seeds = run.seeds.tolist()
    assert len(set(seeds)) == 4
    expected = separation_by_definition(python_seed_distances(to_fixed_point(X, 10.0), seeds), seeds)
    assert run.history[0].tolist() == expected
    assert all(run.history[0][s] == h for h, s in enumerate(seeds))


def test_run_record_is_consistent():
    X, _ = _blobs(150, 3, 3, 1.0, 2)
    run = centralized_lloyd(X, 3, scale=5.0, random_state=3)
    assert len(run.history) == run.n_iter + 1 and len(run.assign_seconds) == run.n_iter
    np.testing.assert_array_equal(run.labels, run.history[-1])
    assert run.converged and np.array_equal(run.history[-1], run.history[-2])  # stopped on repeated labels
    sizes = np.bincount(run.history[-2], minlength=3)
    np.testing.assert_array_equal(run.labels, assign_from_distances(run.distances, sizes))
    assert run.centers is None and run.inertia is None


def test_random_assignment_draws_the_first_labels_from_child_zero():
    X, _ = _blobs(60, 2, 3, 1.0, 4)
    run = centralized_lloyd(X, 3, init="random_assignment", random_state=8)
    expected = spawn_generators(8, 3)[0].integers(0, 3, size=60)
    np.testing.assert_array_equal(run.history[0], expected)
    assert run.seeds is None


def test_distance_lloyd_from_given_labels_stops_when_they_repeat():
    X, y = _blobs(200, 3, 2, 0.3, 1)
    run = distance_lloyd(FloatDistances(X), 2, init=y, max_iter=10, random_state=0)
    assert run.converged and run.n_iter == 1 and run.centers is None
    np.testing.assert_array_equal(run.labels, y)
    with pytest.raises(ValueError, match="init labels"):
        distance_lloyd(FloatDistances(X), 2, init=y[:-1])
    with pytest.raises(ValueError, match="init labels"):
        distance_lloyd(FloatDistances(X), 2, init=np.full(200, 2))
    with pytest.raises(ValueError, match="init must be 'kmeans\\+\\+', 'random_assignment'"):
        distance_lloyd(FloatDistances(X), 2, init="forgy")
    with pytest.raises(TypeError, match="n_clusters must be an int"):
        distance_lloyd(FloatDistances(X), 2.0)


def test_max_iter_caps_the_rounds():
    X, _ = _blobs(300, 2, 5, 3.0, 0)
    run = distance_lloyd(FloatDistances(X), 5, init="random_assignment", max_iter=1, random_state=0)
    assert run.n_iter == 1 and not run.converged and len(run.history) == 2


# --- exact assignment (issue 11, item 4) ----------------------------------------------------------------------


def _fraction_argmin(row, sizes):
    """Brute force: the non-empty cluster with the least ``Fraction(d'_h, |S_h|²)``, the lowest index on ties."""
    alive = [h for h in range(len(sizes)) if sizes[h] > 0]
    return min(alive, key=lambda h: (Fraction(int(row[h]), int(sizes[h]) ** 2), h))


def _greedy_squares(n, d):
    """``d`` non-negative ints, the first dominant, whose squares add up to ``n``."""
    out = []
    while n:
        a = math.isqrt(n)
        out.append(a)
        n -= a * a
    assert len(out) <= d
    return out + [0] * (d - len(out))


def float_tie_data(size_a=6, size_b=7, n_features=12):
    """Integer points where point 0's two ratios ``d'/|S|²`` differ by ``1/(36·49)`` but are the same float64.

    Point 0 (the origin) and five others form cluster 1 (``|S_1| = 6``), seven points cluster 0; ``d'_{0,0} = N_B``
    and ``d'_{0,1} = N_A`` with ``36 N_B − 49 N_A = 1``, so cluster 1 is nearer by exactly ``1/1764``, while
    ``float(N_A)/36 == float(N_B)/49``. Every ``d'`` stays below ``2**49 < q/2``.
    """
    a2, b2 = size_a**2, size_b**2
    n_b = (2**48 // b2) * b2 + pow(a2, -1, b2)  # a2 · n_b ≡ 1 (mod b2)
    while True:
        n_a = (a2 * n_b - 1) // b2
        if float(n_a) / a2 == float(n_b) / b2:
            break
        n_b += b2
    t_a, t_b = np.array(_greedy_squares(n_a, n_features)), np.array(_greedy_squares(n_b, n_features))
    cluster_a = [t_a // (size_a - 1)] * (size_a - 2) + [t_a - (size_a - 2) * (t_a // (size_a - 1))]
    cluster_b = [t_b // size_b] * (size_b - 1) + [t_b - (size_b - 1) * (t_b // size_b)]
    X = np.array([np.zeros(n_features, dtype=np.int64), *cluster_a, *cluster_b], dtype=np.int64)
    labels = np.array([1] * size_a + [0] * size_b)
    return X, labels, n_a, n_b


def test_assignment_is_exact_where_the_float_ratios_tie():
    # (10**17 + 1) / 10**4² = 10**9 + 10**-8 against 10**9 / 1²: equal in float64, cluster 1 nearer exactly
    distances = np.array([[10**17 + 1, 10**9], [10**17, 10**9], [10**9, 10**17 + 1]], dtype=np.int64)
    sizes = np.array([10**4, 1])
    assert float(distances[0, 0]) / 1e8 == float(distances[0, 1])  # the float comparison cannot see it
    # row 1 is an exact tie (lowest index wins); in row 2 the roles are swapped
    assert assign_from_distances(distances, sizes).tolist() == [1, 0, 0]
    assert [_fraction_argmin(row, sizes) for row in distances.tolist()] == [1, 0, 0]


def test_integer_lloyd_step_is_exact_where_the_float_ratios_tie():
    """One Lloyd step of the integer reference on points whose two ratios tie in float64 (issue 11, item 4)."""
    X, labels, n_a, n_b = float_tie_data()
    oracle = PlainIntegerDistances(X)
    distances = oracle(labels, 2)
    assert distances[0].tolist() == [n_b, n_a] and 36 * n_b - 49 * n_a == 1
    run = distance_lloyd(oracle, 2, init=labels, max_iter=1)
    assert run.history[1][0] == 1  # d'_{0,1}/36 < d'_{0,0}/49 exactly; the float argmin said 0
    sizes = np.bincount(labels)
    assert run.history[1].tolist() == [_fraction_argmin(row, sizes) for row in distances.tolist()]


def _near_ties(data, m, k):
    """Distances ``d'_h = r |S_h|² + δ`` with a shared ``r`` and ``δ ∈ {-1, 0, 1}``: ties and near ties."""
    sizes = np.array(data.draw(st.lists(st.integers(0, 10**6), min_size=k, max_size=k).filter(any)), dtype=np.int64)
    rows = []
    for _ in range(m):
        r = data.draw(st.integers(0, 2**62 // 10**12))
        rows.append([max(0, r * int(s) ** 2 + data.draw(st.integers(-1, 1))) for s in sizes.tolist()])
    return np.array(rows, dtype=np.int64), sizes


@given(st.integers(1, 8), st.integers(1, 6), st.booleans(), st.data())
def test_assignment_equals_the_fraction_argmin_on_large_values_and_near_ties(m, k, near, data):
    """Exact on int64 ``d'`` up to 2**62 and sizes up to 10**6 (products far past int64), ties to the lowest index."""
    if near:
        distances, sizes = _near_ties(data, m, k)
    else:
        distances = data.draw(arrays(np.int64, (m, k), elements=st.integers(0, 2**62)))
        sizes = data.draw(arrays(np.int64, k, elements=st.integers(0, 10**6)).filter(lambda s: s.any()))
    got = assign_from_distances(distances, sizes)
    assert got.dtype == np.int64
    assert got.tolist() == [_fraction_argmin(row, sizes.tolist()) for row in distances.tolist()]
