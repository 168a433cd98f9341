"""One-shot federated K-means (MUFC Alg. 5) and the induced loss (MUFC Def. 3.1, Eq. (2))."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

from fedlib.cluster import OneShotFederatedKMeans, kmeans_objective, kmeans_plusplus
from fedlib.data import iid_partition, make_blobs, non_iid_partition


def test_induced_loss_is_objective_under_induced_labels(global_random_seed):
    X, y = make_blobs((200, 100, 50, 20), 4, cluster_std=0.1, random_state=global_random_seed)
    parts = non_iid_partition(y, 10, max_clusters_per_client=2, random_state=global_random_seed)
    result = OneShotFederatedKMeans(4, random_state=global_random_seed).fit(X, parts)
    assert result.federated_loss_ == pytest.approx(kmeans_objective(X, result.server_centers_, labels=result.labels_))
    assert result.nearest_loss_ == pytest.approx(kmeans_objective(X, result.server_centers_))
    assert result.federated_loss_ >= result.nearest_loss_ - 1e-9
    # every point inherits the server label of its local centre
    for idx, counts, srv in zip(parts, result.client_counts_, result.center_labels_, strict=True):
        assert counts.sum() == idx.size
        assert set(result.labels_[idx].tolist()) <= set(srv.tolist())


def test_single_client_reduces_to_local_seeding():
    """With L=1 the server clusters K weighted points into K clusters: its centres are the client's seeds."""
    X, _ = make_blobs((40, 30, 20), 3, random_state=0)
    parts = [np.arange(len(X))]
    result = OneShotFederatedKMeans(3, random_state=5).fit(X, parts)
    seeds = result.client_centers_[0]
    np.testing.assert_allclose(np.sort(result.server_centers_, axis=0), np.sort(seeds, axis=0))


def test_same_seed_same_result():
    X, _ = make_blobs((100, 100), 2, random_state=1)
    parts = iid_partition(len(X), 5, random_state=0)
    a = OneShotFederatedKMeans(2, random_state=3).fit(X, parts)
    b = OneShotFederatedKMeans(2, random_state=3).fit(X, parts)
    np.testing.assert_array_equal(a.server_centers_, b.server_centers_)


def test_client_seeds_use_independent_streams():
    """Client l's seeding depends only on its own data and stream, not on the other clients."""
    X, _ = make_blobs((60, 60), 3, random_state=2)
    parts = iid_partition(len(X), 4, random_state=0)
    a = OneShotFederatedKMeans(2, random_state=9).fit(X, parts)
    X2 = X.copy()
    X2[parts[0]] += 5.0  # change client 0 only
    b = OneShotFederatedKMeans(2, random_state=9).fit(X2, parts)
    for client in range(1, 4):
        np.testing.assert_array_equal(a.client_centers_[client], b.client_centers_[client])


def test_predict_needs_fit_and_matching_features():
    X, _ = make_blobs((30, 30), 2, random_state=0)
    model = OneShotFederatedKMeans(2, random_state=0)
    with pytest.raises(NotFittedError):
        model.predict(X)
    model.fit(X, iid_partition(len(X), 3, random_state=0))
    np.testing.assert_array_equal(model.predict(X), model.predict(X.tolist()))
    with pytest.raises(ValueError, match="n_features"):
        model.predict(X[:, :1])


def test_partition_must_cover_every_point_once():
    X = np.zeros((6, 2))
    with pytest.raises(ValueError, match="partition"):
        OneShotFederatedKMeans(2).fit(X, [np.array([0, 1, 2]), np.array([2, 3, 4])])
    with pytest.raises(ValueError, match="holds no points"):
        OneShotFederatedKMeans(2).fit(X, [np.arange(6), np.array([], dtype=int)])


def test_weights_help_on_imbalanced_data():
    """MUFC's motivation: with one large cluster, unit weights let small clusters outvote it."""
    X, y = make_blobs((3000, 200, 100, 50), 4, cluster_std=0.2, random_state=0)
    parts = non_iid_partition(y, 40, max_clusters_per_client=2, random_state=0)
    weighted = np.mean([OneShotFederatedKMeans(4, random_state=s).fit(X, parts).federated_loss_ for s in range(5)])
    unweighted = np.mean(
        [OneShotFederatedKMeans(4, weighted=False, random_state=s).fit(X, parts).federated_loss_ for s in range(5)]
    )
    assert weighted < unweighted


def test_kmeanspp_used_at_clients_is_the_library_one():
    X, _ = make_blobs((50,), 2, random_state=0)
    parts = [np.arange(50)]
    result = OneShotFederatedKMeans(3, random_state=np.random.SeedSequence(4)).fit(X, parts)
    client_stream = np.random.default_rng(np.random.SeedSequence(4).spawn(2)[0])
    np.testing.assert_array_equal(result.client_centers_[0], kmeans_plusplus(X, 3, random_state=client_stream)[0])
