"""Fixed-point encoding of float vectors into the ring ``Z_{2^32}`` of secure aggregation.

SecAgg sums vectors of ``Z_R`` (Bonawitz et al., CCS'17, Sec. 4); model
updates are floats. Each is clipped to ``[-B, B]``, scaled by ``2^f``, rounded
and stored in two's complement as ``uint32``, so that numpy's wrap-around
addition is the ring's. The sum of ``n`` encodings decodes exactly to the sum
of the rounded values as long as ``n·B·2^f < 2^31``; beyond that the sum
wraps silently, so the encoder refuses such settings.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from fedlib._validation import check_scalar
from fedlib.exceptions import RingOverflowError

RING_BITS = 32
"""SecAgg's ring is ``Z_{2^32}``: vectors are numpy ``uint32`` arrays."""

_SIGNED_MAX = 2 ** (RING_BITS - 1) - 1
"""The largest sum that decodes correctly: ``2^31 - 1``."""


def _largest_word(clip: float, frac_bits: int) -> int:
    """``max |encode(x)|``: ``rint(B·2^f)``, or ``rint(float32(B)·2^f)`` where float32 inputs clip at ``float32(B)``."""
    scale = 2.0**frac_bits
    return int(max(np.rint(clip * scale), np.rint(float(np.float32(clip)) * scale)))


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
        If ``n·B·2^f >= 2^31`` or, after rounding, ``n·rint(B·2^f) > 2^31 − 1``
        (``B`` read as float32 too, as float32 inputs are clipped at
        ``float32(B)``): a sum could leave the signed range of ``Z_{2^32}``.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.secagg import FixedPoint
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
                f"Z_2^32. Lower the clip B, the fractional bits f, or the number of clients n."
            )
        word = _largest_word(clip, f)
        if n * word > _SIGNED_MAX:
            raise RingOverflowError(
                f"n·rint(B·2^f) = {n}·{word} = {n * word} > 2^31 - 1 = {_SIGNED_MAX} (clip B={clip!r}, "
                f"frac_bits f={f}, max_summands n={n}): after rounding, a sum of {n} clipped encodings would wrap "
                "around Z_2^32. Lower the clip B, the fractional bits f, or the number of clients n."
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
            With the largest ``f <= 31`` such that ``n·B·2^f < 2^31`` and, after
            rounding, ``n·rint(B·2^f) <= 2^31 − 1`` (the bounds
            :class:`FixedPoint` checks).

        Raises
        ------
        RingOverflowError
            If no ``f >= 0`` satisfies them (``n·B`` is too large for the ring).

        Examples
        --------
        >>> from fedlib.secagg import FixedPoint
        >>> FixedPoint.for_summands(10, 0.01).frac_bits  # capped at 31: finer bits do not exist in Z_2^32
        31
        """
        n = check_scalar(max_summands, "max_summands (n)", "int", min_val=1)
        clip = float(check_scalar(clip, "clip (B)", "real", min_val=0.0, include_min=False))
        if n * clip >= 2.0 ** (RING_BITS - 1):
            raise RingOverflowError(
                f"no frac_bits f >= 0 keeps a sum of max_summands n={n} values clipped to clip B={clip!r} inside "
                f"Z_2^32: n·B = {n * clip:.4g} must be below 2^31. Lower the clip B or the number of clients n."
            )
        # math.log2 of each factor: n·B may underflow to a subnormal; the cap keeps f within the ring's 31 bits
        f = min(math.floor(RING_BITS - 1 - math.log2(n) - math.log2(clip)), RING_BITS - 1)
        while f >= 0 and (n * clip * 2.0**f >= 2.0 ** (RING_BITS - 1) or n * _largest_word(clip, f) > _SIGNED_MAX):
            f -= 1
        if f < 0:
            raise RingOverflowError(
                f"no frac_bits f >= 0 keeps a sum of max_summands n={n} values clipped to clip B={clip!r} inside "
                f"Z_2^32: after rounding, n·rint(B) = {n * _largest_word(clip, 0)} (B also read as float32, where "
                f"float32 inputs are clipped) must be at most 2^31 - 1 = {_SIGNED_MAX}. Lower the clip B or the "
                "number of clients n."
            )
        return cls(clip=clip, frac_bits=f, max_summands=n)

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
