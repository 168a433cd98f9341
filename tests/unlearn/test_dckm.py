"""DC-KM (Ginart et al. 2019) as MUFC's baseline: the unweighted one-shot scheme with Lloyd leaves, and deletions."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

from fedlib.cluster import KMeans, OneShotFederatedKMeans, kmeans_objective
from fedlib.data import make_blobs, non_iid_partition
from fedlib.unlearn import DCKMeans, RemovalReport


@pytest.fixture(scope="module")
def problem():
    X, y = make_blobs((200, 150, 100, 50), 5, cluster_std=0.05, random_state=1)
    parts = non_iid_partition(y, 10, max_clusters_per_client=2, random_state=1)
    return X, parts


def test_dckm_equals_unweighted_one_shot_with_full_leaves(problem):
    """DC-KM is the unweighted one-shot scheme with Lloyd at the leaves (same streams, same result)."""
    X, parts = problem
    dc = DCKMeans(4, random_state=3).fit(X, parts)
    one_shot = OneShotFederatedKMeans(4, weighted=False, client_lloyd=True, random_state=3).fit(X, parts)
    np.testing.assert_allclose(dc.server_centers_, one_shot.server_centers_)
    assert dc.federated_loss_ == pytest.approx(one_shot.federated_loss_)
    np.testing.assert_array_equal(dc.predict(X), one_shot.predict(X))


def test_dckm_deletion_equals_refitting_the_leaf_and_the_root_on_the_remaining_data(problem):
    X, parts = problem
    dc = DCKMeans(4, random_state=0).fit(X, parts)
    victim = int(dc.client_ids(2)[0])
    report = dc.remove(2, [victim])
    assert isinstance(report, RemovalReport)
    assert report.clients_reseeded == (2,) and report.server_refit and report.seconds > 0
    assert victim not in set(dc.client_ids(2).tolist())
    # the leaf reran on its remaining rows: its points are charged to root centres of its new local centres
    remaining = np.concatenate([dc.client_ids(c) for c in range(len(parts))])
    assert np.array_equal(np.sort(remaining), np.setdiff1d(np.arange(len(X)), [victim]))
    assert dc.federated_loss_ >= kmeans_objective(X[remaining], dc.server_centers_) - 1e-9
    with pytest.raises(ValueError, match="does not hold"):
        dc.remove(2, [victim])


def test_dckm_root_is_kmeans_on_the_leaf_centres(problem):
    X, parts = problem
    dc = DCKMeans(4, root_n_init=1, random_state=5).fit(X, parts)
    root = KMeans(4, n_init=1, random_state=np.random.SeedSequence(5).spawn(len(parts) + 1)[-1])
    leaves = OneShotFederatedKMeans(4, weighted=False, client_lloyd=True, server_n_init=1, random_state=5)
    pool = np.vstack(leaves.fit(X, parts).client_centers_)
    np.testing.assert_allclose(dc.server_centers_, root.fit(pool).cluster_centers_)


def test_dckm_not_fitted_and_bad_parameters(problem):
    X, parts = problem
    with pytest.raises(NotFittedError):
        DCKMeans(4).remove(0, [0])
    with pytest.raises(TypeError, match="root_n_init must be an int"):
        DCKMeans(4, root_n_init=2.0).fit(X, parts)
