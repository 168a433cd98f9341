"""Real data into GF(q) and back: fixed-point quantization, signed residues, and an overflow detector.

Secure protocols compute on integers modulo ``q``. Real data enters as
``floor(λx) mod q`` (SecFC App. A, Eq. (3)): negative numbers land in the upper
half of the field. Arithmetic modulo ``q`` is exact; the only way it can go
wrong is a *true* integer result of ``q/2`` or more, which cannot be told from
a smaller or a negative one. :func:`check_decoded` catches such an overflow
after the fact (an overflowed value is a random residue, above ``q/2`` half of
the time); protocol-specific bounds that rule it out in advance live with the
protocol (SecFC's in :mod:`fedlib.secagg`).
"""

from __future__ import annotations

import numpy as np

from fedlib._typing import NDArrayInt
from fedlib.field._int64 import signed


class FieldOverflowError(ValueError):
    """A computation over GF(q) would leave (or has left) the range where residues equal integers."""


def quantize(X, scale: float) -> NDArrayInt:
    """``floor(λ x)`` as int64: the integers SecFC computes with (SecFC App. A, before reduction mod ``q``).

    Parameters
    ----------
    X : array-like of float
        Real data.
    scale : float
        The scale λ, > 0.

    Returns
    -------
    ndarray of int64
        ``floor(λ X)``, of the shape of ``X``.

    Raises
    ------
    ValueError
        If ``scale <= 0``.
    FieldOverflowError
        If some ``|λ x|`` reaches 2**52, beyond exact float64 integers.

    Examples
    --------
    >>> quantize([[0.25, -0.25]], 10.0).tolist()
    [[2, -3]]
    """
    if not scale > 0:
        raise ValueError(f"scale (λ) = {scale} should be > 0.")
    Y = np.floor(np.asarray(X, dtype=np.float64) * float(scale))
    if Y.size and float(np.max(np.abs(Y))) >= 2.0**52:
        raise FieldOverflowError(f"λ·x reaches {float(np.max(np.abs(Y))):.3g} >= 2**52 (scale λ={scale}).")
    return Y.astype(np.int64)


def to_field(X_int, q: int) -> NDArrayInt:
    """Integers as residues of GF(q): ``v mod q`` (negative ``v`` become ``q + v``; SecFC App. A, Eq. (3)).

    Parameters
    ----------
    X_int : array-like of int
        Integers, e.g. from :func:`quantize`.
    q : int
        The prime.

    Returns
    -------
    ndarray of int64
        Residues in ``[0, q)``.

    Raises
    ------
    FieldOverflowError
        If some ``|v|`` reaches ``q/2``, so that its residue would not decode to ``v``.

    Examples
    --------
    >>> to_field([2, -3], 101).tolist()
    [2, 98]
    """
    X_int = np.asarray(X_int, dtype=np.int64)
    if X_int.size and int(np.max(np.abs(X_int))) >= q // 2:
        raise FieldOverflowError(
            f"|x̄| reaches {int(np.max(np.abs(X_int)))} >= q/2 = {q // 2}: the residue would not decode to x̄."
        )
    return np.mod(X_int, q)


def check_decoded(values, q: int) -> NDArrayInt:
    """Signed lift of decoded non-negative results; raise if any lies above ``q/2`` (overflow detector).

    A true value in ``[0, q/2)`` decodes to itself; a value that overflowed the
    field decodes to a residue that looks uniformly random, so the check fires
    with probability about 1/2 per overflowed entry.

    Parameters
    ----------
    values : array-like of int
        Decoded residues in ``[0, q)`` of quantities known to be non-negative
        (SecFC's ``d'``).
    q : int
        The prime.

    Returns
    -------
    ndarray of int64
        The values as integers.

    Raises
    ------
    FieldOverflowError
        If some value lies above ``q/2``.

    Examples
    --------
    >>> check_decoded([5, 7], 101).tolist()
    [5, 7]
    """
    v = signed(values, q)
    bad = v < 0
    if np.any(bad):
        raise FieldOverflowError(
            f"{int(bad.sum())} decoded values lie above q/2 = {q // 2}: the true integers overflowed GF({q}). "
            "Lower the scale λ or use a larger prime."
        )
    return v
