"""Lloyd from distances alone (SecFC's server): float and exact-integer oracles, center-separation initialisation."""

from __future__ import annotations

import numpy as np
import pytest

from fedlib.cluster import (
    FloatDistances,
    PlainIntegerDistances,
    centralized_lloyd,
    distance_lloyd,
    lloyd,
    squared_distances,
)
from fedlib.data import make_blobs
from fedlib.field import quantize


def _blobs(m, d, k, std, seed):
    sizes = np.full(k, m // k) + (np.arange(k) < m % k)
    return make_blobs(sizes, d, cluster_std=std, center_box=(-10.0, 10.0), random_state=seed)


def test_float_reference_matches_plain_lloyd_from_the_same_start():
    X, _ = _blobs(500, 10, 4, 1.0, 5)
    run = centralized_lloyd(X, 4, random_state=0)
    start = np.array([X[run.history[1] == h].mean(axis=0) for h in range(4)])
    np.testing.assert_array_equal(lloyd(X, start, tol=0.0).labels, run.labels)


def test_separation_initialisation_starts_from_seed_neighbourhoods():
    X, _ = _blobs(400, 5, 4, 0.5, 6)
    run = centralized_lloyd(X, 4, scale=10.0, random_state=1)
    first = run.history[0]
    assert set(np.unique(first)) <= {-1, 0, 1, 2, 3}
    for h, seed in enumerate(run.seeds):
        assert first[seed] == h


def test_oracles_return_scaled_squared_distances_to_the_means(global_random_seed):
    X, _ = _blobs(90, 4, 3, 2.0, global_random_seed)
    labels = np.random.default_rng(global_random_seed).integers(-1, 3, 90)
    labels[:3] = [0, 1, 2]  # no empty cluster
    sizes = np.bincount(labels[labels >= 0], minlength=3)
    means = np.stack([X[labels == h].mean(axis=0) for h in range(3)])
    np.testing.assert_allclose(FloatDistances(X)(labels, 3), squared_distances(X, means) * sizes**2, rtol=1e-9)
    Xq = quantize(X, 10.0)
    sums = [[int(v) for v in Xq[labels == h].sum(axis=0)] for h in range(3)]  # Python integers
    expected = np.array(
        [
            [sum((t - int(sizes[h]) * v) ** 2 for t, v in zip(sums[h], x, strict=True)) for h in range(3)]
            for x in Xq.tolist()
        ]
    )
    np.testing.assert_array_equal(PlainIntegerDistances(Xq)(labels, 3), expected)


def test_distance_lloyd_from_given_labels_stops_when_they_repeat():
    X, y = _blobs(200, 3, 2, 0.3, 1)
    run = distance_lloyd(FloatDistances(X), 2, init=y, max_iter=10, random_state=0)
    assert run.converged and run.n_iter == 1 and run.centers is None
    np.testing.assert_array_equal(run.labels, y)
    with pytest.raises(ValueError, match="init labels"):
        distance_lloyd(FloatDistances(X), 2, init=y[:-1])
