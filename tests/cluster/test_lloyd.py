"""Lloyd and KMeans: agreement with scikit-learn, weights, monotonicity, brute-force optimum."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from sklearn.cluster import KMeans as SklearnKMeans

from fedlib.cluster import KMeans, kmeans_objective, kmeans_plusplus, lloyd, loss_ratio
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


def test_kmeans_keeps_best_run_and_predicts():
    X, y = make_blobs((50, 50, 50), 2, cluster_std=0.05, random_state=0)
    model = KMeans(3, n_init=5, random_state=0).fit(X)
    assert model.inertia_ == pytest.approx(kmeans_objective(X, model.cluster_centers_))
    np.testing.assert_array_equal(model.predict(X), model.labels_)
    assert len(set(zip(y.tolist(), model.labels_.tolist(), strict=True))) == 3  # recovers the blobs
    assert len(set(model.seed_indices_.tolist())) == 3


def test_objective_with_labels_charges_given_centres():
    X = np.array([[0.0], [1.0], [10.0]])
    C = np.array([[0.0], [10.0]])
    assert kmeans_objective(X, C) == pytest.approx(1.0)
    assert kmeans_objective(X, C, labels=np.array([0, 1, 1])) == pytest.approx(81.0)
    with pytest.raises(ValueError, match=r"labels must lie in \[0, 2\)"):
        kmeans_objective(X, C, labels=np.array([0, 2, 1]))


def test_loss_ratio_of_the_best_run_is_one_and_bad_inputs_raise():
    X, _ = make_blobs((60, 60), 2, random_state=3)
    phi = KMeans(2, n_init=5, random_state=0).fit(X).inertia_
    assert loss_ratio(phi, phi) == 1.0
    assert loss_ratio(kmeans_objective(X, X[:2]), phi) >= 1.0
    with pytest.raises(ValueError, match="reference loss must be > 0"):
        loss_ratio(1.0, 0.0)
    with pytest.raises(ValueError, match="loss must be >= 0"):
        loss_ratio(-1.0, 1.0)


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
