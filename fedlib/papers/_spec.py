"""The shape of a dataset as a paper or its source publishes it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DatasetSpec:
    """A dataset as a paper describes it: size, dimension, clusters, clients and cluster sizes.

    Examples
    --------
    >>> DatasetSpec("toy", 10, 2, 2, None, (6, 4), "nowhere").cluster_sizes
    (6, 4)
    """

    name: str
    n_samples: int
    n_features: int
    n_clusters: int
    n_clients: int | None  #: L used by the paper, if any
    cluster_sizes: tuple[int, ...] | None  #: published sizes, largest first (None: not published)
    where: str  #: where in the paper the numbers are stated
    note: str = ""
