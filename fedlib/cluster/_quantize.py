"""Uniform quantization grid of step gamma (MUFC Alg. 1 line 3, App. H) and its 1-based bin indices."""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

import numpy as np

from fedlib._random import check_random_state
from fedlib._typing import NDArrayFloat, NDArrayInt, SeedLike
from fedlib._validation import check_array

#: Largest bin coordinate |x/γ| accepted: differences of two coordinates, and a grid's B_t, then fit in int64.
_MAX_BIN_COORDINATE = 2.0**61


@dataclass(frozen=True, eq=False)
class UniformGrid:
    """Bins of side ``gamma`` centred on the integer multiples of ``gamma`` (MUFC App. H).

    A coordinate ``y`` falls in the bin of ``gamma * round(y / gamma)``. The grid
    covers the data range: along dimension ``t`` the integer bin coordinates run
    over ``offset[t] .. offset[t] + shape[t] - 1``. Bins are numbered ``1..B^d``
    in mixed radix (first dimension fastest), so that no index is 0: SCMA
    (MUFC Alg. 2) uses the bin indices ``j`` as evaluation points of the power
    sums ``Σ_j q_j j^(i-1)`` and finds them as the inverses of the roots of
    ``Π_j (1 − j x)``, which cannot locate ``j = 0``.

    Parameters
    ----------
    gamma : float
        The quantization step γ, > 0.
    offset : ndarray of int64, shape (d,)
        Integer coordinate of the first bin along each dimension.
    shape : tuple of int
        ``(B_1, ..., B_d)``, the number of bins along each dimension.

    See Also
    --------
    UniformGrid.from_data : The smallest grid that contains given points.

    Notes
    -----
    MUFC's experiments take γ = 1/√n (:class:`fedlib.unlearn.MUFC`). The grid
    spans the data range rather than the unit hypercube of App. H, so that
    ``B_t <= 2 + (max_t − min_t)/γ`` and no bin lies beyond the data.
    Used in :doc:`/notebooks/mufc/training`.

    Examples
    --------
    >>> from fedlib.cluster import UniformGrid
    >>> grid = UniformGrid.from_data([[0.0, 0.0], [1.0, 0.5]], 0.5)
    >>> grid.shape, grid.n_bins
    ((3, 2), 6)
    >>> cells = grid.cells([[0.9, 0.3]])
    >>> cells.tolist(), grid.flat_index(cells), grid.snap_to_centers([[0.9, 0.3]]).tolist()
    ([[2, 1]], [6], [[1.0, 0.5]])
    >>> grid.cells_of([6]).tolist()
    [[2, 1]]
    """

    gamma: float
    offset: NDArrayInt
    shape: tuple[int, ...]

    @classmethod
    def from_data(cls, X, gamma: float) -> UniformGrid:
        """The smallest grid of step ``gamma`` that contains every row of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The points, e.g. all data (MUFC scales the data before quantizing).
        gamma : float
            The quantization step γ, positive and finite.

        Returns
        -------
        UniformGrid
            A grid whose bins cover ``[min_t, max_t]`` along every dimension ``t``.

        Raises
        ------
        TypeError
            If ``X`` is complex.
        ValueError
            If ``gamma`` is not a positive finite number, or if some ``|x|/γ``
            reaches 2**61, beyond the int64 bin coordinates.
        """
        X = check_array(X)
        if not gamma > 0 or not np.isfinite(gamma):
            raise ValueError(f"gamma={gamma} should be a positive finite number.")
        cells = _bin_coordinates(X, gamma)
        lo, hi = cells.min(axis=0), cells.max(axis=0)
        return cls(float(gamma), lo, tuple(int(b) for b in hi - lo + 1))

    @property
    def n_bins(self) -> int:
        """B^d, the number of bins (a Python int: it can have thousands of digits)."""
        return prod(self.shape)

    @property
    def n_features(self) -> int:
        """Dimension d of the grid."""
        return len(self.shape)

    def cells(self, X) -> NDArrayInt:
        """Integer bin coordinates (0-based per dimension) of each row.

        Parameters
        ----------
        X : array-like of shape (n_samples, d)
            Points inside the grid.

        Returns
        -------
        ndarray of int64, shape (n_samples, d)
            Coordinates ``a_t`` in ``0..B_t-1``.

        Raises
        ------
        ValueError
            If ``X`` has the wrong dimension, if some ``|x|/γ`` reaches 2**61
            (beyond the int64 bin coordinates), or if a row lies outside the grid.
        """
        X = check_array(X)
        if X.shape[1] != self.n_features:
            raise ValueError(f"X has n_features={X.shape[1]}, the grid has {self.n_features}.")
        cells = _bin_coordinates(X, self.gamma) - self.offset
        outside = (cells < 0) | (cells >= np.asarray(self.shape))
        if outside.any():
            row = int(np.flatnonzero(outside.any(axis=1))[0])
            raise ValueError(f"row {row} lies outside the quantization grid built from the data range.")
        return cells

    def flat_index(self, cells) -> list[int]:
        """1-based bin index ``j = 1 + Σ_t a_t Π_{s<t} B_s`` of each row of cell coordinates.

        Parameters
        ----------
        cells : array-like of int of shape (n_cells, d)
            Cell coordinates, as :meth:`cells` returns them.

        Returns
        -------
        list of int
            One index in ``1..B^d`` per row, as Python ints (``B^d`` can pass 2**63).
        """
        cells = np.asarray(cells, dtype=np.int64)
        radix = [1]
        for b in self.shape[:-1]:
            radix.append(radix[-1] * b)
        # Python ints: B^d overflows int64 as soon as d log2 B > 63
        return [1 + sum(int(a) * r for a, r in zip(row, radix, strict=True)) for row in cells.tolist()]

    def cells_of(self, indices) -> NDArrayInt:
        """Cell coordinates of 1-based bin indices: the inverse of :meth:`flat_index`.

        Parameters
        ----------
        indices : sequence of int
            Bin indices in ``1..B^d``.

        Returns
        -------
        ndarray of int64, shape (len(indices), d)
            The cell coordinates of each index.

        Raises
        ------
        ValueError
            If an index lies outside ``[1, B^d]``.
        """
        out = np.empty((len(indices), self.n_features), dtype=np.int64)
        for i, j in enumerate(indices):
            rest = int(j) - 1
            if not 0 <= rest < self.n_bins:
                raise ValueError(f"bin index {j} outside [1, B^d={self.n_bins}].")
            for t, b in enumerate(self.shape):
                rest, out[i, t] = divmod(rest, b)
        return out

    def centers(self, cells) -> NDArrayFloat:
        """Coordinates of the bin centres of the given cells.

        Parameters
        ----------
        cells : array-like of int of shape (n_cells, d)
            Cell coordinates.

        Returns
        -------
        ndarray of shape (n_cells, d)
            ``(cells + offset) * gamma``.
        """
        return (np.asarray(cells, dtype=np.int64) + self.offset) * self.gamma

    def snap_to_centers(self, X) -> NDArrayFloat:
        """Each row replaced by the centre of its bin; error at most gamma/2 per coordinate.

        MUFC's quantizer (App. H): real points in, real points out, rounded to
        the nearest multiple of ``γ``. Not :func:`fedlib.field.to_fixed_point`,
        which rounds ``λx`` down and returns the integers themselves.

        Parameters
        ----------
        X : array-like of shape (n_samples, d)
            Points inside the grid.

        Returns
        -------
        ndarray of shape (n_samples, d)
            The bin centre of each row (MUFC App. H: ``γ a(y)``).
        """
        return self.centers(self.cells(X))

    def sample_uniform(self, cells, random_state: SeedLike = None) -> NDArrayFloat:
        """One point uniform in each given bin (MUFC's default server data, App. H).

        Parameters
        ----------
        cells : array-like of int of shape (n_cells, d)
            Cell coordinates, one row per point to draw.
        random_state : int, numpy.random.Generator, numpy.random.SeedSequence or None, default=None
            The draw; a Generator is used as is, so the caller's stream advances.

        Returns
        -------
        ndarray of shape (n_cells, d)
            A uniform point in each bin.
        """
        centers = self.centers(cells)
        return centers + check_random_state(random_state).uniform(-self.gamma / 2, self.gamma / 2, size=centers.shape)


def _bin_coordinates(X: NDArrayFloat, gamma: float) -> NDArrayInt:
    """``rint(X / γ)`` as int64, refusing coordinates that do not fit (a tiny γ or a huge |x|)."""
    with np.errstate(over="ignore"):
        scaled = X / gamma
    top = float(np.max(np.abs(scaled))) if scaled.size else 0.0
    if not top < _MAX_BIN_COORDINATE:
        raise ValueError(
            f"x/γ overflows int64: the largest |x| = {float(np.max(np.abs(X))):.3g} with gamma={gamma:g} gives bin "
            f"coordinate {top:.3g} >= 2**61. Use a larger quantization step gamma or rescale the data."
        )
    return np.rint(scaled).astype(np.int64)
