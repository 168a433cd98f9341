"""Datasets of the book: hash-checked real files, generators, labelled stand-ins, client partitions."""

from fedlib.data._dataset import Dataset
from fedlib.data._loaders import available, load, load_or_standin
from fedlib.data._mixtures import make_gaussian_mixture, rotated_digit
from fedlib.data._partition import (
    client_cluster_counts,
    iid_partition,
    k_prime_partition,
    non_iid_partition,
    partition_by_group,
    subsample_indices,
)
from fedlib.data._registry import ChecksumError, DataUnavailableError, fetch, registry
from fedlib.data._synthetic import make_blobs, make_mufc_gaussian, make_standin, scale_max_abs

__all__ = [
    "ChecksumError",
    "DataUnavailableError",
    "Dataset",
    "available",
    "client_cluster_counts",
    "fetch",
    "iid_partition",
    "k_prime_partition",
    "load",
    "load_or_standin",
    "make_blobs",
    "make_gaussian_mixture",
    "make_mufc_gaussian",
    "make_standin",
    "non_iid_partition",
    "partition_by_group",
    "registry",
    "rotated_digit",
    "scale_max_abs",
    "subsample_indices",
]
