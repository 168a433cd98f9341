"""Image datasets for federated learning: split_dataset, image_array, Fashion-MNIST (mirror, Debian copy, stand-in)."""

from __future__ import annotations

import os
import shutil

import numpy as np
import pytest

from fedlib import data
from fedlib.data import Dataset, _loaders, image_array, split_dataset
from fedlib.exceptions import ChecksumError, DataUnavailableError

from ..conftest import load_real

REAL_MIRROR = os.environ.get("FEDLIB_DATA_MIRROR")  # captured before any test changes it


def _toy(counts=(50, 30, 20), seed=0) -> Dataset:
    """Rows numbered in X's first column (to trace them), labels in blocks, shuffled; per-row and shared extras."""
    rng = np.random.default_rng(seed)
    y = rng.permutation(np.repeat(np.arange(len(counts)), counts))
    n = y.size
    X = np.column_stack([np.arange(n, dtype=np.float64), rng.normal(size=n)])
    extras = {"row": np.arange(n) * 10, "names": ("a", "b", "c"), "matrix": np.eye(3)}
    return Dataset("toy", X, y, len(counts), "hand-made", extras=extras)


def _rows(part: Dataset) -> np.ndarray:
    return part.X[:, 0].astype(np.int64)


# --- split_dataset ---


def test_stratified_split_keeps_every_label_share_exactly_when_it_can():
    ds = _toy((50, 30, 20))
    train, test = split_dataset(ds, 0.2, random_state=0)
    assert np.bincount(test.y).tolist() == [10, 6, 4]
    assert np.bincount(train.y).tolist() == [40, 24, 16]


@pytest.mark.parametrize("test_size", [1, 5, 13, 37, 0.07, 0.5, 0.93, 99])
def test_stratified_split_has_the_exact_size_and_each_label_within_one_of_its_share(test_size):
    ds = _toy((7, 5, 3, 85))
    n = ds.n_samples
    n_test = test_size if isinstance(test_size, int) else round(test_size * n)
    train, test = split_dataset(ds, test_size, random_state=1)
    assert test.n_samples == n_test and train.n_samples == n - n_test
    counts = np.bincount(ds.y)
    share = counts * n_test / n
    got = np.bincount(test.y, minlength=counts.size)
    assert np.all(got >= np.floor(share)) and np.all(got <= np.ceil(share))


@pytest.mark.parametrize("stratify", [True, False])
def test_parts_partition_the_rows_in_order_with_their_extras(stratify):
    ds = _toy()
    train, test = split_dataset(ds, 0.3, stratify=stratify, random_state=2)
    rows_train, rows_test = _rows(train), _rows(test)
    assert np.array_equal(np.sort(np.concatenate([rows_train, rows_test])), np.arange(100))
    assert np.all(np.diff(rows_train) > 0) and np.all(np.diff(rows_test) > 0)  # original order kept
    for part, rows in ((train, rows_train), (test, rows_test)):
        assert np.array_equal(part.y, ds.y[rows])
        assert np.array_equal(part.X, ds.X[rows])
        assert np.array_equal(part.extras["row"], rows * 10)  # per-row extras follow their rows
        assert part.extras["names"] == ("a", "b", "c") and np.array_equal(part.extras["matrix"], np.eye(3))
        assert part.n_clusters == ds.n_clusters and not part.is_standin
    assert train.name == "toy (train part)" and test.name == "toy (test part)"
    assert "30 of 100 rows to the test part" in test.source and test.source.startswith("hand-made")


@pytest.mark.parametrize("stratify", [True, False])
def test_split_is_reproducible_by_seed(stratify):
    ds = _toy()
    a = _rows(split_dataset(ds, 0.25, stratify=stratify, random_state=3)[1])
    b = _rows(split_dataset(ds, 0.25, stratify=stratify, random_state=3)[1])
    c = _rows(split_dataset(ds, 0.25, stratify=stratify, random_state=4)[1])
    g = _rows(split_dataset(ds, 0.25, stratify=stratify, random_state=np.random.default_rng(3))[1])
    assert np.array_equal(a, b) and np.array_equal(a, g)
    assert not np.array_equal(a, c)


def test_int_and_float_test_sizes():
    ds = _toy()
    by_share = split_dataset(ds, 0.25, random_state=5)[1]
    by_count = split_dataset(ds, 25, random_state=5)[1]
    by_numpy = split_dataset(ds, np.float64(0.25), random_state=5)[1]
    assert by_share.n_samples == by_count.n_samples == by_numpy.n_samples == 25
    assert np.array_equal(_rows(by_share), _rows(by_count)) and np.array_equal(_rows(by_share), _rows(by_numpy))
    assert split_dataset(ds, np.int64(3), random_state=5)[1].n_samples == 3


@pytest.mark.parametrize("test_size", [0, 100, 101, -1, 0.0, 1.0, 1.5, -0.2, 0.004, 0.996])
def test_split_rejects_sizes_leaving_a_part_empty(test_size):
    with pytest.raises(ValueError):
        split_dataset(_toy(), test_size)


@pytest.mark.parametrize("test_size", ["0.5", None, [10]])
def test_split_rejects_test_sizes_of_other_types(test_size):
    with pytest.raises(TypeError):
        split_dataset(_toy(), test_size)


# --- image_array ---


def test_image_array_from_square_rows():
    X = np.arange(2 * 16, dtype=np.float64).reshape(2, 16) / 32
    out = image_array(Dataset("toy", X, np.array([0, 1]), 2, "hand-made"))
    assert out.shape == (2, 1, 4, 4) and out.dtype == np.float32 and out.flags.c_contiguous
    np.testing.assert_array_equal(out[:, 0], X.reshape(2, 4, 4).astype(np.float32))


def test_image_array_scales_uint8_images_and_keeps_float_ones():
    pixels = np.array([[[0, 255], [51, 102]], [[255, 255], [0, 1]]], dtype=np.uint8)
    ds = Dataset("toy", pixels.reshape(2, 4) / 255.0, np.array([0, 1]), 2, "hand-made", extras={"images": pixels})
    out = image_array(ds)
    assert out.shape == (2, 1, 2, 2) and out.dtype == np.float32 and out.flags.c_contiguous
    assert out.max() == 1.0 and out.min() == 0.0
    np.testing.assert_allclose(out[0, 0], [[0.0, 1.0], [0.2, 0.4]], rtol=1e-6)
    np.testing.assert_allclose(out.reshape(2, 4), ds.X, rtol=1e-6)  # the scale of X
    floats = pixels.astype(np.float32) * 2
    out = image_array(Dataset("toy", ds.X, ds.y, 2, "hand-made", extras={"images": floats}))
    np.testing.assert_array_equal(out[:, 0], floats)  # only uint8 pixels are divided by 255


def test_image_array_rejects_non_square_images():
    with pytest.raises(ValueError, match="not a square"):
        image_array(Dataset("toy", np.zeros((3, 12)), np.zeros(3, dtype=int), 1, "hand-made"))
    for images in (np.zeros((3, 4, 5), np.uint8), np.zeros((2, 4, 4), np.uint8), np.zeros((3, 16), np.uint8)):
        ds = Dataset("toy", np.zeros((3, 16)), np.zeros(3, dtype=int), 1, "hand-made", extras={"images": images})
        with pytest.raises(ValueError, match="extras\\['images'\\]"):
            image_array(ds)


# --- Fashion-MNIST ---


def test_fashion_mnist_test_set():
    ds = load_real("fashion_mnist_test")
    assert ds.X.shape == (10000, 784) and ds.X.dtype == np.float64
    assert 0.0 <= ds.X.min() and ds.X.max() == 1.0
    assert np.bincount(ds.y).tolist() == [1000] * 10 and ds.n_clusters == 10
    assert ds.extras["images"].shape == (10000, 28, 28) and ds.extras["images"].dtype == np.uint8
    assert ds.extras["class_names"] == data.FASHION_MNIST_CLASSES and len(data.FASHION_MNIST_CLASSES) == 10
    assert not ds.is_standin and ds.name == "Fashion-MNIST test"
    images = image_array(ds)
    assert images.shape == (10000, 1, 28, 28) and images.dtype == np.float32
    np.testing.assert_allclose(images.reshape(10000, 784), ds.X, rtol=1e-6)
    train, test = split_dataset(ds, 2000, random_state=0)
    assert np.bincount(test.y).tolist() == [200] * 10 and np.bincount(train.y).tolist() == [800] * 10


@pytest.fixture
def nowhere(tmp_path, monkeypatch):
    """No mirror, an empty cache, no downloads, and Debian's Fashion-MNIST directory an empty folder."""
    monkeypatch.setenv("FEDLIB_DATA_MIRROR", str(tmp_path / "mirror"))
    monkeypatch.setenv("FEDLIB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("FEDLIB_OFFLINE", "1")
    (tmp_path / "mirror").mkdir()
    system = tmp_path / "debian"
    system.mkdir()
    monkeypatch.setattr(_loaders, "_FASHION_SYSTEM_DIR", system)
    return system


def _mirror_file(name: str) -> str:
    if not REAL_MIRROR or not os.path.isfile(os.path.join(REAL_MIRROR, name)):
        pytest.skip(f"{name} is not in the data mirror")
    return os.path.join(REAL_MIRROR, name)


def test_debian_copy_is_used_when_neither_mirror_nor_cache_has_the_file(nowhere):
    for kind in ("images-idx3", "labels-idx1"):
        shutil.copy(_mirror_file(f"fashion-t10k-{kind}-ubyte.gz"), nowhere / f"t10k-{kind}-ubyte.gz")
    with pytest.raises(DataUnavailableError):
        data.fetch("fashion-t10k-labels-idx1-ubyte.gz")  # neither mirror nor cache has it ...
    assert _loaders._fetch_fashion("t10k", "labels-idx1") == nowhere / "t10k-labels-idx1-ubyte.gz"  # ... Debian has
    ds = data.load("fashion_mnist_test")
    assert ds.X.shape == (10000, 784) and np.bincount(ds.y).tolist() == [1000] * 10


def test_corrupted_debian_copy_raises(nowhere):
    (nowhere / "t10k-labels-idx1-ubyte.gz").write_bytes(b"not the registered bytes")
    with pytest.raises(ChecksumError, match=r"fashion-t10k-labels-idx1-ubyte\.gz"):
        _loaders._fetch_fashion("t10k", "labels-idx1")


def test_missing_everywhere_names_the_debian_package(nowhere):
    with pytest.raises(DataUnavailableError, match="dataset-fashion-mnist") as info:
        data.load("fashion_mnist_test")
    assert str(nowhere / "t10k-images-idx3-ubyte.gz") in str(info.value)


def test_fashion_mnist_stand_in_has_the_published_shape(nowhere):
    with pytest.warns(RuntimeWarning, match="stand-in"):
        ds = data.load_or_standin("fashion_mnist")
    assert ds.is_standin and ds.name == "Fashion-MNIST train (stand-in)"
    assert ds.X.shape == (60000, 784) and ds.n_clusters == 10
    assert np.bincount(ds.y).tolist() == [6000] * 10
    assert image_array(ds).shape == (60000, 1, 28, 28)
