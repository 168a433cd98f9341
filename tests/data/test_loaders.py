"""Real datasets parse to the documented shapes; generators and stand-ins have the published ones."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.cluster import KMeans as SklearnKMeans

from fedlib import data
from fedlib.papers.mufc import DATASET_SPECS

from ..conftest import load_real


def test_celltype():
    ds = load_real("celltype")
    assert ds.X.shape == (12009, 10) and ds.n_clusters == 4
    assert sorted(np.bincount(ds.y).tolist()) == [2107, 2189, 3319, 4394]
    assert len(ds.extras["authors_clients"]) == 100
    assert sum(len(c) for c in ds.extras["authors_clients"]) == 12009


def test_celltype_published_sizes_are_kmeans_clusters():
    """MUFC App. M.1's sizes come from K-means, not labels (data README)."""
    ds = load_real("celltype")
    labels = SklearnKMeans(4, n_init=10, random_state=0).fit(ds.X).labels_
    published = DATASET_SPECS["Celltype"].cluster_sizes
    assert tuple(sorted(np.bincount(labels).tolist(), reverse=True)) == published


def test_covtype_mufc_variant():
    ds = load_real("covtype")
    assert ds.X.shape == (15120, 52)
    assert ds.X.min() == 0.0 and ds.X.max() == 1.0
    assert "Soil_Type7" not in ds.extras["feature_names"] and "Soil_Type15" not in ds.extras["feature_names"]
    assert np.bincount(ds.y)[1:].tolist() == [2160] * 7


def test_covtype_published_sizes_are_a_kmeans_partition():
    ds = load_real("covtype")
    labels = SklearnKMeans(7, n_init=1, random_state=289).fit(ds.X).labels_
    assert tuple(sorted(np.bincount(labels).tolist(), reverse=True)) == DATASET_SPECS["Covtype"].cluster_sizes


def test_mnist_test():
    ds = load_real("mnist_test")
    assert ds.X.shape == (10000, 784) and ds.extras["images"].shape == (10000, 28, 28)
    assert np.bincount(ds.y).tolist() == [980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009]
    assert 0.0 <= ds.X.min() and ds.X.max() <= 1.0


def test_femnist_sample():
    ds = load_real("femnist_sample")
    assert ds.X.shape == (16393, 784)
    assert ds.y.min() == 0 and ds.y.max() == 61
    assert np.unique(ds.extras["user_index"]).size == 105
    assert int(ds.extras["is_test"].sum()) == 1685


def test_postures_partial():
    ds = load_real("postures_partial")
    assert ds.X.shape == (10077, 15)
    assert set(np.unique(ds.y).tolist()) == {1, 2, 3}
    assert not np.isnan(ds.X).any()


def test_tinyshakespeare():
    ds = load_real("tinyshakespeare")
    text, vocab, codes = ds.extras["text"], ds.extras["vocab"], ds.extras["codes"]
    assert len(text) == 1115394 and len(vocab) == 65
    assert "".join(vocab[c] for c in codes[:20]) == text[:20]
    np.testing.assert_array_equal(ds.y[:-1], ds.X[1:, 0].astype(int))


def test_mufc_gaussian_recipe():
    ds = data.make_mufc_gaussian(random_state=0)
    assert ds.X.shape == (30000, 10)
    assert np.bincount(ds.y).tolist() == [3000] * 10
    assert np.max(np.abs(ds.X)) == pytest.approx(1.0)
    again = data.make_mufc_gaussian(random_state=0)
    np.testing.assert_array_equal(ds.X, again.X)


@pytest.mark.parametrize("name", ["TCGA", "TMI"])
def test_standins_have_published_shape_and_sizes(name):
    spec = DATASET_SPECS[name]
    ds = data.make_standin(name, random_state=1)
    assert ds.is_standin and "(stand-in)" in ds.name
    assert ds.X.shape == (spec.n_samples, spec.n_features)
    assert tuple(sorted(np.bincount(ds.y).tolist(), reverse=True)) == spec.cluster_sizes


def test_load_names_generated_sets():
    assert data.load("tmi_standin").is_standin
    assert not data.load("gaussian").is_standin
    assert set(data.available()) >= {"celltype", "covtype", "gaussian", "mnist_test", "tcga_standin"}
