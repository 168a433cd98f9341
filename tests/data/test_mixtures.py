"""SecFC's data (fedlib/data/_mixtures.py): the Gaussian mixture of §5.1 and the rotated digits of §5.2."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fedlib import data

# --- make_gaussian_mixture -------------------------------------------------------------------------------------


@pytest.mark.parametrize(("n_samples", "k"), [(1000, 4), (1003, 4), (16384, 16)])
def test_gaussian_mixture_has_equal_components_and_nearest_center_labels(n_samples, k, global_random_seed):
    ds = data.make_gaussian_mixture(n_samples, 30, k, random_state=global_random_seed)
    assert ds.X.shape == (n_samples, 30) and ds.n_clusters == k
    sizes = np.bincount(ds.y, minlength=k)
    assert sizes.max() - sizes.min() <= 1 and sizes.sum() == n_samples
    centers = ds.extras["centers"]
    assert centers.shape == (k, 30)
    assert centers.min() >= -10.0 and centers.max() <= 10.0
    d2 = ((ds.X[:, None, :] - centers[None, :, :]) ** 2).sum(axis=2)
    np.testing.assert_array_equal(ds.extras["nearest_center_labels"], d2.argmin(axis=1))
    assert ds.name == f"Gaussian mixture (σ=1, k={k})"
    assert "sigma=1" in ds.source and not ds.is_standin


@given(st.integers(1, 60), st.integers(1, 5), st.integers(1, 6), st.floats(0.1, 30.0), st.integers(0, 2**32 - 1))
def test_gaussian_mixture_is_make_blobs_with_even_sizes(extra, d, k, std, seed):
    """SecFC §5.1 by its definition: k equal-weight components, the first n mod k one point larger."""
    n = k + extra
    ds = data.make_gaussian_mixture(n, d, k, cluster_std=std, random_state=seed)
    sizes = [n // k + (h < n % k) for h in range(k)]
    X, y, centers = data.make_blobs(
        sizes, d, cluster_std=std, center_box=(-10.0, 10.0), random_state=seed, return_centers=True
    )
    np.testing.assert_array_equal(ds.X, X)
    np.testing.assert_array_equal(ds.y, y)
    np.testing.assert_array_equal(ds.extras["centers"], centers)
    nearest = [min(range(k), key=lambda h, x=x: float(np.sum((x - centers[h]) ** 2))) for x in X]
    assert ds.extras["nearest_center_labels"].tolist() == nearest


def test_gaussian_mixture_std_and_shuffle():
    ds = data.make_gaussian_mixture(20000, 50, 4, cluster_std=20.0, center_box=(0.0, 1.0), random_state=0)
    residual = ds.X - ds.extras["centers"][ds.y]
    assert residual.std() == pytest.approx(20.0, rel=0.01)
    assert ds.name == "Gaussian mixture (σ=20, k=4)"
    # rows are shuffled: labels are not sorted in blocks
    assert np.count_nonzero(np.diff(ds.y)) > 1000
    # with sigma = 20 the components overlap: the generating and closest-centre labels disagree
    assert (ds.y != ds.extras["nearest_center_labels"]).any()


def test_gaussian_mixture_is_deterministic_and_seed_dependent():
    a = data.make_gaussian_mixture(100, 5, 3, random_state=7)
    b = data.make_gaussian_mixture(100, 5, 3, random_state=7)
    c = data.make_gaussian_mixture(100, 5, 3, random_state=8)
    np.testing.assert_array_equal(a.X, b.X)
    np.testing.assert_array_equal(a.y, b.y)
    assert not np.array_equal(a.X, c.X)


def test_gaussian_mixture_rejects_bad_arguments():
    with pytest.raises(ValueError, match=r"n_samples=3 should be >= n_clusters=4"):
        data.make_gaussian_mixture(3, 2, 4)
    with pytest.raises(ValueError, match=r"cluster_std=0"):
        data.make_gaussian_mixture(10, 2, 2, cluster_std=0.0)
    with pytest.raises(ValueError, match=r"low < high, got low=1.0, high=1.0"):
        data.make_gaussian_mixture(10, 2, 2, center_box=(1.0, 1.0))


# --- rotated_digit --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def fake_mnist() -> data.Dataset:
    """MNIST-shaped data without the file: random uint8 28x28 images with digit labels 0..9."""
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, size=(203, 28, 28), dtype=np.uint8)
    y = rng.integers(0, 10, size=203).astype(np.int64)
    y[:3] = 2  # at least a few twos
    y[y == 7] = 2  # and no sevens
    return data.Dataset(
        name="fake MNIST",
        X=images.reshape(203, -1).astype(np.float64) / 255.0,
        y=y,
        n_clusters=10,
        source="test",
        extras={"images": images},
    )


@pytest.mark.parametrize("construction", ["disjoint", "all_rotations"])
def test_rotated_digit_rotates_each_image_by_its_label(fake_mnist, construction, global_random_seed):
    ds = data.rotated_digit(fake_mnist, 2, construction=construction, random_state=global_random_seed)
    twos = np.flatnonzero(fake_mnist.y == 2)
    n_twos = twos.size
    assert ds.n_clusters == 4 and ds.n_features == 784 and not ds.is_standin
    assert ds.name == "Rotated MNIST digit 2" and construction in ds.source
    assert ds.X.min() >= 0.0 and ds.X.max() <= 1.0
    source = ds.extras["source_index"]
    assert set(source.tolist()) == set(twos.tolist())
    expected = np.stack(
        [
            np.rot90(fake_mnist.extras["images"][i], k=int(r)).astype(np.float64) / 255.0
            for i, r in zip(source, ds.y, strict=True)
        ]
    ).reshape(-1, 784)
    np.testing.assert_array_equal(ds.X, expected)
    sizes = np.bincount(ds.y, minlength=4)
    if construction == "disjoint":
        assert ds.n_samples == n_twos and np.unique(source).size == n_twos
        assert sizes.max() - sizes.min() <= 1
    else:
        assert ds.n_samples == 4 * n_twos
        assert sizes.tolist() == [n_twos] * 4
        for r in range(4):  # every image appears once per rotation
            np.testing.assert_array_equal(np.sort(source[ds.y == r]), twos)


def test_rotated_digit_disjoint_groups_are_random(fake_mnist):
    a = data.rotated_digit(fake_mnist, 2, random_state=0)
    b = data.rotated_digit(fake_mnist, 2, random_state=1)
    c = data.rotated_digit(fake_mnist, 2, random_state=0)
    np.testing.assert_array_equal(a.X, c.X)
    assert not np.array_equal(a.extras["source_index"], b.extras["source_index"])


def test_rotated_digit_rotation_is_counterclockwise():
    image = np.zeros((1, 2, 2), dtype=np.uint8)
    image[0, 0, 1] = 255  # top-right pixel
    ds0 = data.Dataset("tiny", image.reshape(1, -1) / 255.0, np.array([5]), 1, "test", extras={"images": image})
    out = data.rotated_digit(ds0, 5, construction="all_rotations")
    # 90° counter-clockwise moves top-right to top-left, 180° to bottom-left, 270° to bottom-right
    np.testing.assert_array_equal(out.X, [[0, 1, 0, 0], [1, 0, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]])


def test_rotated_digit_inherits_standin_and_reshapes_x_without_images():
    rng = np.random.default_rng(3)
    X = rng.random((40, 64))
    y = np.repeat([3, 4], 20)
    ds = data.Dataset("digits (stand-in)", X, y, 2, "test", is_standin=True)
    out = data.rotated_digit(ds, 3, random_state=0)
    assert out.is_standin and out.name.endswith("(stand-in)") and out.n_features == 64
    expected = np.stack(
        [np.rot90(X[i].reshape(8, 8), k=int(r)) for i, r in zip(out.extras["source_index"], out.y, strict=True)]
    )
    np.testing.assert_array_equal(out.X, expected.reshape(-1, 64))


def test_rotated_digit_rejects_missing_digit_and_bad_construction(fake_mnist):
    with pytest.raises(ValueError, match=r"digit=7 has no images"):
        data.rotated_digit(fake_mnist, 7)
    with pytest.raises(ValueError, match=r"construction='copies' should be one of"):
        data.rotated_digit(fake_mnist, 2, construction="copies")
