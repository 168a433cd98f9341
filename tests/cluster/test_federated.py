"""One-shot federated K-means (MUFC Alg. 5) and the induced loss (MUFC Def. 3.1, Eq. (2))."""

from __future__ import annotations

import numpy as np
import pytest

from fedlib.cluster import kmeans_objective, kmeans_plusplus, one_shot_federated_kmeans
from fedlib.data import iid_partition, make_blobs, non_iid_partition


def test_induced_loss_is_objective_under_induced_labels(global_random_seed):
    X, y = make_blobs((200, 100, 50, 20), 4, cluster_std=0.1, random_state=global_random_seed)
    parts = non_iid_partition(y, 10, max_clusters_per_client=2, random_state=global_random_seed)
    result = one_shot_federated_kmeans(X, parts, 4, random_state=global_random_seed)
    assert result.federated_loss == pytest.approx(kmeans_objective(X, result.server_centers, labels=result.labels))
    assert result.nearest_loss == pytest.approx(kmeans_objective(X, result.server_centers))
    assert result.federated_loss >= result.nearest_loss - 1e-9
    # every point inherits the server label of its local centre
    for idx, counts, srv in zip(parts, result.client_counts, result.center_labels, strict=True):
        assert counts.sum() == idx.size
        assert set(result.labels[idx].tolist()) <= set(srv.tolist())


def test_single_client_reduces_to_local_seeding():
    """With L=1 the server clusters K weighted points into K clusters: its centres are the client's seeds."""
    X, _ = make_blobs((40, 30, 20), 3, random_state=0)
    parts = [np.arange(len(X))]
    result = one_shot_federated_kmeans(X, parts, 3, random_state=5)
    seeds = result.client_centers[0]
    np.testing.assert_allclose(np.sort(result.server_centers, axis=0), np.sort(seeds, axis=0))


def test_same_seed_same_result():
    X, _ = make_blobs((100, 100), 2, random_state=1)
    parts = iid_partition(len(X), 5, random_state=0)
    a = one_shot_federated_kmeans(X, parts, 2, random_state=3)
    b = one_shot_federated_kmeans(X, parts, 2, random_state=3)
    np.testing.assert_array_equal(a.server_centers, b.server_centers)


def test_client_seeds_use_independent_streams():
    """Client l's seeding depends only on its own data and stream, not on the other clients."""
    X, _ = make_blobs((60, 60), 3, random_state=2)
    parts = iid_partition(len(X), 4, random_state=0)
    a = one_shot_federated_kmeans(X, parts, 2, random_state=9)
    X2 = X.copy()
    X2[parts[0]] += 5.0  # change client 0 only
    b = one_shot_federated_kmeans(X2, parts, 2, random_state=9)
    for client in range(1, 4):
        np.testing.assert_array_equal(a.client_centers[client], b.client_centers[client])


def test_partition_must_cover_every_point_once():
    X = np.zeros((6, 2))
    with pytest.raises(ValueError, match="partition"):
        one_shot_federated_kmeans(X, [np.array([0, 1, 2]), np.array([2, 3, 4])], 2)
    with pytest.raises(ValueError, match="holds no points"):
        one_shot_federated_kmeans(X, [np.arange(6), np.array([], dtype=int)], 2)


def test_weights_help_on_imbalanced_data():
    """MUFC's motivation: with one large cluster, unit weights let small clusters outvote it."""
    X, y = make_blobs((3000, 200, 100, 50), 4, cluster_std=0.2, random_state=0)
    parts = non_iid_partition(y, 40, max_clusters_per_client=2, random_state=0)
    weighted = np.mean([one_shot_federated_kmeans(X, parts, 4, random_state=s).federated_loss for s in range(5)])
    unweighted = np.mean(
        [one_shot_federated_kmeans(X, parts, 4, weighted=False, random_state=s).federated_loss for s in range(5)]
    )
    assert weighted < unweighted


def test_kmeanspp_used_at_clients_is_the_library_one():
    X, _ = make_blobs((50,), 2, random_state=0)
    parts = [np.arange(50)]
    result = one_shot_federated_kmeans(X, parts, 3, random_state=np.random.SeedSequence(4))
    client_stream = np.random.default_rng(np.random.SeedSequence(4).spawn(2)[0])
    np.testing.assert_array_equal(result.client_centers[0], kmeans_plusplus(X, 3, random_state=client_stream)[0])
