"""Shapes of the public datasets the book loads, for labelled stand-ins when a file cannot be had.

A stand-in keeps the shape of the data it replaces: ``(display name, cluster
sizes largest first, n_features)``. Celltype and Covtype take MUFC's published
K-means cluster sizes (App. M.1); MNIST's test set its published class counts
(LeCun et al. 1998); the LEAF FEMNIST sample and the partial Postures file the
size and dimension of the registered files, spread evenly over their classes;
Fashion-MNIST its balanced classes (Xiao et al. 2017).

Purchase-100 (Shokri et al., IEEE S&P 2017), one of KNOT's four tasks (Su & Li,
INFOCOM 2023), has no file the book can load; :data:`PURCHASE100` holds its
published shape for :func:`fedlib.data.make_purchase_like`.
"""

from __future__ import annotations

from fedlib.papers.mufc import DATASET_SPECS

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
