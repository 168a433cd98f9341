"""Published shapes of the datasets fedlib loads or generates: sizes, dimensions, cluster sizes.

A stand-in keeps the shape of the data it replaces, and a generator the shape its
paper publishes, so these numbers are data of the library rather than of one chapter.

- :data:`DATASET_SPECS`: the table of datasets of MUFC (Pan et al., ICLR 2023, App. M.1);
  cluster sizes are K-means clusters, not labels (its footnote 3).
- :data:`MUFC_GAUSSIAN`: MUFC's Gaussian data (App. M.1).
- :data:`STANDIN_SHAPES`: ``(display name, cluster sizes largest first, n_features)``
  of every registered file, for :func:`fedlib.data.load_or_standin`. Celltype and
  Covtype take MUFC's published cluster sizes; MNIST's test set its published class
  counts (LeCun et al. 1998); the LEAF FEMNIST sample and the partial Postures file
  the size and dimension of the registered files, spread evenly over their classes;
  Fashion-MNIST its balanced classes (Xiao et al. 2017).
- :data:`PURCHASE100`: Purchase-100 (Shokri et al., IEEE S&P 2017), one of KNOT's four
  tasks (Su & Li, INFOCOM 2023), which has no file the book can load.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DatasetSpec:
    """A dataset as a paper describes it: size, dimension, clusters, clients and cluster sizes.

    Parameters
    ----------
    name : str
        The paper's name for it.
    n_samples : int
        Points.
    n_features : int
        Dimension.
    n_clusters : int
        K used by the paper.
    n_clients : int or None
        L used by the paper, if any.
    cluster_sizes : tuple of int or None
        Published cluster sizes, largest first (``None``: not published).
    where : str
        Where in the paper the numbers are stated.
    note : str, default=""
        What the paper leaves ambiguous, if anything.

    Examples
    --------
    >>> from fedlib.data import DatasetSpec
    >>> DatasetSpec("toy", 10, 2, 2, None, (6, 4), "nowhere").cluster_sizes
    (6, 4)
    """

    name: str
    n_samples: int
    n_features: int
    n_clusters: int
    n_clients: int | None
    cluster_sizes: tuple[int, ...] | None
    where: str
    note: str = ""


#: App. M.1, the table of datasets. Cluster sizes are K-means clusters, not labels (footnote 3);
#: L is 10 clients for the small TMI and TCGA, 100 otherwise.
DATASET_SPECS: dict[str, DatasetSpec] = {
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

#: App. M.1, the Gaussian data: 10 clusters of 3000 points in d = 10, centres uniform in [0, 1]^d, variance 0.5.
MUFC_GAUSSIAN = {"n_clusters": 10, "n_per_cluster": 3000, "n_features": 10, "variance": 0.5}


#: name in :func:`fedlib.data.load` -> (display name, cluster sizes, n_features).
STANDIN_SHAPES: dict[str, tuple[str, tuple[int, ...], int]] = {
    "celltype": ("Celltype", DATASET_SPECS["Celltype"].cluster_sizes, DATASET_SPECS["Celltype"].n_features),
    "covtype": ("Covtype", DATASET_SPECS["Covtype"].cluster_sizes, DATASET_SPECS["Covtype"].n_features),
    "mnist_test": ("MNIST test", (980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009), 784),
    "femnist_sample": ("FEMNIST (LEAF sample)", (264,) * 61 + (289,), 784),
    "postures_partial": ("Postures (partial)", (3359, 3359, 3359), 15),
    "fashion_mnist": ("Fashion-MNIST train", (6000,) * 10, 784),
    "fashion_mnist_test": ("Fashion-MNIST test", (1000,) * 10, 784),
}

#: Purchase-100 as Shokri et al. (IEEE S&P 2017, Sec. V-A) describe it: purchase histories of Kaggle's "Acquire
#: Valued Shoppers" challenge, 197,324 records of 600 binary features (bought a product or not), clustered into
#: 100 classes. The class sizes are not published.
PURCHASE100: dict[str, int] = {"n_samples": 197_324, "n_features": 600, "n_classes": 100}
