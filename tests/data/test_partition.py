"""Client partitions: coverage, the K' property of the non-iid split, determinism."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fedlib import data


def assert_partition(parts, n):
    flat = np.concatenate(parts)
    np.testing.assert_array_equal(np.sort(flat), np.arange(n))


@given(st.integers(1, 500), st.integers(1, 40), st.integers(0, 2**32 - 1))
def test_iid_partition_covers_every_index_once(n, n_clients, seed):
    if n < n_clients:
        with pytest.raises(ValueError, match="n_clients"):
            data.iid_partition(n, n_clients, random_state=seed)
        return
    parts = data.iid_partition(n, n_clients, random_state=seed)
    assert len(parts) == n_clients
    assert_partition(parts, n)
    assert max(p.size for p in parts) - min(p.size for p in parts) <= 1


@pytest.mark.parametrize(("sizes", "n_clients", "k_prime"), [((6506, 2328, 2201, 974), 100, 2), ((3000,) * 10, 100, 3)])
def test_non_iid_partition_holds_at_most_k_prime_clusters(sizes, n_clients, k_prime, global_random_seed):
    labels = np.repeat(np.arange(len(sizes)), sizes)
    parts = data.non_iid_partition(labels, n_clients, max_clusters_per_client=k_prime, random_state=global_random_seed)
    assert len(parts) == n_clients
    assert_partition(parts, labels.size)
    counts = data.client_cluster_counts(parts, labels)
    assert (counts > 0).sum(axis=1).max() <= k_prime
    assert max(p.size for p in parts[:-1]) <= labels.size // n_clients


def test_non_iid_partition_same_seed_same_split():
    labels = np.repeat(np.arange(4), [500, 300, 150, 50])
    a = data.non_iid_partition(labels, 10, max_clusters_per_client=2, random_state=4)
    b = data.non_iid_partition(labels, 10, max_clusters_per_client=2, random_state=4)
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))


def test_non_iid_partition_rejects_bad_k_prime():
    with pytest.raises(ValueError, match=r"max_clusters_per_client=5 should lie in \[1, n_clusters=2\]"):
        data.non_iid_partition(np.array([0, 1] * 10), 2, max_clusters_per_client=5)


def test_partition_by_group():
    groups = np.array([3, 1, 3, 2, 1])
    parts = data.partition_by_group(groups)
    assert [p.tolist() for p in parts] == [[1, 4], [3], [0, 2]]


def test_subsample_indices():
    np.testing.assert_array_equal(data.subsample_indices(5, None), np.arange(5))
    idx = data.subsample_indices(100, 10, random_state=0)
    assert idx.size == 10 and np.all(np.diff(idx) > 0)
