"""The container every loader and generator returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Dataset:
    """Arrays of one dataset plus where they came from.

    Parameters
    ----------
    name : str
        Display name; stand-ins end in "(stand-in)".
    X : ndarray of shape (n_samples, n_features)
        Features as float64.
    y : ndarray of shape (n_samples,)
        Labels (for text: the next character's code).
    n_clusters : int
        K the papers use for this dataset.
    source : str
        Provenance: file and origin, or the generator and its parameters.
    is_standin : bool, default=False
        True when the arrays are synthetic stand-ins for data that could not be had.
    extras : dict, default={}
        Dataset-specific arrays (images, FEMNIST's writer ids ``user_index``, the authors' client split, ...).

    Attributes
    ----------
    n_samples : int
        Rows of ``X``.
    n_features : int
        Columns of ``X``.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.data import Dataset
    >>> ds = Dataset("toy", np.zeros((3, 2)), np.array([0, 0, 1]), 2, "hand-made")
    >>> ds
    Dataset('toy', n_samples=3, n_features=2, n_clusters=2, real)
    """

    name: str
    X: np.ndarray
    y: np.ndarray
    n_clusters: int
    source: str
    is_standin: bool = False
    extras: dict[str, Any] = field(default_factory=dict)

    @property
    def n_samples(self) -> int:
        """Number of rows of ``X``."""
        return int(self.X.shape[0])

    @property
    def n_features(self) -> int:
        """Number of columns of ``X``."""
        return int(self.X.shape[1])

    def __repr__(self) -> str:
        kind = "stand-in" if self.is_standin else "real"
        return (
            f"Dataset({self.name!r}, n_samples={self.n_samples}, n_features={self.n_features}, "
            f"n_clusters={self.n_clusters}, {kind})"
        )
