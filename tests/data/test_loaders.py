"""Loaders (fedlib/data/_loaders.py): real datasets parse to the documented shapes; names reach the generators."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.cluster import KMeans as SklearnKMeans

from fedlib import data
from fedlib.data import DATASET_SPECS

from ..conftest import load_real


def test_celltype():
    ds = load_real("celltype")
    assert ds.X.shape == (12009, 10) and ds.n_clusters == 4
    assert sorted(np.bincount(ds.y).tolist()) == [2107, 2189, 3319, 4394]
    assert len(ds.extras["authors_clients"]) == 100
    # the authors' client split holds exactly the rows of X, each once (compared as sorted multisets of rows)
    clients = np.vstack(ds.extras["authors_clients"])
    np.testing.assert_array_equal(clients[np.lexsort(clients.T)], ds.X[np.lexsort(ds.X.T)])


def test_celltype_published_sizes_are_kmeans_clusters():
    """MUFC App. M.1's sizes come from K-means, not labels (data README)."""
    ds = load_real("celltype")
    labels = SklearnKMeans(4, n_init=10, random_state=0).fit(ds.X).labels_
    published = DATASET_SPECS["Celltype"].cluster_sizes
    assert tuple(sorted(np.bincount(labels).tolist(), reverse=True)) == published


def test_covtype_mufc_variant():
    import pandas as pd

    ds = load_real("covtype")
    assert ds.X.shape == (15120, 52)
    # independently: the Kaggle CSV without Id, the label and the two constant soil types, min-max scaled
    table = pd.read_csv(data.fetch("covtype_kaggle_train.csv"))
    features = table.drop(columns=["Id", "Cover_Type", "Soil_Type7", "Soil_Type15"])
    assert ds.extras["feature_names"] == list(features.columns)
    expected = ((features - features.min()) / (features.max() - features.min())).to_numpy()
    np.testing.assert_allclose(ds.X, expected, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(ds.y, table["Cover_Type"].to_numpy())
    assert np.bincount(ds.y)[1:].tolist() == [2160] * 7


def test_covtype_published_sizes_are_a_kmeans_partition():
    ds = load_real("covtype")
    labels = SklearnKMeans(7, n_init=1, random_state=289).fit(ds.X).labels_
    assert tuple(sorted(np.bincount(labels).tolist(), reverse=True)) == DATASET_SPECS["Covtype"].cluster_sizes


def test_mnist_test():
    ds = load_real("mnist_test")
    assert ds.X.shape == (10000, 784) and ds.extras["images"].shape == (10000, 28, 28)
    assert np.bincount(ds.y).tolist() == [980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009]
    assert ds.extras["images"].dtype == np.uint8
    np.testing.assert_array_equal(ds.X, ds.extras["images"].reshape(10000, 784) / 255.0)


def test_femnist_sample():
    ds = load_real("femnist_sample")
    assert ds.X.shape == (16393, 784)
    assert ds.y.min() == 0 and ds.y.max() == 61
    np.testing.assert_array_equal(ds.X, ds.extras["images"].reshape(16393, 784) / 255.0)
    assert np.unique(ds.extras["user_index"]).size == 105
    assert int(ds.extras["is_test"].sum()) == 1685


def test_postures_partial():
    import csv

    ds = load_real("postures_partial")
    assert ds.X.shape == (10077, 15)
    assert set(np.unique(ds.y).tolist()) == {1, 2, 3}
    # independently, with the csv module: the rows where the first five markers (X0..Z4) are all recorded
    with open(data.fetch("postures_partial.csv"), newline="") as fh:
        rows = list(csv.DictReader(fh))
    markers = [f"{axis}{m}" for m in range(5) for axis in "XYZ"]
    complete = [r for r in rows if all(r[c] != "?" for c in markers)]
    np.testing.assert_array_equal(ds.X, [[float(r[c]) for c in markers] for r in complete])
    np.testing.assert_array_equal(ds.y, [int(r["Class"]) for r in complete])
    np.testing.assert_array_equal(ds.extras["user"], [int(r["User"]) for r in complete])


def test_tinyshakespeare():
    ds = load_real("tinyshakespeare")
    text, vocab, codes = ds.extras["text"], ds.extras["vocab"], ds.extras["codes"]
    assert len(text) == 1115394 and len(vocab) == 65 and vocab == sorted(set(text))
    assert "".join(vocab[c] for c in codes) == text
    np.testing.assert_array_equal(ds.y[:-1], ds.X[1:, 0].astype(int))


def test_generated_names_load_the_generators():
    np.testing.assert_array_equal(data.load("gaussian", random_state=3).X, data.make_mufc_gaussian(random_state=3).X)
    tmi = data.load("TMI_standin", random_state=0)  # names are case-insensitive
    np.testing.assert_array_equal(tmi.X, data.make_standin("TMI", random_state=0).X)
    assert tmi.is_standin and not data.load("gaussian").is_standin
    tcga = data.load("tcga_standin", random_state=2)
    np.testing.assert_array_equal(tcga.y, data.make_standin("TCGA", random_state=2).y)


def test_available_names_and_unknown_names():
    names = data.available()
    assert names == sorted(names)
    assert set(names) == {
        "celltype",
        "covtype",
        "fashion_mnist",
        "fashion_mnist_test",
        "femnist_sample",
        "gaussian",
        "mnist_test",
        "postures_partial",
        "tcga_standin",
        "tinyshakespeare",
        "tmi_standin",
    }
    with pytest.raises(KeyError, match="unknown dataset 'mnist'"):
        data.load("mnist")
