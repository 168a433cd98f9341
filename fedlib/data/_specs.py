"""Published shapes of the papers' datasets (paper numbers live here, never in prose)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DatasetSpec:
    """A dataset as a paper describes it."""

    name: str
    n_samples: int
    n_features: int
    n_clusters: int
    n_clients: int | None  #: L used by the paper, if any
    cluster_sizes: tuple[int, ...] | None  #: published sizes, largest first (None: not published)
    where: str  #: where in the paper the numbers are stated
    note: str = ""


#: MUFC App. M.1, Table "datasets" (Pan et al., ICLR 2023). Cluster sizes are
#: K-means clusters, not labels (MUFC footnote 3).
MUFC_DATASETS: dict[str, DatasetSpec] = {
    spec.name: spec
    for spec in [
        DatasetSpec("Celltype", 12009, 10, 4, 100, (6506, 2328, 2201, 974), "MUFC App. M.1"),
        DatasetSpec("Postures", 74975, 15, 5, 100, (19772, 17340, 15141, 12225, 10497), "MUFC App. M.1"),
        DatasetSpec("Covtype", 15120, 52, 7, 100, (3742, 3105, 2873, 2307, 1482, 886, 725), "MUFC App. M.1"),
        DatasetSpec("Gaussian", 30000, 10, 10, 100, (3000,) * 10, "MUFC App. M.1"),
        DatasetSpec(
            "FEMNIST",
            36725,
            784,
            62,
            100,
            None,
            "MUFC App. M.1",
            note="only the largest (1234) and smallest (282) cluster sizes are published",
        ),
        DatasetSpec("TCGA", 1904, 57, 4, 10, (735, 503, 390, 276), "MUFC App. M.1"),
        DatasetSpec(
            "TMI",
            1126,
            984,
            4,
            10,
            (934, 125, 46, 21),
            "MUFC App. M.1",
            note="the table says d=984, the text 983",
        ),
    ]
}
