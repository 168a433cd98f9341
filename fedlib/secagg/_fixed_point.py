"""Fixed-point encoding of float vectors into the ring ``Z_{2^32}`` of secure aggregation.

SecAgg sums vectors of ``Z_R`` (Bonawitz et al., CCS'17, Sec. 4); model
updates are floats. Each is clipped to ``[-B, B]``, scaled by ``2^f``, rounded
and stored in two's complement as ``uint32``, so that numpy's wrap-around
addition is the ring's. The sum of ``n`` encodings decodes exactly to the sum
of the rounded values as long as ``n·B·2^f < 2^31``; beyond that the sum
wraps silently, so the encoder refuses such settings.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fedlib._validation import check_scalar
from fedlib.exceptions import RingOverflowError

RING_BITS = 32
"""SecAgg's ring is ``Z_{2^32}``: vectors are numpy ``uint32`` arrays."""


@dataclass(frozen=True)
class FixedPoint:
    """Clip, scale and round floats into ``Z_{2^32}``; decode sums of up to ``max_summands`` of them.

    Parameters
    ----------
    clip : float
        ``B``: inputs are clipped to ``[-B, B]`` before encoding.
    frac_bits : int
        ``f``: the resolution is ``2^-f``.
    max_summands : int
        ``n``: the largest number of encodings that will be added up.

    Attributes
    ----------
    scale : float
        ``2^f``.

    Raises
    ------
    RingOverflowError
        If ``n·B·2^f >= 2^31``: a sum could leave the signed range of ``Z_{2^32}``.

    Examples
    --------
    >>> fp = FixedPoint(clip=8.0, frac_bits=16, max_summands=3)
    >>> words = fp.encode([[0.5, -1.25], [2.0, 3.0], [-0.25, 0.0]])
    >>> fp.decode_sum(words.sum(axis=0, dtype=np.uint32)).tolist()
    [2.25, 1.75]
    """

    clip: float
    frac_bits: int
    max_summands: int

    def __post_init__(self) -> None:
        clip = check_scalar(self.clip, "clip (B)", "real", min_val=0.0, include_min=False)
        f = check_scalar(self.frac_bits, "frac_bits (f)", "int", min_val=0, max_val=RING_BITS - 1)
        n = check_scalar(self.max_summands, "max_summands (n)", "int", min_val=1)
        bound = n * clip * 2.0**f
        if bound >= 2.0 ** (RING_BITS - 1):
            raise RingOverflowError(
                f"n·B·2^f = {n}·{clip}·2^{f} = {bound:.4g} >= 2^31: a sum of {n} encodings could wrap around "
                f"Z_2^32. Lower the clip B, the fractional bits f, or the number of users n."
            )
        object.__setattr__(self, "clip", float(clip))
        object.__setattr__(self, "frac_bits", f)
        object.__setattr__(self, "max_summands", n)

    @property
    def scale(self) -> float:
        """``2^f``."""
        return float(2**self.frac_bits)

    @classmethod
    def for_summands(cls, max_summands: int, clip: float) -> FixedPoint:
        """The finest encoding that keeps a sum of ``max_summands`` clipped values inside ``Z_{2^32}``.

        Parameters
        ----------
        max_summands : int
            ``n``.
        clip : float
            ``B``.

        Returns
        -------
        FixedPoint
            With the largest ``f`` such that ``n·B·2^f < 2^31``.

        Raises
        ------
        RingOverflowError
            If even ``f = 0`` overflows.
        """
        n = check_scalar(max_summands, "max_summands (n)", "int", min_val=1)
        clip = check_scalar(clip, "clip (B)", "real", min_val=0.0, include_min=False)
        f = int(np.floor(np.log2(2.0 ** (RING_BITS - 1) / (n * clip))))
        while f >= 0 and n * clip * 2.0**f >= 2.0 ** (RING_BITS - 1):
            f -= 1
        return cls(clip=float(clip), frac_bits=max(f, 0), max_summands=n)

    def encode(self, x) -> np.ndarray:
        """``round(clip(x, -B, B)·2^f) mod 2^32`` as ``uint32``.

        Parameters
        ----------
        x : array-like of float
            Values, any shape. A float32 array is encoded in float32 (exact:
            the scale is a power of two), clipped at ``float32(B)``.

        Returns
        -------
        ndarray of uint32
            Same shape.

        Raises
        ------
        ValueError
            If ``x`` holds NaN or infinities.
        """
        x = np.asarray(x)
        # float32 stays float32: scaling by 2^f and rounding are exact in it (the bound is then float32(B)).
        x = x if x.dtype == np.float32 else x.astype(np.float64)
        if not np.all(np.isfinite(x)):
            raise ValueError("cannot encode NaN or infinite values into Z_2^32.")
        scaled = np.clip(x, x.dtype.type(-self.clip), x.dtype.type(self.clip))
        scaled *= self.scale
        np.rint(scaled, out=scaled)
        # |scaled| <= B·2^f < 2^31: int32 holds it, and its bits are the two's complement in Z_2^32.
        return scaled.astype(np.int32).view(np.uint32)

    def decode_sum(self, total) -> np.ndarray:
        """The float sum of the rounded inputs whose encodings add up to ``total`` in ``Z_{2^32}``.

        Parameters
        ----------
        total : array-like of uint32
            A sum of at most ``max_summands`` encodings.

        Returns
        -------
        ndarray of float64
            ``signed(total) / 2^f``.
        """
        return np.asarray(total, dtype=np.uint32).view(np.int32).astype(np.float64) / self.scale
