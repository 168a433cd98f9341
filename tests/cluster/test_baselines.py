"""K-FED and DC-KM baselines: induced losses, determinism, DC-KM deletions."""

from __future__ import annotations

import numpy as np
import pytest

from fedlib.cluster import DCKMeans, KMeans, kfed, kmeans_objective, one_shot_federated_kmeans
from fedlib.data import make_blobs, non_iid_partition


@pytest.fixture(scope="module")
def problem():
    X, y = make_blobs((200, 150, 100, 50), 5, cluster_std=0.05, random_state=1)
    parts = non_iid_partition(y, 10, max_clusters_per_client=2, random_state=1)
    phi = KMeans(4, n_init=10, random_state=0).fit(X).inertia_
    return X, parts, phi


def test_kfed_finds_separated_clusters_with_k_prime_local_clusters(problem):
    """K-FED's design point: devices cluster with K' (here 2), the server completes to K by farthest points."""
    X, parts, phi = problem
    a = kfed(X, parts, 4, n_local_clusters=2, random_state=0)
    b = kfed(X, parts, 4, n_local_clusters=2, random_state=0)
    np.testing.assert_array_equal(a.server_centers, b.server_centers)
    assert a.federated_loss / phi < 1.5
    assert a.federated_loss >= kmeans_objective(X, a.server_centers) - 1e-9


def test_dckm_equals_unweighted_one_shot_with_full_leaves(problem):
    """DC-KM is the unweighted one-shot scheme with Lloyd at the leaves (same streams, same result)."""
    X, parts, _ = problem
    dc = DCKMeans(4, random_state=3).fit(X, parts)
    one_shot = one_shot_federated_kmeans(X, parts, 4, weighted=False, client_lloyd=True, random_state=3)
    np.testing.assert_allclose(dc.server_centers_, one_shot.server_centers)
    assert dc.federated_loss() == pytest.approx(one_shot.federated_loss)


def test_dckm_deletion_refits_leaf_and_root(problem):
    X, parts, _ = problem
    dc = DCKMeans(4, random_state=0).fit(X, parts)
    victim = int(dc.client_ids(2)[0])
    seconds = dc.remove(2, [victim])
    assert seconds > 0 and victim not in set(dc.client_ids(2).tolist())
    with pytest.raises(ValueError, match="does not hold"):
        dc.remove(2, [victim])
