"""Generators (fedlib/data/_synthetic.py): make_blobs by its definition, MUFC's Gaussian data, stand-ins, scaling."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from fedlib import data
from fedlib.data import DATASET_SPECS, PURCHASE100
from fedlib.data import MUFC_GAUSSIAN as GAUSSIAN


def blobs_by_definition(sizes, d, std, box, seed):
    """Centres uniform in box^d, cluster h gets sizes[h] points centre_h + N(0, std² I), rows shuffled: one stream."""
    rng = np.random.default_rng(seed)
    centers = rng.uniform(box[0], box[1], size=(len(sizes), d))
    y = np.repeat(np.arange(len(sizes)), sizes)
    X = centers[y] + rng.normal(0.0, std, size=(y.size, d))
    order = rng.permutation(y.size)
    return X[order], y[order], centers


@given(
    st.lists(st.integers(1, 30), min_size=1, max_size=5),
    st.integers(1, 6),
    st.floats(0.01, 5.0),
    st.tuples(st.floats(-10, 0), st.floats(0.5, 10)),
    st.integers(0, 2**32 - 1),
)
def test_make_blobs_equals_its_definition(sizes, d, std, box, seed):
    X, y, centers = data.make_blobs(sizes, d, cluster_std=std, center_box=box, random_state=seed, return_centers=True)
    X_ref, y_ref, centers_ref = blobs_by_definition(sizes, d, std, box, seed)
    np.testing.assert_array_equal(centers, centers_ref)
    np.testing.assert_array_equal(y, y_ref)
    np.testing.assert_array_equal(X, X_ref)
    assert y.dtype == np.int64 and np.bincount(y, minlength=len(sizes)).tolist() == sizes


def test_make_blobs_spread_is_cluster_std():
    X, y, centers = data.make_blobs((4000, 4000), 5, cluster_std=0.3, random_state=0, return_centers=True)
    residual = X - centers[y]
    assert residual.std() == pytest.approx(0.3, rel=0.02) and abs(residual.mean()) < 0.01
    assert np.count_nonzero(np.diff(y)) > 1000  # rows are shuffled, not in blocks


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (dict(cluster_sizes=(3, 0)), "positive integers"),
        (dict(cluster_sizes=(2.0, 3.0)), "positive integers"),
        (dict(cluster_sizes=()), "positive integers"),
        (dict(center_box=(1.0, 1.0)), "low < high"),
        (dict(center_box=(0.0, np.inf)), "low < high"),
        (dict(cluster_std=0.0), "cluster_std=0.0 should be > 0"),
    ],
)
def test_make_blobs_refuses_bad_arguments(kwargs, match):
    kwargs = {"cluster_sizes": (3, 2), **kwargs}
    with pytest.raises(ValueError, match=match):
        data.make_blobs(n_features=2, **kwargs)
    with pytest.raises(TypeError, match="n_features must be an int"):
        data.make_blobs((3, 2), 2.0)


def test_mufc_gaussian_is_scaled_blobs_with_the_published_parameters():
    """MUFC App. M.1: K Gaussians of n_per_cluster points in [0, 1]^d, variance 0.5, divided by max|x|."""
    ds = data.make_mufc_gaussian(random_state=0)
    K, n_per, d = GAUSSIAN["n_clusters"], GAUSSIAN["n_per_cluster"], GAUSSIAN["n_features"]
    X, y = data.make_blobs((n_per,) * K, d, cluster_std=np.sqrt(GAUSSIAN["variance"]), random_state=0)
    np.testing.assert_array_equal(ds.X, X / np.max(np.abs(X)))
    np.testing.assert_array_equal(ds.y, y)
    assert ds.n_clusters == K and ds.X.shape == (K * n_per, d) and not ds.is_standin
    spec = DATASET_SPECS["Gaussian"]
    assert (spec.n_samples, spec.n_features, spec.n_clusters) == (K * n_per, d, K)


def test_mufc_gaussian_parameters_can_be_overridden():
    ds = data.make_mufc_gaussian(n_clusters=3, n_per_cluster=7, n_features=2, variance=2.0, random_state=5)
    X, _ = data.make_blobs((7, 7, 7), 2, cluster_std=np.sqrt(2.0), random_state=5)
    np.testing.assert_array_equal(ds.X, data.scale_max_abs(X))
    assert ds.n_clusters == 3 and "variance 2.0" in ds.source


@pytest.mark.parametrize("name", ["TCGA", "TMI"])
def test_standins_are_scaled_blobs_with_the_published_shape_and_sizes(name):
    spec = DATASET_SPECS[name]
    ds = data.make_standin(name, random_state=1)
    assert ds.is_standin and ds.name == f"{name} (stand-in)" and ds.n_clusters == spec.n_clusters
    assert ds.X.shape == (spec.n_samples, spec.n_features)
    X, y = data.make_blobs(spec.cluster_sizes, spec.n_features, cluster_std=0.15, random_state=1)
    np.testing.assert_array_equal(ds.X, data.scale_max_abs(X))
    np.testing.assert_array_equal(ds.y, y)
    with pytest.raises(KeyError, match="no published shape for 'MNIST'"):
        data.make_standin("MNIST")


@given(st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=30))
def test_scale_max_abs_divides_by_the_largest_magnitude(values):
    top = max(abs(v) for v in values)
    assume(top > 0)  # all zeros: below
    X = np.array([values])
    out = data.scale_max_abs(X)
    np.testing.assert_array_equal(out, X / top)
    assert np.max(np.abs(out)) == 1.0


def test_scale_max_abs_copies_all_zeros():
    X = np.zeros((2, 3))
    out = data.scale_max_abs(X)
    np.testing.assert_array_equal(out, X)
    assert out is not X


# --- Purchase-100 stand-in ------------------------------------------------------------------------------------


def purchase_by_definition(n, d, k, flip, seed):
    """k fair-bit prototypes; class sizes n // k, the first n % k one more; labels shuffled; bits flipped w.p. flip."""
    rng = np.random.default_rng(seed)
    prototypes = rng.random((k, d)) < 0.5
    sizes = [n // k + (c < n % k) for c in range(k)]
    y = rng.permutation(np.repeat(np.arange(k), sizes))
    X = np.logical_xor(prototypes[y], rng.random((n, d)) < flip).astype(np.float64)
    return X, y, prototypes


@given(st.integers(2, 12), st.integers(0, 30), st.integers(1, 20), st.floats(0.0, 0.5), st.integers(0, 2**32 - 1))
def test_make_purchase_like_equals_its_definition(k, extra, d, flip, seed):
    n = k + extra
    ds = data.make_purchase_like(n, d, k, flip, random_state=seed)
    X, y, prototypes = purchase_by_definition(n, d, k, flip, seed)
    np.testing.assert_array_equal(ds.X, X)
    np.testing.assert_array_equal(ds.y, y)
    np.testing.assert_array_equal(ds.extras["prototypes"], prototypes)
    assert ds.X.dtype == np.float64 and ds.y.dtype == np.int64
    counts = np.bincount(ds.y, minlength=k)
    assert counts.max() - counts.min() <= 1 and counts.sum() == n


def test_make_purchase_like_has_purchase100s_published_shape():
    ds = data.make_purchase_like(random_state=0)
    assert ds.is_standin and ds.name == "Purchase-100 (stand-in)"
    assert ds.X.shape == (20000, PURCHASE100["n_features"]) and ds.n_clusters == PURCHASE100["n_classes"] == 100
    assert np.unique(ds.X).tolist() == [0.0, 1.0]
    assert np.bincount(ds.y).tolist() == [200] * 100
    assert "Shokri" in ds.source and "197,324" in ds.source and "not the real data" in ds.source
    assert PURCHASE100 == {"n_samples": 197_324, "n_features": 600, "n_classes": 100}
    # every bit is its prototype's, flipped with probability 0.15: the flip rate is 0.15 within 4 standard errors
    flipped = np.mean(ds.X != ds.extras["prototypes"][ds.y])
    assert abs(flipped - 0.15) < 4 * np.sqrt(0.15 * 0.85 / ds.X.size)
    # prototypes are fair bits: two differ in about half their 600 bits
    protos = ds.extras["prototypes"]
    assert 0.45 < np.mean(protos[0] != protos[1:]) < 0.55


def test_make_purchase_like_flip_zero_copies_the_prototypes_and_seeds_matter():
    ds = data.make_purchase_like(300, 20, 3, 0.0, random_state=4)
    np.testing.assert_array_equal(ds.X, ds.extras["prototypes"][ds.y])
    again = data.make_purchase_like(300, 20, 3, 0.0, random_state=4)
    other = data.make_purchase_like(300, 20, 3, 0.0, random_state=5)
    assert again.X.tobytes() == ds.X.tobytes() and not np.array_equal(other.X, ds.X)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"n_samples": 99}, ValueError, "n_samples=99 should be >= 100"),
        ({"n_classes": 1}, ValueError, "n_classes=1 should be >= 2"),
        ({"n_features": 0}, ValueError, "n_features=0 should be >= 1"),
        ({"flip": 0.6}, ValueError, "flip=0.6 should be <= 0.5"),
        ({"flip": -0.1}, ValueError, r"flip=-0.1 should be >= 0.0"),
        ({"n_samples": 1000.0}, TypeError, "n_samples must be an int"),
    ],
)
def test_make_purchase_like_refuses_bad_arguments(kwargs, error, match):
    with pytest.raises(error, match=match):
        data.make_purchase_like(**kwargs)
