"""K-means restarts shared by processes (fedbook.foundations.kmeans_fits): KMeans itself, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from fedbook.foundations import kmeans_fits

from fedlib.cluster import KMeans
from fedlib.data import make_blobs


def _same(a: KMeans, b: KMeans) -> None:
    np.testing.assert_array_equal(a.cluster_centers_, b.cluster_centers_)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    np.testing.assert_array_equal(a.seed_indices_, b.seed_indices_)
    assert (a.inertia_, a.n_iter_, a.n_init) == (b.inertia_, b.n_iter_, b.n_init)


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_kmeans_fits_equal_kmeans_and_leave_the_stream_where_fit_leaves_it(n_jobs):
    data = [make_blobs((80, 50, 30, 20), 3, cluster_std=0.6, random_state=s)[0] for s in range(3)]
    specs = [(data[0], 4, 5), (data[1], 3, 1), (data[2], 6, 4)]
    ours, theirs = np.random.default_rng(9), np.random.default_rng(9)
    fits = kmeans_fits([(X, K, n_init, ours) for X, K, n_init in specs] + [(data[0], 4, 3, 17)], n_jobs=n_jobs)
    expected = [KMeans(K, n_init=n_init, random_state=theirs).fit(X) for X, K, n_init in specs]
    expected.append(KMeans(4, n_init=3, random_state=17).fit(data[0]))  # an int seed: a fresh stream, as in fit
    for a, b in zip(fits, expected, strict=True):
        _same(a, b)
    assert ours.random() == theirs.random()

