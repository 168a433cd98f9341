"""Real data into GF(q) and back: fixed-point quantization, signed residues, and an overflow detector.

Secure protocols compute on integers modulo ``q``. Real data enters as
``floor(λx) mod q`` (SecFC App. A, Eq. (3)): :func:`to_fixed_point`, then
:func:`to_field`. Negative numbers land in the upper half of the field.
Arithmetic modulo ``q`` is exact; the only way it can go wrong is a *true*
integer result of ``q/2`` or more, which cannot be told from a smaller or a
negative one. :func:`check_decoded` flags such an overflow after the fact only
when the residue lands above ``q/2`` (about half of the time): it is a
heuristic that can miss wrap-around, never a certificate. The bounds that rule
overflow out soundly, in advance, live with the protocol (SecFC's in
:mod:`fedlib.secagg`). :func:`collapsed_features` finds the features a scale
quantizes to (almost) nothing.
"""

from __future__ import annotations

import numpy as np

from fedlib._typing import NDArrayInt
from fedlib.exceptions import FieldOverflowError
from fedlib.field._int64 import signed


def to_fixed_point(X, scale: float) -> NDArrayInt:
    """``floor(λ x)`` as int64: the integers SecFC computes with (SecFC App. A, before reduction mod ``q``).

    A fixed-point code of step ``1/λ`` for any real ``λ > 0``, rounded down and
    never clipped: a value too large to be exact raises instead. Two other
    quantizers of fedlib differ on purpose: :meth:`fedlib.cluster.UniformGrid.snap_to_centers`
    (MUFC) rounds ``x/γ`` to the nearest integer and returns the bin centre, a real
    number; :class:`fedlib.secagg.FixedPoint` (SecAgg) clips to ``[-B, B]``,
    rounds ``2^f x`` to the nearest integer and wraps it into ``Z_{2^32}``.

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
    TypeError
        If ``X`` is complex (the imaginary part would be dropped).
    ValueError
        If ``scale <= 0``.
    FieldOverflowError
        If some ``|λ x|`` reaches 2**52, beyond exact float64 integers.

    See Also
    --------
    to_field : The integers as residues of GF(q).

    Examples
    --------
    >>> from fedlib.field import to_fixed_point
    >>> to_fixed_point([[0.25, -0.25]], 10.0).tolist()
    [[2, -3]]
    """
    if not scale > 0:
        raise ValueError(f"scale (λ) = {scale} should be > 0.")
    X = np.asarray(X)
    if np.iscomplexobj(X):
        raise TypeError(f"X must be real, got complex dtype {X.dtype}: to_fixed_point would drop the imaginary part.")
    X = X.astype(np.float64, copy=False)
    with np.errstate(over="ignore"):
        Y = np.floor(X * float(scale))
    if Y.size and not float(np.max(np.abs(Y))) < 2.0**52:
        raise FieldOverflowError(
            f"λ·x reaches {float(np.max(np.abs(Y))):.3g} >= 2**52 (scale λ={scale}, largest |x| = "
            f"{float(np.max(np.abs(X))):.3g}): beyond the exact integers of float64; lower the scale λ."
        )
    return Y.astype(np.int64)


def collapsed_features(X, scale: float) -> NDArrayInt:
    """Features that vary in ``X`` but whose whole range is below one quantization step ``1/λ``.

    ``floor(λx)`` keeps at most two adjacent levels of such a feature (its
    sign, at best), so a clustering of the quantized data barely sees it. A
    constant feature is not counted: it carries nothing to lose.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Real data.
    scale : float
        The scale λ, > 0.

    Returns
    -------
    ndarray of int64
        Indices ``j`` with ``0 < λ (max_j − min_j) < 1``.

    Examples
    --------
    >>> from fedlib.field import collapsed_features
    >>> collapsed_features([[0.0, 0.0, 5.0], [0.05, 3.0, 5.0]], 10.0).tolist()
    [0]
    """
    X = np.asarray(X, dtype=np.float64)
    if X.size == 0:
        return np.zeros(0, dtype=np.int64)
    spread = np.max(X, axis=0) - np.min(X, axis=0)
    return np.flatnonzero((spread > 0) & (spread * float(scale) < 1.0)).astype(np.int64)


def to_field(X_int, q: int) -> NDArrayInt:
    """Integers as residues of GF(q): ``v mod q`` (negative ``v`` become ``q + v``; SecFC App. A, Eq. (3)).

    Parameters
    ----------
    X_int : array-like of int
        Integers, e.g. from :func:`to_fixed_point`.
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
    >>> from fedlib.field import to_field
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
    with probability about 1/2 per overflowed entry. It is a heuristic, not a
    certificate: a true value in ``[q, 1.5q)`` decodes to ``v − q``, which is
    as plausible as any, and passes. Only a bound known before decoding
    (e.g. :func:`fedlib.secagg.check_scale`, :func:`fedlib.secagg.check_round`)
    rules overflow out.

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
    >>> from fedlib.field import check_decoded
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
