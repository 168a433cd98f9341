"""Lloyd and KMeans (fedlib/cluster/_lloyd.py): agreement with scikit-learn, weights, best of n_init, brute force."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from sklearn.cluster import KMeans as SklearnKMeans
from sklearn.exceptions import NotFittedError

from fedlib.cluster import KMeans, kmeans_objective, kmeans_plusplus, lloyd
from fedlib.data import make_blobs

from ..conftest import load_real


def assert_same_as_sklearn(X, init):
    ours = lloyd(X, init)
    theirs = SklearnKMeans(init.shape[0], init=init, n_init=1, max_iter=300, tol=1e-4, algorithm="lloyd").fit(X)
    np.testing.assert_array_equal(ours.labels, theirs.labels_)
    np.testing.assert_allclose(ours.centers, theirs.cluster_centers_, rtol=1e-9, atol=1e-12)
    assert ours.inertia == pytest.approx(theirs.inertia_, rel=1e-9)
    assert ours.n_iter == theirs.n_iter_


def test_lloyd_equals_sklearn_from_same_init(global_random_seed):
    X, _ = make_blobs((300, 200, 100, 40), 6, cluster_std=0.25, random_state=global_random_seed)
    init, _ = kmeans_plusplus(X, 4, random_state=global_random_seed)
    assert_same_as_sklearn(X, init)


@pytest.mark.parametrize("name", ["celltype", "covtype"])
def test_lloyd_equals_sklearn_on_real_data(name):
    ds = load_real(name)
    init, _ = kmeans_plusplus(ds.X, ds.n_clusters, random_state=0)
    assert_same_as_sklearn(ds.X, init)


@given(
    arrays(np.float64, (12, 2), elements=st.floats(-10, 10, allow_nan=False, width=32)),
    st.lists(st.integers(1, 4), min_size=12, max_size=12),
)
def test_integer_weights_equal_repeated_points(X, weights):
    w = np.array(weights)
    init = X[:3] + 0.01  # any fixed start
    weighted = lloyd(X, init, sample_weight=w, tol=0.0)
    repeated = lloyd(np.repeat(X, w, axis=0), init, tol=0.0)
    np.testing.assert_allclose(weighted.centers, repeated.centers, rtol=1e-9, atol=1e-9)
    assert weighted.inertia == pytest.approx(repeated.inertia, rel=1e-9, abs=1e-9)


def test_objective_never_increases(global_random_seed):
    X, _ = make_blobs((100, 80, 60), 3, cluster_std=0.3, random_state=global_random_seed)
    init = X[:3]
    values = [lloyd(X, init, max_iter=i, tol=0.0).inertia for i in range(1, 12)]
    assert all(a >= b - 1e-12 for a, b in itertools.pairwise(values))


def test_kmeans_finds_brute_force_optimum_on_tiny_sets(global_random_seed):
    rng = np.random.default_rng(global_random_seed)
    X = rng.normal(size=(8, 2))
    best = np.inf
    for labels in itertools.product(range(2), repeat=8):
        labels = np.array(labels)
        if len(set(labels)) < 2:
            continue
        centers = np.array([X[labels == k].mean(axis=0) for k in range(2)])
        best = min(best, kmeans_objective(X, centers, labels=labels))
    model = KMeans(2, n_init=20, random_state=global_random_seed).fit(X)
    assert model.inertia_ == pytest.approx(best, rel=1e-9)


def test_kmeans_is_the_best_of_n_init_seedings_then_lloyd(global_random_seed):
    """Run r seeds from the r-th K-means++ draw of one stream, then Lloyd; the lowest inertia wins (first on ties)."""
    X, _ = make_blobs((60, 40, 30, 10), 3, cluster_std=0.3, random_state=global_random_seed)
    model = KMeans(4, n_init=6, random_state=global_random_seed).fit(X)
    rng = np.random.default_rng(global_random_seed)
    runs = []
    for _ in range(6):
        _, seeds = kmeans_plusplus(X, 4, random_state=rng)
        runs.append((lloyd(X, X[seeds]), seeds))
    best, best_seeds = min(runs, key=lambda run: run[0].inertia)
    np.testing.assert_array_equal(model.seed_indices_, best_seeds)
    np.testing.assert_array_equal(model.cluster_centers_, best.centers)
    np.testing.assert_array_equal(model.labels_, best.labels)
    assert model.inertia_ == best.inertia and model.n_iter_ == best.n_iter


def test_kmeans_keeps_best_run_and_predicts():
    X, y = make_blobs((50, 50, 50), 2, cluster_std=0.05, random_state=0)
    model = KMeans(3, n_init=5, random_state=0).fit(X)
    assert model.inertia_ == pytest.approx(kmeans_objective(X, model.cluster_centers_))
    assert model.inertia_ == pytest.approx(kmeans_objective(X, model.cluster_centers_, labels=model.labels_))
    np.testing.assert_array_equal(model.predict(X), model.labels_)
    assert len(set(zip(y.tolist(), model.labels_.tolist(), strict=True))) == 3  # recovers the blobs
    new = np.array([[0.5, 0.5], [-1.0, 2.0]])
    brute = [int(np.argmin([np.sum((x - c) ** 2) for c in model.cluster_centers_])) for x in new]
    assert model.predict(new).tolist() == brute


def test_kmeans_weights_give_weighted_means():
    X, _ = make_blobs((20, 20), 2, random_state=4)
    w = np.arange(1, 41) % 3 + 1
    weighted = KMeans(2, n_init=3, random_state=0).fit(X, sample_weight=w)
    assert weighted.inertia_ == pytest.approx(kmeans_objective(X, weighted.cluster_centers_, sample_weight=w))
    means = [np.average(X[weighted.labels_ == h], axis=0, weights=w[weighted.labels_ == h]) for h in range(2)]
    np.testing.assert_allclose(weighted.cluster_centers_, means, rtol=1e-12)


def test_kmeans_predict_needs_fit_and_matching_features():
    X, _ = make_blobs((10, 10), 2, random_state=0)
    with pytest.raises(NotFittedError):
        KMeans(2).predict(X)
    model = KMeans(2, n_init=1, random_state=0).fit(X)
    with pytest.raises(ValueError, match="X has 3 features, but KMeans is expecting 2 features as input"):
        model.predict(np.zeros((1, 3)))


def test_lloyd_stops_on_repeated_labels_and_keeps_empty_clusters():
    X = np.array([[0.0], [1.0], [10.0], [11.0]])
    run = lloyd(X, [[0.0], [1.0]], tol=0.0)
    assert run.converged and run.centers.ravel().tolist() == [0.5, 10.5] and run.labels.tolist() == [0, 0, 1, 1]
    # labels [0, 1, 1, 1], then [0, 0, 1, 1], then the same again: stop after the third assignment
    assert run.inertia == 1.0 and run.n_iter == 3
    far = lloyd(X, [[0.0], [100.0], [5.0]], tol=0.0)  # centre 1 never wins a point and stays put
    assert far.centers[1, 0] == 100.0 and 1 not in far.labels.tolist()
    capped = lloyd(X, [[0.0], [1.0]], max_iter=1, tol=0.0)
    assert not capped.converged and capped.n_iter == 1


def test_scalar_parameters_are_checked_not_truncated():
    X, _ = make_blobs((30, 30), 2, random_state=0)
    with pytest.raises(TypeError, match="n_init must be an int"):
        KMeans(2, n_init=2.7).fit(X)
    with pytest.raises(TypeError, match="n_clusters must be an int"):
        KMeans(2.0).fit(X)
    with pytest.raises(TypeError, match="max_iter must be an int"):
        lloyd(X, X[:2], max_iter=1.5)
    with pytest.raises(TypeError, match="tol must be a real number"):
        lloyd(X, X[:2], tol=1j)


def test_lloyd_rejects_mismatched_init():
    with pytest.raises(ValueError, match="n_features"):
        lloyd(np.zeros((4, 2)), np.zeros((2, 3)))
