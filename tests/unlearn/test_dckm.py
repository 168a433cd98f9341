"""DC-KM (fedlib/unlearn/_dckm.py; Ginart et al. 2019): the unweighted one-shot scheme with Lloyd leaves, deletions."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

from fedlib.base import UnlearningReport
from fedlib.cluster import KMeans, OneShotFederatedKMeans
from fedlib.data import make_blobs, non_iid_partition
from fedlib.exceptions import UnlearningRequestError
from fedlib.unlearn import DCKMeans


@pytest.fixture(scope="module")
def problem():
    X, y = make_blobs((200, 150, 100, 50), 5, cluster_std=0.05, random_state=1)
    parts = non_iid_partition(y, 10, max_clusters_per_client=2, random_state=1)
    return X, parts


def test_dckm_equals_unweighted_one_shot_with_full_leaves(problem):
    """DC-KM is the unweighted one-shot scheme with Lloyd at the leaves (same streams, same result)."""
    X, parts = problem
    dc = DCKMeans(4, random_state=3).fit(X, parts=parts)
    one_shot = OneShotFederatedKMeans(4, weighted=False, client_lloyd=True, random_state=3).fit(X, parts=parts)
    np.testing.assert_allclose(dc.server_centers_, one_shot.server_centers_)
    assert dc.federated_loss_ == pytest.approx(one_shot.federated_loss_)
    np.testing.assert_array_equal(dc.predict(X), one_shot.predict(X))


def test_dckm_deletion_reruns_the_leaf_and_the_root_on_the_remaining_data(problem):
    X, parts = problem
    dc = DCKMeans(4, random_state=0).fit(X, parts=parts)
    victim = int(dc.client_ids(2)[0])
    report = dc.unlearn([victim])
    assert isinstance(report, UnlearningReport)
    assert report.clients_retrained == (2,) and report.server_refit and report.exact and report.rounds == 1
    assert report.forgotten_samples == (victim,) and report.forgotten_clients == () and report.details["left"] == ()
    assert report.aggregation_seconds == 0.0 and report.seconds == report.client_seconds + report.server_seconds
    assert victim not in set(dc.client_ids(2).tolist())
    remaining = np.concatenate([dc.client_ids(c) for c in range(len(parts))])
    assert np.array_equal(np.sort(remaining), np.setdiff1d(np.arange(len(X)), [victim]))
    with pytest.raises(UnlearningRequestError, match="already forgotten"):
        dc.unlearn([victim])


def test_dckm_one_request_reruns_every_leaf_it_touches_once(problem):
    """Samples are global row ids: the model finds their leaves, reruns each once, then the root once."""
    X, parts = problem
    dc = DCKMeans(4, random_state=0).fit(X, parts=parts)
    request = [int(parts[7][1]), int(parts[2][0]), int(parts[7][0]), int(parts[5][3])]
    report = dc.unlearn(request)
    assert report.clients_retrained == (2, 5, 7) and report.forgotten_samples == tuple(sorted(request))
    assert report.rounds == 1 and report.server_refit
    assert [len(dc.client_ids(c)) for c in range(len(parts))] == [len(p) - np.isin(p, request).sum() for p in parts]


def test_dckm_a_leaf_that_loses_all_its_rows_is_dropped(problem):
    """Emptying a leaf drops it from the root, as forgetting the client does: the same root, bit for bit."""
    X, parts = problem
    emptied = DCKMeans(4, random_state=0).fit(X, parts=parts)
    dropped = DCKMeans(4, random_state=0).fit(X, parts=parts)
    report = emptied.unlearn(parts[0])
    assert report.details["left"] == (0,) and report.forgotten_clients == () and report.clients_retrained == ()
    assert report.forgotten_samples == tuple(sorted(parts[0].tolist())) and report.server_refit
    assert emptied.client_ids(0).size == 0
    by_client = dropped.unlearn(clients=[0])
    assert by_client.forgotten_clients == (0,) and by_client.details["left"] == () and by_client.clients_retrained == ()
    np.testing.assert_array_equal(emptied.server_centers_, dropped.server_centers_)
    assert emptied.federated_loss_ == dropped.federated_loss_
    # the root is then K-means on the remaining leaves' centres, from the root's stream as fit left it
    stream = np.random.default_rng(np.random.SeedSequence(5).spawn(len(parts) + 1)[-1])
    leaves = OneShotFederatedKMeans(4, weighted=False, client_lloyd=True, server_n_init=1, random_state=5)
    centres = leaves.fit(X, parts=parts).client_centers_
    KMeans(4, n_init=1, random_state=stream).fit(np.vstack(centres))  # the root at fit
    one_init = DCKMeans(4, root_n_init=1, random_state=5).fit(X, parts=parts)
    one_init.unlearn(parts[0])
    root = KMeans(4, n_init=1, random_state=stream).fit(np.vstack(centres[1:]))
    np.testing.assert_allclose(one_init.server_centers_, root.cluster_centers_)
    with pytest.raises(UnlearningRequestError, match="not held"):
        emptied.unlearn(clients=[0])
    with pytest.raises(UnlearningRequestError, match="not held"):
        emptied.unlearn([int(parts[0][0])])


def test_dckm_centres_and_loss_follow_the_remaining_points_of_tight_clumps():
    """Every leaf holds points of the same four tight, far-apart clumps, so its K-means finds the clump means
    of its own points, and the root the means of the leaves' means: both computable by hand, before and after
    a deletion."""
    rng = np.random.default_rng(0)
    corners = np.array([[0.0, 0.0], [10.0, 0.0], [0.0, 10.0], [10.0, 10.0]])
    clump = np.tile(np.repeat(np.arange(4), 6), 5)  # 5 leaves × 4 clumps × 6 points
    X = corners[clump] + rng.normal(0, 0.01, size=(clump.size, 2))
    parts = [np.arange(24 * leaf, 24 * (leaf + 1)) for leaf in range(5)]
    dc = DCKMeans(4, random_state=1).fit(X, parts=parts)

    def expected(dc):
        leaf_means = np.array(
            [[X[ids[clump[ids] == c]].mean(axis=0) for c in range(4)] for ids in map(dc.client_ids, range(5))]
        )
        root = leaf_means.mean(axis=0)  # (4, 2): clump c's root centre
        order = [int(np.argmin(((dc.server_centers_ - r) ** 2).sum(axis=1))) for r in root]
        assert sorted(order) == [0, 1, 2, 3]
        ids = np.concatenate([dc.client_ids(leaf) for leaf in range(5)])
        return root, order, float(((X[ids] - root[clump[ids]]) ** 2).sum())

    root, order, loss = expected(dc)
    np.testing.assert_allclose(dc.server_centers_[order], root, rtol=0, atol=1e-9)
    assert dc.federated_loss_ == pytest.approx(loss, rel=1e-9)
    dc.unlearn([3 * 24 + 7, 3 * 24 + 8])  # two points of clump 1 at leaf 3
    new_root, order, new_loss = expected(dc)
    np.testing.assert_allclose(dc.server_centers_[order], new_root, rtol=0, atol=1e-9)
    assert dc.federated_loss_ == pytest.approx(new_loss, rel=1e-9)
    assert np.abs(new_root[1] - root[1]).max() > 1e-5  # the deletion moved the root centre of clump 1


def test_dckm_root_is_kmeans_on_the_leaf_centres(problem):
    X, parts = problem
    dc = DCKMeans(4, root_n_init=1, random_state=5).fit(X, parts=parts)
    root = KMeans(4, n_init=1, random_state=np.random.SeedSequence(5).spawn(len(parts) + 1)[-1])
    leaves = OneShotFederatedKMeans(4, weighted=False, client_lloyd=True, server_n_init=1, random_state=5)
    pool = np.vstack(leaves.fit(X, parts=parts).client_centers_)
    np.testing.assert_allclose(dc.server_centers_, root.fit(pool).cluster_centers_)


def test_dckm_not_fitted_and_bad_parameters(problem):
    X, parts = problem
    with pytest.raises(NotFittedError):
        DCKMeans(4).unlearn([0])
    with pytest.raises(TypeError, match="root_n_init must be an int"):
        DCKMeans(4, root_n_init=2.0).fit(X, parts=parts)
    dc = DCKMeans(4, random_state=0).fit(X, parts=parts)
    before = dc.server_centers_.copy()
    with pytest.raises(UnlearningRequestError, match=r"clients \[99\] are not held"):
        dc.unlearn(clients=[99])
    with pytest.raises(UnlearningRequestError, match=rf"samples \[{len(X)}\] are not held"):
        dc.unlearn([len(X)])
    with pytest.raises(UnlearningRequestError, match="every client"):
        dc.unlearn(np.arange(len(X)))  # would empty every leaf
    with pytest.raises(UnlearningRequestError, match="every client"):
        dc.unlearn(clients=range(len(parts)))
    with pytest.raises(UnlearningRequestError, match="every client"):
        dc.unlearn(parts[0], clients=range(1, len(parts)))
    with pytest.raises(ValueError, match="whole numbers"):
        dc.unlearn([2.5])
    # refused requests change nothing
    np.testing.assert_array_equal(dc.server_centers_, before)
    assert [dc.client_ids(c).tolist() for c in range(len(parts))] == [p.tolist() for p in parts]


def test_fit_warns_once_about_leaves_with_fewer_points_than_k():
    X, _ = make_blobs((30, 30), 2, random_state=2)
    parts = [np.arange(2), np.arange(2, 60)]
    with pytest.warns(UserWarning, match="DCKMeans: 1 of 2 clients hold fewer points than n_clusters=3") as record:
        DCKMeans(3, random_state=0).fit(X, parts=parts)
    assert len(record) == 1
