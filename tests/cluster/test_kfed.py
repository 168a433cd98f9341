"""K-FED (fedlib/cluster/_kfed.py; Dennis et al. 2021): SecFC's setting (k' local clusters) and MUFC's (K)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError
from sklearn.utils.extmath import randomized_svd

from fedlib.cluster import KFED, KMeans, _kfed, clustering_accuracy, kmeans_objective, kmeans_plusplus
from fedlib.data import k_prime_partition, make_blobs, make_gaussian_mixture, non_iid_partition


@pytest.mark.parametrize("k_prime", [1, 2, 4])
def test_kfed_with_k_prime_and_server_lloyd_recovers_separated_clusters(k_prime, global_random_seed):
    ds = make_gaussian_mixture(2000, 10, 4, cluster_std=0.5, random_state=global_random_seed)
    parts = k_prime_partition(ds.y, 10, k_prime, random_state=global_random_seed)
    fit = KFED(4, n_local_clusters=k_prime, server_max_iter=300, random_state=global_random_seed).fit(ds.X, parts=parts)
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
    fit = KFED(4, n_local_clusters=2, random_state=2).fit(X, parts=parts)
    again = KFED(4, n_local_clusters=2, server_max_iter=1, random_state=2).fit(X, parts=parts)
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
    one = KFED(4, random_state=4).fit(X, parts=parts)
    many = KFED(4, server_max_iter=300, random_state=4).fit(X, parts=parts)
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
        KFED(4, n_local_clusters=1).fit(X, parts=parts)
    with pytest.raises(ValueError, match="server_max_iter=0 should be >= 1"):
        KFED(4, n_local_clusters=2, server_max_iter=0).fit(X, parts=parts)
    with pytest.raises(ValueError, match="n_local_clusters=0 should be >= 1"):
        KFED(4, n_local_clusters=0).fit(X, parts=parts)
    with pytest.raises(TypeError, match="n_local_clusters must be an int"):
        KFED(4, n_local_clusters=2.5).fit(X, parts=parts)
    with pytest.raises(NotFittedError):
        KFED(4).predict(X)


def test_kfed_finds_separated_clusters_with_k_prime_local_clusters():
    """K-FED's design point: devices cluster with K' (here 2), the server completes to K by farthest points."""
    X, y = make_blobs((200, 150, 100, 50), 5, cluster_std=0.05, random_state=1)
    parts = non_iid_partition(y, 10, max_clusters_per_client=2, random_state=1)
    phi = KMeans(4, n_init=10, random_state=0).fit(X).inertia_
    a = KFED(4, n_local_clusters=2, random_state=0).fit(X, parts=parts)
    b = KFED(4, n_local_clusters=2, random_state=0).fit(X, parts=parts)
    np.testing.assert_array_equal(a.server_centers_, b.server_centers_)
    assert a.federated_loss_ / phi < 1.5
    assert a.federated_loss_ >= kmeans_objective(X, a.server_centers_) - 1e-9


def test_kfed_federated_loss_is_the_induced_loss_of_its_centres(global_random_seed):
    """Each point goes to its nearest local centre, that centre to its nearest server centre (MUFC Def. 3.1)."""
    X, y = make_blobs((120, 90, 60, 30), 4, cluster_std=0.4, random_state=global_random_seed)
    parts = non_iid_partition(y, 8, max_clusters_per_client=2, random_state=global_random_seed)
    fit = KFED(4, n_local_clusters=2, random_state=global_random_seed).fit(X, parts=parts)
    S = fit.server_centers_
    expected = 0.0
    for idx, C in zip(parts, fit.client_centers_, strict=True):
        assert C.shape == (min(2, idx.size), 4)
        for x in X[idx]:
            local = C[np.argmin(((C - x) ** 2).sum(axis=1))]
            expected += float(((x - S[np.argmin(((S - local) ** 2).sum(axis=1))]) ** 2).sum())
    assert fit.federated_loss_ == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("device_step", ["full_space", "authors"])
def test_kfed_device_with_fewer_than_k_prime_points_sends_its_points_and_fit_warns(device_step):
    X, _ = make_blobs((40, 40), 2, random_state=3)
    parts = [np.array([0, 1]), np.arange(2, 80)]
    with pytest.warns(UserWarning, match="KFED: 1 of 2 clients hold fewer points than n_local_clusters=3") as record:
        fit = KFED(2, n_local_clusters=3, device_step=device_step, random_state=0).fit(X, parts=parts)
    assert len(record) == 1
    assert "the smallest holds 2" in str(record[0].message)
    assert record[0].filename == __file__
    np.testing.assert_array_equal(np.sort(fit.client_centers_[0], axis=0), np.sort(X[:2], axis=0))
    if device_step == "authors":  # the reference code returns the device's matrix as it is
        np.testing.assert_array_equal(fit.client_centers_[0], X[:2])


def test_kfed_warns_about_small_devices_against_n_local_clusters_not_n_clusters():
    X, _ = make_blobs((40, 40, 40), 3, random_state=5)
    parts = [np.arange(0, 2), np.arange(2, 60), np.arange(60, 120)]
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        KFED(3, n_local_clusters=2, random_state=0).fit(X, parts=parts)  # 2 points, k' = 2: no warning
    with pytest.warns(UserWarning, match="1 of 3 clients hold fewer points than n_local_clusters=3"):
        KFED(3, random_state=0).fit(X, parts=parts)  # k' defaults to K = 3


def _capture_subspace(monkeypatch):
    """Record the right singular vectors each device step projects on."""
    seen = []

    def recording_svd(*args, **kwargs):
        U, S, Vt = randomized_svd(*args, **kwargs)
        seen.append(Vt)
        return U, S, Vt

    monkeypatch.setattr(_kfed, "randomized_svd", recording_svd)
    return seen


def test_authors_device_step_seeds_are_the_full_space_seeds_projected_on_the_rank_k_subspace(monkeypatch):
    """metastableB/kfed ``awasthisheffet``: 1:3 means of the projections Z = X V, mapped back by V^T."""
    seen = _capture_subspace(monkeypatch)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 9)) + 0.3  # not centred: the subspace passes through the origin
    k = 3
    full = _kfed._kfed_seeds(X, k, np.random.default_rng(7), "full_space")
    authors = _kfed._kfed_seeds(X, k, np.random.default_rng(7), "authors")
    Vt = seen[1]
    np.testing.assert_allclose(seen[0], Vt)  # same stream, same subspace and K-means++ seeds
    assert Vt.shape == (k, 9)
    # projection property: the authors' seeds lie in the row space of V^T ...
    np.testing.assert_allclose(authors @ Vt.T @ Vt, authors, atol=1e-12)
    # ... and are exactly the full-space seeds projected there
    np.testing.assert_allclose(authors, full @ Vt.T @ Vt, atol=1e-12)
    # the full-space seeds are not in that subspace
    assert np.linalg.norm(full - full @ Vt.T @ Vt) > 0.1


def test_authors_device_step_is_the_reference_algorithm_on_one_device(monkeypatch):
    """Independent recomputation: K-means++ on X V, the 1:3 rule by its definition, means in Z, back by V^T."""
    seen = _capture_subspace(monkeypatch)
    X, _ = make_blobs((50, 40, 30), 6, cluster_std=0.8, random_state=3)
    k = 3
    seeds_rng = np.random.default_rng(11)
    got = _kfed._kfed_seeds(X, k, seeds_rng, "authors")
    Vt = seen[0]
    Z = X @ Vt.T
    replay = np.random.default_rng(11)
    replay.integers(2**31)  # the SVD's seed
    idx = kmeans_plusplus(Z, k, random_state=replay)[1]
    pd = np.sqrt(((Z[:, None, :] - Z[idx][None]) ** 2).sum(axis=2))  # (n, k) distances to the seeds
    expected = []
    for r in range(k):
        others = np.delete(pd, r, axis=1)
        members = np.all(others - 3 * pd[:, [r]] >= 0, axis=1)  # not (remaining - th) < 0 for any other seed
        assert members.any()
        expected.append(Z[members].mean(axis=0) @ Vt)
    np.testing.assert_allclose(got, np.array(expected), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("device_step", ["full_space", "authors"])
def test_both_device_steps_give_valid_reproducible_centres(device_step, global_random_seed):
    ds = make_gaussian_mixture(600, 12, 4, cluster_std=0.5, random_state=global_random_seed)
    parts = k_prime_partition(ds.y, 6, 2, random_state=global_random_seed)
    params = {"n_local_clusters": 2, "server_max_iter": 300, "device_step": device_step}
    a = KFED(4, **params, random_state=global_random_seed).fit(ds.X, parts=parts)
    a_centres, a_local, a_loss = a.server_centers_, a.client_centers_, a.federated_loss_
    b = KFED(4, **params, random_state=global_random_seed).fit(ds.X, parts=parts)
    np.testing.assert_array_equal(a_centres, b.server_centers_)
    for p, q in zip(a_local, b.client_centers_, strict=True):
        np.testing.assert_array_equal(p, q)
    assert a_loss == b.federated_loss_
    assert a_centres.shape == (4, 12) and np.all(np.isfinite(a_centres))
    assert all(C.shape == (2, 12) for C in a_local)
    assert a_loss >= kmeans_objective(ds.X, a_centres) - 1e-9
    assert clustering_accuracy(ds.y, b.labels_) == 1.0


def test_the_two_device_steps_differ_when_the_projection_is_not_a_rotation():
    """Overlapping clusters in d = 20 with k' = 3: Lloyd reaches different local optima from the two starts."""
    differ = 0
    for seed in range(3):
        X, y = make_blobs((60, 60, 60, 60, 60), 20, cluster_std=1.5, random_state=seed)
        parts = non_iid_partition(y, 4, max_clusters_per_client=3, random_state=seed)
        full = KFED(5, n_local_clusters=3, random_state=seed).fit(X, parts=parts)
        authors = KFED(5, n_local_clusters=3, device_step="authors", random_state=seed).fit(X, parts=parts)
        differ += full.federated_loss_ != pytest.approx(authors.federated_loss_, rel=1e-6)
    assert differ >= 2


def test_the_two_device_steps_coincide_when_k_prime_reaches_the_dimension():
    """With k' >= d the rank-k' projection is a rotation: the projected means are the full-space means."""
    X, y = make_blobs((80, 60, 40), 3, cluster_std=0.6, random_state=1)
    parts = non_iid_partition(y, 3, max_clusters_per_client=2, random_state=1)
    full = KFED(3, n_local_clusters=3, random_state=1).fit(X, parts=parts)
    authors = KFED(3, n_local_clusters=3, device_step="authors", random_state=1).fit(X, parts=parts)
    for p, q in zip(full.client_centers_, authors.client_centers_, strict=True):
        np.testing.assert_allclose(p, q, rtol=1e-9, atol=1e-12)


def test_induced_last_assignment_charges_each_local_centre_to_its_initial_server_cluster(global_random_seed):
    """MUFC's code scores K-FED with the one server Lloyd step's assignment, not the nearest final centre."""
    X, y = make_blobs((120, 90, 60, 30), 4, cluster_std=0.8, random_state=global_random_seed)
    parts = non_iid_partition(y, 8, max_clusters_per_client=2, random_state=global_random_seed)
    nearest = KFED(4, random_state=global_random_seed).fit(X, parts=parts)
    last = KFED(4, induced="last_assignment", random_state=global_random_seed).fit(X, parts=parts)
    np.testing.assert_array_equal(nearest.server_centers_, last.server_centers_)
    pool = np.vstack(last.client_centers_)
    init = pool[:4]  # device 0's K centres: cleanup-max adds none
    assign = ((pool[:, None, :] - init[None]) ** 2).sum(axis=2).argmin(axis=1)
    S = last.server_centers_
    expected, row = 0.0, 0
    for idx, C in zip(parts, last.client_centers_, strict=True):
        local = ((X[idx][:, None, :] - C[None]) ** 2).sum(axis=2).argmin(axis=1)
        expected += float(((X[idx] - S[assign[row + local]]) ** 2).sum())
        row += len(C)
    assert last.federated_loss_ == pytest.approx(expected, rel=1e-9)
    np.testing.assert_array_equal(last.labels_, nearest.labels_)


def test_induced_choices_agree_once_server_lloyd_has_converged():
    X, y = make_blobs((200, 150, 100, 50), 5, cluster_std=0.2, random_state=2)
    parts = non_iid_partition(y, 10, max_clusters_per_client=2, random_state=2)
    nearest = KFED(4, n_local_clusters=2, server_max_iter=300, random_state=2).fit(X, parts=parts)
    last = KFED(4, n_local_clusters=2, server_max_iter=300, induced="last_assignment", random_state=2)
    last.fit(X, parts=parts)
    assert last.federated_loss_ == pytest.approx(nearest.federated_loss_, rel=1e-12)


def test_kfed_rejects_unknown_device_step_and_induced():
    X, _ = make_blobs((20, 20), 2, random_state=0)
    parts = [np.arange(20), np.arange(20, 40)]
    with pytest.raises(ValueError, match=r"device_step='projected' should be one of \('full_space', 'authors'\)"):
        KFED(2, device_step="projected").fit(X, parts=parts)
    with pytest.raises(ValueError, match=r"induced='own_sample' should be one of \('nearest', 'last_assignment'\)"):
        KFED(2, induced="own_sample").fit(X, parts=parts)


def test_one_third_rule_matches_its_definition():
    rng = np.random.default_rng(4)
    for k in (1, 2, 5):
        dist = rng.random((200, k))
        dist[3] = 0.0  # a point on two seeds at once belongs to both
        got = _kfed._one_third_members(dist)
        for r in range(k):
            others = np.delete(dist, r, axis=1).min(axis=1) if k > 1 else np.full(200, np.inf)
            np.testing.assert_array_equal(got[:, r], dist[:, r] <= others / 3.0)
