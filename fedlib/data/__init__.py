"""Datasets of the book: hash-checked real files, generators, labelled stand-ins, client partitions.

- :func:`load` and :func:`load_or_standin` read the registered real datasets
  (``fedlib/data/registry.csv``: :func:`registry`, :func:`fetch`, with
  :class:`~fedlib.exceptions.DataUnavailableError` and :class:`~fedlib.exceptions.ChecksumError`) or generate the
  synthetic ones; every loader returns a :class:`Dataset`.
- Generators: :func:`make_blobs` (the one Gaussian-mixture generator),
  MUFC's Gaussian data (:func:`make_mufc_gaussian`), SecFC's mixture
  (:func:`make_gaussian_mixture`) and rotated digits (:func:`rotated_digit`),
  stand-ins with a paper's published shape (:func:`make_standin`), and a
  Purchase-100 stand-in of noisy binary prototypes (:func:`make_purchase_like`).
- Text: next-character examples from a stream of character codes, windows of
  the previous ``context`` codes (:func:`text_windows`; tiny-shakespeare's
  codes are ``load("tinyshakespeare").extras["codes"]``).
- Client partitions: iid (:func:`iid_partition`), MUFC's non-iid split
  (:func:`non_iid_partition`), SecFC's k' split (:func:`k_prime_partition`),
  the per-class Dirichlet split (:func:`dirichlet_partition`), natural groups
  (:func:`partition_by_group`; a random sample of them with a test set:
  :func:`split_by_group`), and their cluster counts
  (:func:`client_cluster_counts`).
- Helpers: MUFC's global scaling (:func:`scale_max_abs`), uniform subsamples
  for small runs (:func:`subsample_indices`), the dataset names (:func:`available`),
  a reproducible (stratified) train/test split of a dataset (:func:`split_dataset`)
  and its images as a float32 (n, 1, side, side) array for torch (:func:`image_array`).
- Fashion-MNIST (``load("fashion_mnist")``, ``load("fashion_mnist_test")``, class
  names :data:`FASHION_MNIST_CLASSES`): from the mirror, the cache, or Debian's
  ``dataset-fashion-mnist`` package, hash-checked alike.

- Published shapes: MUFC's table of datasets (:data:`DATASET_SPECS` of :class:`DatasetSpec`) and
  Gaussian data (:data:`MUFC_GAUSSIAN`), the stand-ins' shapes (:data:`STANDIN_SHAPES`) and
  Purchase-100's (:data:`PURCHASE100`).

It imports nothing from the rest of fedlib but its input checks and progress bars.
"""

from fedlib.data._dataset import Dataset
from fedlib.data._loaders import (
    FASHION_MNIST_CLASSES,
    available,
    image_array,
    load,
    load_or_standin,
    split_dataset,
)
from fedlib.data._mixtures import make_gaussian_mixture, rotated_digit
from fedlib.data._partition import (
    client_cluster_counts,
    dirichlet_partition,
    iid_partition,
    k_prime_partition,
    non_iid_partition,
    partition_by_group,
    split_by_group,
    subsample_indices,
)
from fedlib.data._registry import fetch, registry
from fedlib.data._shapes import DATASET_SPECS, MUFC_GAUSSIAN, PURCHASE100, STANDIN_SHAPES, DatasetSpec
from fedlib.data._synthetic import make_blobs, make_mufc_gaussian, make_purchase_like, make_standin, scale_max_abs
from fedlib.data._text import text_windows

__all__ = [
    "DATASET_SPECS",
    "FASHION_MNIST_CLASSES",
    "MUFC_GAUSSIAN",
    "PURCHASE100",
    "STANDIN_SHAPES",
    "Dataset",
    "DatasetSpec",
    "available",
    "client_cluster_counts",
    "dirichlet_partition",
    "fetch",
    "iid_partition",
    "image_array",
    "k_prime_partition",
    "load",
    "load_or_standin",
    "make_blobs",
    "make_gaussian_mixture",
    "make_mufc_gaussian",
    "make_purchase_like",
    "make_standin",
    "non_iid_partition",
    "partition_by_group",
    "registry",
    "rotated_digit",
    "scale_max_abs",
    "split_by_group",
    "split_dataset",
    "subsample_indices",
    "text_windows",
]
