"""K-FED (fedlib/cluster/_kfed.py; Dennis et al. 2021): SecFC's setting (k' local clusters) and MUFC's (K)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

from fedlib.cluster import KFED, KMeans, clustering_accuracy, kmeans_objective
from fedlib.data import k_prime_partition, make_blobs, make_gaussian_mixture, non_iid_partition


@pytest.mark.parametrize("k_prime", [1, 2, 4])
def test_kfed_with_k_prime_and_server_lloyd_recovers_separated_clusters(k_prime, global_random_seed):
    ds = make_gaussian_mixture(2000, 10, 4, cluster_std=0.5, random_state=global_random_seed)
    parts = k_prime_partition(ds.y, 10, k_prime, random_state=global_random_seed)
    fit = KFED(4, n_local_clusters=k_prime, server_max_iter=300, random_state=global_random_seed).fit(ds.X, parts)
    assert fit.labels_.shape == (2000,)
    assert clustering_accuracy(ds.y, fit.labels_) == 1.0
    # labels are the nearest final server centre of each row
    d2 = ((ds.X[:, None, :] - fit.server_centers_[None]) ** 2).sum(axis=2)
    np.testing.assert_array_equal(fit.labels_, d2.argmin(axis=1))
    np.testing.assert_array_equal(fit.predict(ds.X), fit.labels_)


def test_kfed_default_is_farthest_point_init_then_one_lloyd_step():
    """MUFC's adapted K-FED: the default server step is a single Lloyd step from cleanup-max's initialisation."""
    X, y = make_blobs((200, 150, 100, 50), 5, cluster_std=0.2, random_state=2)
    parts = non_iid_partition(y, 10, max_clusters_per_client=2, random_state=2)
    fit = KFED(4, n_local_clusters=2, random_state=2).fit(X, parts)
    again = KFED(4, n_local_clusters=2, server_max_iter=1, random_state=2).fit(X, parts)
    np.testing.assert_array_equal(fit.server_centers_, again.server_centers_)
    # independent recomputation of the server step from the devices' centres
    local = fit.client_centers_
    pool = np.vstack(local)
    chosen = list(range(len(local[0])))
    while len(chosen) < 4:
        d2 = ((pool[:, None, :] - pool[chosen][None]) ** 2).sum(axis=2).min(axis=1)
        chosen.append(int(np.argmax(d2)))
    init = pool[chosen]
    assign = ((pool[:, None, :] - init[None]) ** 2).sum(axis=2).argmin(axis=1)
    expected = np.stack([pool[assign == c].mean(axis=0) if np.any(assign == c) else init[c] for c in range(4)])
    np.testing.assert_allclose(fit.server_centers_, expected, rtol=1e-12, atol=1e-12)


def test_kfed_server_lloyd_to_convergence_never_worse_on_the_pool():
    """More server Lloyd iterations cannot raise the K-means objective of the pooled local centres."""
    X, y = make_blobs((200, 150, 100, 50), 5, cluster_std=0.3, random_state=4)
    parts = non_iid_partition(y, 10, max_clusters_per_client=2, random_state=4)
    one = KFED(4, random_state=4).fit(X, parts)
    many = KFED(4, server_max_iter=300, random_state=4).fit(X, parts)
    pool = np.vstack(one.client_centers_)
    for a, b in zip(one.client_centers_, many.client_centers_, strict=True):
        np.testing.assert_array_equal(a, b)  # the devices do the same work
    assert kmeans_objective(pool, many.server_centers_) <= kmeans_objective(pool, one.server_centers_) + 1e-9


def test_kfed_rejects_too_few_local_centres_and_bad_server_iterations():
    X, y = make_blobs((20, 20, 20, 20), 3, random_state=0)
    parts = k_prime_partition(y, 3, 2, random_state=0)
    with pytest.raises(
        ValueError, match=r"n_local_clusters \* n_clients >= n_clusters.*n_local_clusters=1, n_clients=3"
    ):
        KFED(4, n_local_clusters=1).fit(X, parts)
    with pytest.raises(ValueError, match="server_max_iter=0 should be >= 1"):
        KFED(4, n_local_clusters=2, server_max_iter=0).fit(X, parts)
    with pytest.raises(ValueError, match="n_local_clusters=0 should be >= 1"):
        KFED(4, n_local_clusters=0).fit(X, parts)
    with pytest.raises(TypeError, match="n_local_clusters must be an int"):
        KFED(4, n_local_clusters=2.5).fit(X, parts)
    with pytest.raises(NotFittedError):
        KFED(4).predict(X)


def test_kfed_finds_separated_clusters_with_k_prime_local_clusters():
    """K-FED's design point: devices cluster with K' (here 2), the server completes to K by farthest points."""
    X, y = make_blobs((200, 150, 100, 50), 5, cluster_std=0.05, random_state=1)
    parts = non_iid_partition(y, 10, max_clusters_per_client=2, random_state=1)
    phi = KMeans(4, n_init=10, random_state=0).fit(X).inertia_
    a = KFED(4, n_local_clusters=2, random_state=0).fit(X, parts)
    b = KFED(4, n_local_clusters=2, random_state=0).fit(X, parts)
    np.testing.assert_array_equal(a.server_centers_, b.server_centers_)
    assert a.federated_loss_ / phi < 1.5
    assert a.federated_loss_ >= kmeans_objective(X, a.server_centers_) - 1e-9


def test_kfed_federated_loss_is_the_induced_loss_of_its_centres(global_random_seed):
    """Each point goes to its nearest local centre, that centre to its nearest server centre (MUFC Def. 3.1)."""
    X, y = make_blobs((120, 90, 60, 30), 4, cluster_std=0.4, random_state=global_random_seed)
    parts = non_iid_partition(y, 8, max_clusters_per_client=2, random_state=global_random_seed)
    fit = KFED(4, n_local_clusters=2, random_state=global_random_seed).fit(X, parts)
    S = fit.server_centers_
    expected = 0.0
    for idx, C in zip(parts, fit.client_centers_, strict=True):
        assert C.shape == (min(2, idx.size), 4)
        for x in X[idx]:
            local = C[np.argmin(((C - x) ** 2).sum(axis=1))]
            expected += float(((x - S[np.argmin(((S - local) ** 2).sum(axis=1))]) ** 2).sum())
    assert fit.federated_loss_ == pytest.approx(expected, rel=1e-9)


def test_kfed_device_with_at_most_k_prime_points_sends_its_points():
    X, _ = make_blobs((40, 40), 2, random_state=3)
    parts = [np.array([0, 1]), np.arange(2, 80)]
    fit = KFED(2, n_local_clusters=3, random_state=0).fit(X, parts)
    np.testing.assert_array_equal(np.sort(fit.client_centers_[0], axis=0), np.sort(X[:2], axis=0))
