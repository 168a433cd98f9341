"""Clustered federated unlearning (Liu et al. 2025): exactness, isolation of clusters, Requirement 4, voting."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

from fedlib.base import UnlearningReport
from fedlib.exceptions import UnlearningCapacityError, UnlearningRequestError
from fedlib.learn import LocalSGD
from fedlib.unlearn import ClusteredUnlearning, majority_vote


@pytest.fixture(scope="module")
def task():
    """Two separable classes, 24 clients of 10 examples, a held-out test set."""
    rng = np.random.default_rng(0)
    centres = rng.normal(0, 1.5, (2, 6)).astype(np.float32)
    y = rng.integers(0, 2, 340)
    X = (centres[y] + rng.normal(0, 1, (340, 6))).astype(np.float32)
    clients = np.array_split(np.arange(240), 24)
    return X[:240], y[:240], clients, (X[240:], y[240:])


def build(**options):
    defaults = dict(cluster_size=8, rounds=3, local=LocalSGD(lr=0.1, batch_size=5), threshold_rate=0.5, random_state=3)
    return ClusteredUnlearning("softmax", **{**defaults, **options})


def make(task, n_rounds=None, **options):
    """A system fitted on the task (``n_rounds`` rounds, default all)."""
    X, y, clients, test = task
    return build(**options).fit(X, y, parts=clients, test_data=test, n_rounds=n_rounds)


def test_constructor_only_stores_hyper_parameters(task):
    model = build(cluster_size=2, degree=1, threshold_rate=5.0)  # invalid, but not checked before fit
    assert model.get_params()["cluster_size"] == 2 and not hasattr(model, "clusters_")
    assert model.unlearns == frozenset({"clients"})
    with pytest.raises(NotFittedError):
        model.unlearn(clients=[0])
    with pytest.raises(NotFittedError):
        model.predict(task[3][0])
    with pytest.raises(ValueError, match="degree"):
        model.fit(*task[:2], parts=task[2])
    fitted = make(task, secure=False)
    again = clone(fitted).fit(*task[:2], parts=task[2], test_data=task[3])
    for a, b in zip(fitted.trainers_, again.trainers_, strict=True):
        np.testing.assert_array_equal(a.params_, b.params_)
    assert isinstance(fitted.fit_report_, UnlearningReport) and fitted.fit_report_.rounds == 3
    assert fitted.fit_report_.clients_retrained == tuple(range(24)) and fitted.n_features_in_ == 6


def test_clusters_partition_the_clients_and_training_learns(task):
    fu = make(task, secure=False)
    ids = np.sort(np.concatenate(fu.clusters_))
    np.testing.assert_array_equal(ids, np.arange(24))
    assert fu.n_clusters == 3 and fu.thresholds == (4, 4, 4)
    assert [h["round"] for h in fu.history_] == [1, 2, 3]
    assert fu.history_[-1]["vote accuracy"] > 0.8 and fu.history_[-1]["mean cluster accuracy"] > 0.8


def test_same_seed_same_bits_and_secure_close_to_plain(task):
    a, b = make(task), make(task)
    for ta, tb in zip(a.trainers_, b.trainers_, strict=True):
        np.testing.assert_array_equal(ta.params_, tb.params_)
    plain = make(task, secure=False)
    for ts, tp in zip(a.trainers_, plain.trainers_, strict=True):
        np.testing.assert_allclose(ts.params_, tp.params_, atol=1e-4)
        assert ts.history_[0].bytes_sent > tp.history_[0].bytes_sent  # keys, shares and masks cost bytes


def test_unlearning_retrains_only_the_affected_cluster_exactly(task):
    fu = make(task)
    before = [t.params_.copy() for t in fu.trainers_]
    client = int(fu.clusters_[1][2])
    report = fu.unlearn(clients=[client])
    assert report.details["clusters"] == (1,) and report.details["n_clients_retrained"] == 7 and report.rounds == 3
    assert report.forgotten_clients == (client,) and report.forgotten_samples == () and report.exact
    assert report.clients_retrained == tuple(np.setdiff1d(fu.clusters_[1], [client]).tolist())
    assert report.details["retrain"] and [p["round"] for p in report.details["curve"]] == [1, 2, 3]
    assert report.details["accuracy"] == fu.evaluate()["vote accuracy"]
    assert report.bytes_sent > 0 and report.client_seconds > 0 and report.aggregation_seconds > 0
    assert fu.generation_.tolist() == [0, 1, 0] and fu.unlearned_ == [client]
    for i in (0, 2):  # other clusters: bit-identical
        np.testing.assert_array_equal(fu.trainers_[i].params_, before[i])
    assert not np.array_equal(fu.trainers_[1].params_, before[1])
    # retraining equals training from scratch without the client, and never reads the client's rows
    X_poisoned = task[0].copy()
    X_poisoned[fu.parts_[client]] = np.nan
    reference = fu.fresh_trainer(1, X=X_poisoned).run(3)
    np.testing.assert_array_equal(reference.params_, fu.trainers_[1].params_)
    assert client not in fu.trainers_[1].client_ids_


def test_batch_retrains_each_cluster_once_and_sequential_once_per_request(task):
    batch = make(task, secure=False)
    clients = [int(batch.clusters_[0][0]), int(batch.clusters_[0][1]), int(batch.clusters_[2][0])]
    report = batch.unlearn(clients=clients)
    assert report.details["clusters"] == (0, 2) and report.details["n_clients_retrained"] == 6 + 7
    assert len(report.clients_retrained) == 6 + 7 and report.forgotten_clients == tuple(sorted(clients))
    sequential = make(task, secure=False)
    reports = [sequential.unlearn(clients=[u]) for u in clients]
    assert [r.details["n_clients_retrained"] for r in reports] == [7, 6, 7]
    assert sequential.generation_.tolist() == [2, 0, 1] and batch.generation_.tolist() == [1, 0, 1]


def test_a_client_leaving_during_training_restarts_only_its_cluster(task):
    finished = make(task)
    fu = make(task, n_rounds=2)
    assert fu.round_ == 2 and [t.round_ for t in fu.trainers_] == [2, 2, 2]
    client = int(fu.clusters_[2][0])
    report = fu.unlearn(clients=[client], retrain=False)
    assert report.rounds == 0 and fu.trainers_[2].round_ == 0 and report.exact and not report.details["retrain"]
    assert "deferred" in report.details["note"] and report.details["curve"] == [] and report.bytes_sent == 0
    fu.run(3)  # the two untouched clusters finish their third round while cluster 2 starts over
    assert [t.round_ for t in fu.trainers_] == [3, 3, 3] and fu.round_ == 5
    for i in (0, 1):
        np.testing.assert_array_equal(fu.trainers_[i].params_, finished.trainers_[i].params_)
    np.testing.assert_array_equal(fu.trainers_[2].params_, fu.fresh_trainer(2).run(3).params_)
    assert [h["round"] for h in fu.history_] == [1, 2, 3, 4, 5]


def test_bad_requests_raise_before_anything_changes(task):
    fu = make(task, secure=False, removal_rate=0.25, max_requests=4)
    first = int(fu.clusters_[0][0])
    fu.unlearn(clients=[first])
    with pytest.raises(UnlearningRequestError, match="not held by the fitted model"):
        fu.unlearn(clients=[24])
    with pytest.raises(UnlearningRequestError, match="already forgotten"):
        fu.unlearn(clients=[first])
    with pytest.raises(UnlearningRequestError, match="more than once"):
        fu.unlearn(clients=[3, 3])
    with pytest.raises(UnlearningRequestError, match="cannot unlearn samples"):
        fu.unlearn([0])
    two_more = [int(u) for u in fu.members_[0][:2]]
    with pytest.raises(UnlearningCapacityError, match=r"cap floor\(zeta \* k_i\) = 2"):
        fu.unlearn(clients=two_more)
    with pytest.raises(UnlearningCapacityError, match="tau = 4"):
        fu.unlearn(clients=[int(fu.clusters_[1][0]), int(fu.clusters_[1][1]), int(fu.clusters_[2][0]),
                            int(fu.clusters_[2][1])])  # fmt: skip
    with pytest.raises(UnlearningRequestError, match="more than once"):  # the contract's checks come first
        fu.unlearn(clients=[3, 3], retrain=False)
    assert fu.unlearned_ == [first] and fu.generation_.tolist() == [1, 0, 0]


def test_a_request_cannot_empty_a_cluster(task):
    fu = make(task, secure=False, rounds=1)
    before = [t.params_.copy() for t in fu.trainers_]
    with pytest.raises(UnlearningRequestError, match="every client of cluster 1"):
        fu.unlearn(clients=fu.clusters_[1])
    assert fu.unlearned_ == [] and fu.generation_.tolist() == [0, 0, 0]
    for a, t in zip(before, fu.trainers_, strict=True):
        np.testing.assert_array_equal(a, t.params_)


def test_cluster_too_small_for_secure_aggregation_raises(task):
    with pytest.raises(ValueError, match="at least 3 clients per cluster"):
        make(task, cluster_size=2)


def test_too_many_dropouts_abort_rounds_and_keep_the_model(task):
    fu = make(task, threshold_rate=0.8, dropout=0.5)
    aborted = [r for t in fu.trainers_ for r in t.history_ if r.aborted]
    assert aborted, "t = ceil(0.8 k) = 7 survivors of 8 needed: half the clients dropping must abort some rounds"
    assert fu.aborted_rounds() == len(aborted)
    assert all(r.summed.size == 0 for r in aborted)


def test_unlearning_past_the_fixed_threshold_fails_loudly(task):
    fu = make(task, threshold_rate=0.9)  # t = 8 of k = 8: every client must survive
    assert fu.thresholds == (8, 8, 8) and fu.aborted_rounds() == 0
    with pytest.raises(UnlearningCapacityError, match="fewer than its fixed threshold t = 8"):
        fu.unlearn(clients=[int(fu.clusters_[0][0])])
    assert fu.unlearned_ == [] and fu.generation_.tolist() == [0, 0, 0]
    fu = make(task, threshold_rate=0.8)  # t = 7: one client may go, not two
    first, second = (int(u) for u in fu.clusters_[0][:2])
    assert fu.unlearn(clients=[first]).details["n_clients_retrained"] == 7
    with pytest.raises(UnlearningCapacityError, match="Requirement 2"):
        fu.unlearn(clients=[second])
    assert make(task, threshold_rate=0.9, secure=False).unlearn(clients=[0]).details["n_clients_retrained"] == 7


def test_one_cluster_is_global_fedavg_with_full_retraining(task):
    fu = make(task, cluster_size=24, secure=False)
    assert fu.n_clusters == 1
    report = fu.unlearn(clients=[5])
    assert report.details["n_clients_retrained"] == 23
    assert report.clients_retrained == tuple(u for u in range(24) if u != 5)


@settings(max_examples=60, deadline=None)
@given(arrays(np.float64, st.tuples(st.integers(1, 5), st.integers(1, 6), st.integers(1, 4)), elements=st.floats(0, 1)))
def test_majority_vote_picks_a_most_voted_label(P):
    out = majority_vote(P)
    votes = np.zeros((P.shape[1], P.shape[2]), dtype=int)
    for m in range(P.shape[0]):
        votes[np.arange(P.shape[1]), P[m].argmax(axis=1)] += 1
    np.testing.assert_array_equal(out.votes, votes)
    chosen = votes[np.arange(P.shape[1]), out.labels]
    np.testing.assert_array_equal(chosen, votes.max(axis=1))
    np.testing.assert_array_equal(out.tied, (votes == votes.max(axis=1, keepdims=True)).sum(axis=1) > 1)
    # among the leaders, the winner has the largest summed probability, and the lowest label among equals
    summed = P.sum(axis=0)
    for q in np.flatnonzero(out.tied):
        leaders = np.flatnonzero(votes[q] == votes[q].max())
        best = leaders[summed[q, leaders] == summed[q, leaders].max()]
        assert out.labels[q] == best.min()


def test_majority_vote_rejects_bad_shapes():
    with pytest.raises(ValueError, match="n_models, n, n_classes"):
        majority_vote(np.ones((3, 4)))
