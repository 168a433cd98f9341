"""Real data into GF(q) and back, with the bounds that keep SecFC's decoded distances exact (SecFC App. A).

SecFC maps each coordinate to ``floor(λx) mod q`` (App. A, Eq. (3)): negative
numbers land in the upper half of the field. The protocol's arithmetic is exact
modulo ``q``; the only way it can go wrong is a *true* integer result of
``q/2`` or more, which the server cannot tell from a smaller or a negative
one. The decoded quantity is ``d'_{i,h} = ||Σ_{i'∈S_h} x̄_{i'} − |S_h| x̄_i||²``
(the paper's ``||μ_h − |S_h| x_i||²`` is a typo), and since it is an average of
differences, ``d' ≤ |S_h|² diam(X̄)² ≤ m² (2λR + √d)²`` for data of Euclidean
norm at most ``R``. :func:`check_scale` refuses a ``λ`` that breaks
``m² (2λR + √d)² < q/2``; :func:`check_decoded` catches an overflow after the
fact (an overflowed value is a random residue, above ``q/2`` half of the time).
"""

from __future__ import annotations

import math

import numpy as np

from fedlib._typing import NDArrayInt
from fedlib.field._int64 import signed


class FieldOverflowError(ValueError):
    """A computation over GF(q) would leave (or has left) the range where residues equal integers."""


def quantize(X, scale: float) -> NDArrayInt:
    """``floor(λ x)`` as int64: the integers SecFC computes with (App. A, before reduction mod ``q``)."""
    if not scale > 0:
        raise ValueError(f"scale (λ) = {scale} should be > 0.")
    Y = np.floor(np.asarray(X, dtype=np.float64) * float(scale))
    if Y.size and float(np.max(np.abs(Y))) >= 2.0**52:
        raise FieldOverflowError(f"λ·x reaches {float(np.max(np.abs(Y))):.3g} >= 2**52 (scale λ={scale}).")
    return Y.astype(np.int64)


def to_field(X_int, q: int) -> NDArrayInt:
    """Integers as residues of GF(q): ``v mod q`` (negative ``v`` become ``q + v``; SecFC Eq. (3))."""
    X_int = np.asarray(X_int, dtype=np.int64)
    if X_int.size and int(np.max(np.abs(X_int))) >= q // 2:
        raise FieldOverflowError(
            f"|x̄| reaches {int(np.max(np.abs(X_int)))} >= q/2 = {q // 2}: the residue would not decode to x̄."
        )
    return np.mod(X_int, q)


def distance_bound(n_samples: int, n_features: int, radius: float, scale: float) -> float:
    """Public upper bound ``m² (2λR + √d)²`` on every decoded ``d'_{i,h}``, from ``||x|| ≤ R``."""
    return float(n_samples) ** 2 * (2.0 * scale * radius + math.sqrt(n_features)) ** 2


def max_safe_scale(n_samples: int, n_features: int, radius: float, q: int) -> float:
    """Largest ``λ`` with ``m² (2λR + √d)² < (q-1)/2``, rounded down to 3 significant digits.

    Below this scale no decoded distance can overflow.

    Raises :class:`FieldOverflowError` if even ``λ → 0`` is unsafe (the ``√d``
    rounding term alone is too large: ``m² d ≥ q/2``).
    """
    room = math.sqrt((q - 1) / 2) / n_samples - math.sqrt(n_features)
    if room <= 0:
        raise FieldOverflowError(
            f"m² d = {n_samples}² · {n_features} >= (q-1)/2 = {(q - 1) // 2}: no scale λ is safe in GF({q}); "
            "use a larger prime."
        )
    if radius <= 0:
        return math.inf
    exact = room / (2.0 * radius)
    step = 10.0 ** (math.floor(math.log10(exact)) - 2)
    return math.floor(exact / step * (1 - 1e-12)) * step


def check_scale(scale: float, n_samples: int, n_features: int, radius: float, q: int) -> float:
    """Return ``scale`` if ``m² (2λR + √d)² < q/2``, else raise :class:`FieldOverflowError` naming the bound.

    SecFC App. A asks for ``q ≥ 2λ²D`` with ``D`` the largest decoded distance,
    which depends on the clustering; this is the same requirement with ``D``
    replaced by a bound every party can compute before the protocol starts.
    """
    if not scale > 0:
        raise ValueError(f"scale (λ) = {scale} should be > 0.")
    bound = distance_bound(n_samples, n_features, radius, scale)
    if not bound < (q - 1) / 2:
        raise FieldOverflowError(
            f"scale λ={scale} can overflow GF({q}): decoded distances d' are bounded only by "
            f"m²(2λR+√d)² = {n_samples}²·(2·{scale}·{radius:.4g}+√{n_features})² = {bound:.4g}, which is not below "
            f"q/2 = {q // 2} (SecFC App. A). The largest safe λ is "
            f"{max_safe_scale(n_samples, n_features, radius, q):.4g}."
        )
    return float(scale)


def check_decoded(values, q: int) -> NDArrayInt:
    """Signed lift of decoded non-negative results; raise if any lies above ``q/2`` (overflow detector).

    A true value in ``[0, q/2)`` decodes to itself; a value that overflowed the
    field decodes to a residue that looks uniformly random, so the check fires
    with probability about 1/2 per overflowed entry.
    """
    v = signed(values, q)
    bad = v < 0
    if np.any(bad):
        raise FieldOverflowError(
            f"{int(bad.sum())} decoded values lie above q/2 = {q // 2}: the true integers overflowed GF({q}). "
            "Lower the scale λ or use a larger prime (SecFC App. A)."
        )
    return v
