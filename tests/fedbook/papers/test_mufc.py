"""MUFC's published numbers (book/fedbook/papers/mufc.py) are self-consistent, as the chapters rely on them."""

from __future__ import annotations

import pytest
from fedbook.papers import mufc


@pytest.mark.parametrize("name", mufc.DATASETS)
def test_dataset_specs_agree_with_their_cluster_sizes(name):
    spec = mufc.DATASET_SPECS[name]
    assert spec.name == name and spec.where == "MUFC App. M.1"
    assert spec.n_clients == (10 if name in ("TMI", "TCGA") else 100) == mufc.N_CLIENTS[name]
    if spec.cluster_sizes is not None:
        assert len(spec.cluster_sizes) == spec.n_clusters
        assert sum(spec.cluster_sizes) == spec.n_samples
        assert list(spec.cluster_sizes) == sorted(spec.cluster_sizes, reverse=True)  # largest first


def test_gaussian_parameters_match_the_dataset_table():
    spec = mufc.DATASET_SPECS["Gaussian"]
    g = mufc.GAUSSIAN
    assert (g["n_clusters"], g["n_features"]) == (spec.n_clusters, spec.n_features)
    assert g["n_clusters"] * g["n_per_cluster"] == spec.n_samples
    assert spec.cluster_sizes == (g["n_per_cluster"],) * g["n_clusters"]


def test_tables_cover_every_dataset_and_method():
    assert set(mufc.TABLE1) == {"MUFC", "K-FED", "DC-KM"}
    for cells in [*mufc.TABLE1.values(), mufc.TABLE2_MUFC]:
        assert set(cells) == set(mufc.DATASETS)
        assert all(mean >= 1.0 and std >= 0.0 for mean, std in cells.values())  # loss ratios against phi_c^*
    assert set(mufc.SPEEDUP_NO_RETRAIN) == set(mufc.DATASETS)
    assert mufc.N_TRIALS == {name: 3 if name == "FEMNIST" else 5 for name in mufc.DATASETS}


def test_paper_cell_prints_two_decimals():
    assert mufc.paper_cell(mufc.TABLE1["MUFC"]["Celltype"]) == "1.14 ± 0.03"
    assert mufc.paper_cell((1.0, 0.005)) == "1.00 ± 0.01"
