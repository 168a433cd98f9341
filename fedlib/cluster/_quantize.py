"""Uniform quantization grid of step gamma (MUFC Alg. 1 step 2, App. H) and its 1-based bin indices."""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

import numpy as np

from fedlib._typing import NDArrayFloat, NDArrayInt
from fedlib._validation import check_array


@dataclass(frozen=True)
class UniformGrid:
    """Bins of side ``gamma`` centred on the integer multiples of ``gamma`` (MUFC App. H).

    A coordinate ``y`` falls in the bin of ``gamma * round(y / gamma)``. The grid
    covers the data range: along dimension ``t`` the integer bin coordinates run
    over ``offset[t] .. offset[t] + shape[t] - 1``. Bins are numbered ``1..B^d``
    in mixed radix (first dimension fastest), so that no index is 0, as SCMA
    requires (MUFC guide, Sec. 4.3, item 1).
    """

    gamma: float
    offset: NDArrayInt  #: (d,) integer coordinate of the first bin along each dimension
    shape: tuple[int, ...]  #: (B_1, ..., B_d) bins along each dimension

    @classmethod
    def from_data(cls, X, gamma: float) -> UniformGrid:
        """The smallest grid of step ``gamma`` that contains every row of ``X``."""
        X = check_array(X)
        if not gamma > 0 or not np.isfinite(gamma):
            raise ValueError(f"gamma={gamma} should be a positive finite number.")
        cells = np.rint(X / gamma).astype(np.int64)
        lo, hi = cells.min(axis=0), cells.max(axis=0)
        return cls(float(gamma), lo, tuple(int(b) for b in hi - lo + 1))

    @property
    def n_bins(self) -> int:
        """B^d, the number of bins (a Python int: it can have thousands of digits)."""
        return prod(self.shape)

    @property
    def n_features(self) -> int:
        return len(self.shape)

    def cells(self, X) -> NDArrayInt:
        """Integer bin coordinates (0-based per dimension) of each row; raises outside the grid."""
        X = check_array(X)
        if X.shape[1] != self.n_features:
            raise ValueError(f"X has n_features={X.shape[1]}, the grid has {self.n_features}.")
        cells = np.rint(X / self.gamma).astype(np.int64) - self.offset
        outside = (cells < 0) | (cells >= np.asarray(self.shape))
        if outside.any():
            row = int(np.flatnonzero(outside.any(axis=1))[0])
            raise ValueError(f"row {row} lies outside the quantization grid built from the data range.")
        return cells

    def flat_index(self, cells) -> list[int]:
        """1-based bin index ``j = 1 + sum_t a_t prod_{s<t} B_s`` of each row of cell coordinates."""
        cells = np.asarray(cells, dtype=np.int64)
        radix = [1]
        for b in self.shape[:-1]:
            radix.append(radix[-1] * b)
        # Python ints: B^d overflows int64 as soon as d log2 B > 63
        return [1 + sum(int(a) * r for a, r in zip(row, radix, strict=True)) for row in cells.tolist()]

    def cells_of(self, indices) -> NDArrayInt:
        """Inverse of :meth:`flat_index`."""
        out = np.empty((len(indices), self.n_features), dtype=np.int64)
        for i, j in enumerate(indices):
            rest = int(j) - 1
            if not 0 <= rest < self.n_bins:
                raise ValueError(f"bin index {j} outside [1, B^d={self.n_bins}].")
            for t, b in enumerate(self.shape):
                rest, out[i, t] = divmod(rest, b)
        return out

    def centers(self, cells) -> NDArrayFloat:
        """Coordinates of the bin centres of the given cells."""
        return (np.asarray(cells, dtype=np.int64) + self.offset) * self.gamma

    def quantize(self, X) -> NDArrayFloat:
        """Each row replaced by the centre of its bin; error at most gamma/2 per coordinate."""
        return self.centers(self.cells(X))

    def sample_uniform(self, cells, rng: np.random.Generator) -> NDArrayFloat:
        """One point uniform in each given bin (MUFC's default server data, App. H)."""
        centers = self.centers(cells)
        return centers + rng.uniform(-self.gamma / 2, self.gamma / 2, size=centers.shape)
