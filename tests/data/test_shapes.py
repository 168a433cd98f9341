"""Stand-in shapes (fedlib/data/_shapes.py): the shapes of the registered files the loaders parse."""

from __future__ import annotations

import pytest

from fedlib.data import DATASET_SPECS, STANDIN_SHAPES

# n_samples, n_features and classes of the registered files (tests/data/test_loaders.py parses them)
REGISTERED = {
    "celltype": (12009, 10, 4),
    "covtype": (15120, 52, 7),
    "mnist_test": (10000, 784, 10),
    "femnist_sample": (16393, 784, 62),
    "postures_partial": (10077, 15, 3),
}


@pytest.mark.parametrize("name", sorted(REGISTERED))
def test_standin_shape_is_the_registered_shape(name):
    title, sizes, n_features = STANDIN_SHAPES[name]
    assert (sum(sizes), n_features, len(sizes)) == REGISTERED[name]
    assert title and all(s >= 1 for s in sizes)


def test_mufc_datasets_take_the_published_kmeans_sizes():
    for key, spec_name in (("celltype", "Celltype"), ("covtype", "Covtype")):
        assert STANDIN_SHAPES[key][1] == DATASET_SPECS[spec_name].cluster_sizes
