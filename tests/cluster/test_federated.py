"""One-shot federated K-means (fedlib/cluster/_federated.py; MUFC Alg. 5) and the induced loss (MUFC Def. 3.1)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

from fedlib.cluster import (
    KMeans,
    OneShotFederatedKMeans,
    kmeans_objective,
    kmeans_plusplus,
    lloyd,
    local_clusters,
)
from fedlib.data import iid_partition, make_blobs, non_iid_partition
from fedlib.utils import spawn_generators


def test_induced_loss_is_objective_under_induced_labels(global_random_seed):
    X, y = make_blobs((200, 100, 50, 20), 4, cluster_std=0.1, random_state=global_random_seed)
    parts = non_iid_partition(y, 10, max_clusters_per_client=2, random_state=global_random_seed)
    result = OneShotFederatedKMeans(4, random_state=global_random_seed).fit(X, parts=parts)
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
    result = OneShotFederatedKMeans(3, random_state=5).fit(X, parts=parts)
    seeds = result.client_centers_[0]
    np.testing.assert_allclose(np.sort(result.server_centers_, axis=0), np.sort(seeds, axis=0))


def test_same_seed_same_result():
    X, _ = make_blobs((100, 100), 2, random_state=1)
    parts = iid_partition(len(X), 5, random_state=0)
    a = OneShotFederatedKMeans(2, random_state=3).fit(X, parts=parts)
    b = OneShotFederatedKMeans(2, random_state=3).fit(X, parts=parts)
    np.testing.assert_array_equal(a.server_centers_, b.server_centers_)


def test_client_seeds_use_independent_streams():
    """Client l's seeding depends only on its own data and stream, not on the other clients."""
    X, _ = make_blobs((60, 60), 3, random_state=2)
    parts = iid_partition(len(X), 4, random_state=0)
    a = OneShotFederatedKMeans(2, random_state=9).fit(X, parts=parts)
    X2 = X.copy()
    X2[parts[0]] += 5.0  # change client 0 only
    b = OneShotFederatedKMeans(2, random_state=9).fit(X2, parts=parts)
    for client in range(1, 4):
        np.testing.assert_array_equal(a.client_centers_[client], b.client_centers_[client])


def test_predict_needs_fit_and_matching_features():
    X, _ = make_blobs((30, 30), 2, random_state=0)
    model = OneShotFederatedKMeans(2, random_state=0)
    with pytest.raises(NotFittedError):
        model.predict(X)
    model.fit(X, parts=iid_partition(len(X), 3, random_state=0))
    np.testing.assert_array_equal(model.predict(X), model.predict(X.tolist()))
    with pytest.raises(ValueError, match="X has 1 features, but OneShotFederatedKMeans is expecting 2"):
        model.predict(X[:, :1])


def test_partition_must_cover_every_point_once():
    X = np.zeros((6, 2))
    with pytest.raises(ValueError, match="parts overlap"):
        OneShotFederatedKMeans(2).fit(X, parts=[np.array([0, 1, 2]), np.array([2, 3, 4, 5])])
    with pytest.raises(ValueError, match="partition"):
        OneShotFederatedKMeans(2).fit(X, parts=[np.array([0, 1, 2]), np.array([3, 4])])
    with pytest.raises(ValueError, match="holds no points"):
        OneShotFederatedKMeans(2).fit(X, parts=[np.arange(6), np.array([], dtype=int)])


def test_weights_help_on_imbalanced_data():
    """MUFC's motivation: with one large cluster, unit weights let small clusters outvote it."""
    X, y = make_blobs((3000, 200, 100, 50), 4, cluster_std=0.2, random_state=0)
    parts = non_iid_partition(y, 40, max_clusters_per_client=2, random_state=0)
    weighted = np.mean(
        [OneShotFederatedKMeans(4, random_state=s).fit(X, parts=parts).federated_loss_ for s in range(5)]
    )
    unweighted = np.mean(
        [
            OneShotFederatedKMeans(4, weighted=False, random_state=s).fit(X, parts=parts).federated_loss_
            for s in range(5)
        ]
    )
    assert weighted < unweighted


def test_kmeanspp_used_at_clients_is_the_library_one():
    X, _ = make_blobs((50,), 2, random_state=0)
    parts = [np.arange(50)]
    result = OneShotFederatedKMeans(3, random_state=np.random.SeedSequence(4)).fit(X, parts=parts)
    client_stream = np.random.default_rng(np.random.SeedSequence(4).spawn(2)[0])
    np.testing.assert_array_equal(result.client_centers_[0], kmeans_plusplus(X, 3, random_state=client_stream)[0])


def nearest(points, centres):
    """Index of the nearest centre of each point, by differences."""
    return np.array([int(np.argmin([np.sum((p - c) ** 2) for c in centres])) for p in points])


def test_fitted_attributes_equal_their_definitions(global_random_seed):
    """MUFC Alg. 5 step by step from the fitted attributes: local clusters, counts, server step, induced labels."""
    X, y = make_blobs((80, 60, 40, 20), 3, cluster_std=0.2, random_state=global_random_seed)
    parts = non_iid_partition(y, 6, max_clusters_per_client=2, random_state=global_random_seed)
    model = OneShotFederatedKMeans(4, server_n_init=3, random_state=global_random_seed).fit(X, parts=parts)
    streams = spawn_generators(global_random_seed, len(parts) + 1)
    for idx, rng, C, counts, srv in zip(
        parts, streams[:-1], model.client_centers_, model.client_counts_, model.center_labels_, strict=True
    ):
        np.testing.assert_array_equal(C, kmeans_plusplus(X[idx], min(4, idx.size), random_state=rng)[0])
        local = nearest(X[idx], C)
        np.testing.assert_array_equal(counts, np.bincount(local, minlength=len(C)))
        np.testing.assert_array_equal(srv, nearest(C, model.server_centers_))
        np.testing.assert_array_equal(model.labels_[idx], srv[local])  # the induced clustering (MUFC Def. 3.1)
    pool = np.vstack(model.client_centers_)
    w = np.concatenate(model.client_counts_).astype(float)
    server = KMeans(4, n_init=3, random_state=streams[-1]).fit(pool[w > 0], sample_weight=w[w > 0])
    np.testing.assert_array_equal(model.server_centers_, server.cluster_centers_)
    assert model.federated_loss_ == pytest.approx(
        sum(float(np.sum((x - model.server_centers_[h]) ** 2)) for x, h in zip(X, model.labels_, strict=True))
    )
    assert model.nearest_loss_ == pytest.approx(
        sum(min(float(np.sum((x - c) ** 2)) for c in model.server_centers_) for x in X)
    )


def test_client_lloyd_refines_the_seeds_with_lloyd(global_random_seed):
    X, _ = make_blobs((50, 50), 2, cluster_std=0.3, random_state=global_random_seed)
    parts = iid_partition(len(X), 3, random_state=global_random_seed)
    model = OneShotFederatedKMeans(3, client_lloyd=True, random_state=global_random_seed).fit(X, parts=parts)
    for idx, rng, C in zip(parts, spawn_generators(global_random_seed, 4)[:-1], model.client_centers_, strict=True):
        seeds = kmeans_plusplus(X[idx], 3, random_state=rng)[0]
        np.testing.assert_allclose(C, lloyd(X[idx], seeds).centers, rtol=1e-12, atol=1e-12)


def test_local_clusters_are_seeds_or_lloyd_and_nearest_labels():
    X, _ = make_blobs((30, 30, 30), 2, random_state=1)
    seeds = np.array([4, 40, 70])
    C, labels = local_clusters(X, seeds, lloyd=False)
    np.testing.assert_array_equal(C, X[seeds])
    np.testing.assert_array_equal(labels, nearest(X, C))
    C, labels = local_clusters(X, seeds, lloyd=True)
    np.testing.assert_allclose(C, lloyd(X, X[seeds]).centers, rtol=1e-12)
    np.testing.assert_array_equal(labels, nearest(X, C))


def test_a_client_with_fewer_than_k_points_sends_all_of_them_and_fit_warns():
    X, _ = make_blobs((30, 30), 2, random_state=2)
    parts = [np.arange(2), np.arange(2, 60)]
    with pytest.warns(UserWarning, match="1 of 2 clients hold fewer points than n_clusters=4") as record:
        model = OneShotFederatedKMeans(4, random_state=0).fit(X, parts=parts)
    assert len(record) == 1  # once per fit, not once per client
    assert "the smallest holds 2" in str(record[0].message)
    assert "uses all its points as its local centres" in str(record[0].message)
    assert record[0].filename == __file__  # points at the caller of fit
    np.testing.assert_array_equal(np.sort(model.client_centers_[0], axis=0), np.sort(X[:2], axis=0))
    assert model.client_counts_[0].tolist() == [1, 1]


def test_small_client_warning_counts_every_small_client_once_per_fit():
    X, _ = make_blobs((30, 30), 2, random_state=2)
    parts = [np.arange(2), np.arange(2, 5), np.arange(5, 60)]
    model = OneShotFederatedKMeans(4, random_state=0)
    for _ in range(2):
        with pytest.warns(UserWarning, match="2 of 3 clients hold fewer points than n_clusters=4") as record:
            model.fit(X, parts=parts)
        assert len(record) == 1


def test_no_small_client_warning_when_every_client_holds_k_points():
    X, _ = make_blobs((30, 30), 2, random_state=2)
    parts = [np.arange(4), np.arange(4, 60)]  # exactly K points is enough for K centres
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        model = OneShotFederatedKMeans(4, random_state=0).fit(X, parts=parts)
    assert model.client_centers_[0].shape == (4, 2)
