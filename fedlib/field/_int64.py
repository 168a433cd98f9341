"""Exact GF(q) arithmetic on int64 numpy arrays for primes q < 2**50 (SecFC's field).

Products of two residues below 2**50 overflow int64, and numpy wraps silently.
``mulmod`` computes ``a*b mod q`` exactly with a float64 estimate of the
quotient; ``matmul_mod`` multiplies matrices at BLAS speed by splitting the
entries into limbs whose products, summed over the inner dimension, stay
below 2**52 and so are exact in float64; :class:`LimbMatrix` keeps a matrix
split for repeated products. All are checked against Python integers in the
tests. Bounds that would break exactness raise ``ValueError`` naming them.
"""

from __future__ import annotations

import numpy as np

from fedlib.field._prime import check_prime

#: Largest modulus for which the float-assisted products here are exact.
MAX_MODULUS = 2**50
_LIMB_BITS = 17  # limbs of the left operand; the right operand's limbs are as wide as exactness allows
_MAX_INNER = 2**19  # keeps the right operand's limbs at >= 16 bits


def check_modulus(q: int) -> int:
    """``q`` as an int, if it is a prime below 2**50 (the exactness bound of this module).

    Parameters
    ----------
    q : int
        The modulus.

    Returns
    -------
    int
        ``q``.

    Raises
    ------
    TypeError
        If ``q`` is not an integer.
    ValueError
        If ``q`` is not a prime, or is 2**50 or more.
    """
    q = check_prime(q)
    if q >= MAX_MODULUS:
        raise ValueError(f"int64 field arithmetic is exact only for q < 2**50; got q={q} (about 2**{q.bit_length()}).")
    return q


def as_residues(a, q: int) -> np.ndarray:
    """Integers as int64 residues in ``[0, q)`` (no copy when they already are).

    Parameters
    ----------
    a : array-like of int
        Integers that fit in int64.
    q : int
        The modulus.

    Returns
    -------
    ndarray of int64
        ``a mod q``.

    Examples
    --------
    >>> as_residues([-1, 5], 7).tolist()
    [6, 5]
    """
    a = np.asarray(a, dtype=np.int64)
    if a.size == 0 or (int(a.min()) >= 0 and int(a.max()) < q):
        return a
    return np.mod(a, q)


def mulmod(a, b, q: int) -> np.ndarray:
    """Elementwise ``a * b mod q`` for residues ``a, b`` in ``[0, q)``, exact for ``q < 2**50``.

    The float64 quotient ``floor(a*b/q)`` is off by at most one (its error is
    below 1/4 for q < 2**50), so ``a*b - quot*q``, computed modulo 2**64 by int64
    wrap-around, lies in ``[-q, 2q)`` and ``np.mod`` brings it into range.

    Parameters
    ----------
    a, b : array-like of int
        Residues in ``[0, q)``; shapes broadcast.
    q : int
        A modulus below 2**50 (primality is not checked here: :func:`check_modulus` does).

    Returns
    -------
    ndarray of int64
        ``a * b mod q``.

    Raises
    ------
    ValueError
        If ``q`` is not in ``(1, 2**50)`` or an input is not reduced to ``[0, q)``: the float64
        quotient would be off by more than one and the result silently wrong.

    Examples
    --------
    >>> q = 2**50 - 27
    >>> int(mulmod(q - 1, q - 1, q)[()])  # (-1)·(-1)
    1
    """
    q = int(q)
    if not 1 < q < MAX_MODULUS:
        raise ValueError(f"mulmod is exact only for 1 < q < 2**50; got q={q} (about 2**{q.bit_length()}).")
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    for name, x in (("a", a), ("b", b)):
        if x.size and (int(x.min()) < 0 or int(x.max()) >= q):
            raise ValueError(
                f"mulmod needs residues in [0, q) with q={q}; {name} holds values in "
                f"[{int(x.min())}, {int(x.max())}]: reduce them first (as_residues)."
            )
    quot = np.floor(a.astype(np.float64) * b.astype(np.float64) / q).astype(np.int64)
    with np.errstate(over="ignore"):
        r = a * b - quot * q
    return np.mod(r, q)


def _split_limbs(M: np.ndarray, bits: int) -> list[np.ndarray]:
    """The ``bits``-bit limbs of residues ``M``, low first, as float64; all-zero high limbs are dropped.

    The one limb splitting of the library: :func:`matmul_mod` and
    :class:`LimbMatrix` split both operands with it.
    """
    top = int(M.max(initial=0))
    n_limbs = max(1, -(-top.bit_length() // bits))
    mask = (1 << bits) - 1
    return [((M >> (bits * s)) & mask).astype(np.float64) for s in range(n_limbs)]


def matmul_mod(A, B, q: int) -> np.ndarray:
    """``A @ B mod q`` for residue matrices, exact, with one float64 BLAS product per pair of limbs.

    ``A`` is split into 17-bit limbs and ``B`` into limbs as wide as exactness
    allows: a limb product summed over the inner dimension must stay below
    2**53, float64's exact-integer range, so ``B``'s limbs get
    ``52 - (bits of A's limbs) - (bits of the inner dimension)`` bits (two
    limbs for an inner dimension of 100; a 0/1 matrix ``A``, such as a one-hot
    cluster membership, has a single 1-bit limb). The partial products are
    reduced and recombined with ``2**shift mod q``.

    Parameters
    ----------
    A, B : array-like of int
        Residue matrices of shapes ``(r, s)`` and ``(s, c)``.
    q : int
        A prime below 2**50.

    Returns
    -------
    ndarray of int64, shape (r, c)
        ``A @ B mod q``, exact.

    Raises
    ------
    ValueError
        If ``q`` is not a prime below 2**50, the shapes do not allow the
        product, or the inner dimension reaches 2**19 (limb sums would pass 2**53).

    Examples
    --------
    >>> q = 2**50 - 27
    >>> int(matmul_mod([[q - 1]], [[q - 1]], q)[0, 0])  # (-1)·(-1)
    1
    """
    q = check_modulus(q)
    A = as_residues(A, q)
    B = as_residues(B, q)
    if A.ndim != 2 or B.ndim != 2 or A.shape[1] != B.shape[0]:
        raise ValueError(f"cannot multiply shapes {A.shape} and {B.shape}.")
    if A.shape[1] >= _MAX_INNER:
        raise ValueError(
            f"inner dimension {A.shape[1]} >= 2**19: limb sums would exceed 2**53 and lose exactness; "
            "split the product."
        )
    a_bits = min(_LIMB_BITS, max(1, int(A.max(initial=0)).bit_length()))
    b_bits = 52 - a_bits - A.shape[1].bit_length()  # inner * 2**a_bits * 2**b_bits <= 2**52
    return LimbMatrix._from_residues(B, q, b_bits).left_mul(A)


def _scaled_block(product: np.ndarray, shift: int, q: int) -> np.ndarray:
    """``(product mod q) * 2**shift mod q`` for an exact float64 integer matrix ``product`` below 2**52."""
    return mulmod(np.mod(product.astype(np.int64), q), pow(2, shift, q), q)


def sum_mod(a, q: int, *, axis: int = -1) -> np.ndarray:
    """``a.sum(axis) mod q`` for residues ``a`` in ``[0, q)``, q < 2**50, without int64 overflow.

    A sum of more than 2**13 residues below 2**50 can pass 2**63; the axis is
    summed in blocks of 2**13 with a reduction after each.

    Parameters
    ----------
    a : array-like of int
        Residues in ``[0, q)``.
    q : int
        A prime below 2**50.
    axis : int, default=-1
        The axis to sum over.

    Returns
    -------
    ndarray of int64
        The sums mod ``q``, with ``axis`` removed.

    Examples
    --------
    >>> q = 2**50 - 27
    >>> int(sum_mod([q - 1, q - 1, 3], q))
    1
    """
    a = np.moveaxis(np.asarray(a, dtype=np.int64), axis, -1)
    block = 2**13
    out = np.zeros(a.shape[:-1], dtype=np.int64)
    for start in range(0, a.shape[-1], block):
        out = np.mod(out + np.mod(a[..., start : start + block].sum(axis=-1), q), q)
    return out


def signed(v, q: int) -> np.ndarray:
    """Lift residues to ``(-q/2, q/2]``: ``v - q`` where ``v > q // 2`` (for decoding signed quantities).

    Parameters
    ----------
    v : array-like of int
        Residues in ``[0, q)``.
    q : int
        The modulus.

    Returns
    -------
    ndarray of int64
        The signed integers.

    Examples
    --------
    >>> signed([98, 2], 101).tolist()
    [-3, 2]
    """
    v = np.asarray(v, dtype=np.int64)
    return np.where(v > q // 2, v - q, v)


class LimbMatrix:
    """A residue matrix kept as float64 limbs, for repeated exact products with it (either side, or transposed).

    SecFC's clients multiply the same share matrix ``X`` every round:
    ``onehot @ X`` and ``M @ X.T``. Splitting ``X`` once into limbs of
    ``bits`` bits (two 25-bit limbs for q < 2**50) saves the split each round,
    and a transposed limb is a free view for BLAS. The other operand is split
    into limbs narrow enough that every sum over the inner dimension stays
    below 2**52 (exact in float64).

    Parameters
    ----------
    X : array-like of int of shape (r, c)
        The matrix, as integers (reduced mod ``q``).
    q : int
        A prime below 2**50.
    bits : int, default=25
        Width of ``X``'s limbs.

    Attributes
    ----------
    q : int
        The modulus.
    shape : tuple of int
        ``(r, c)``.
    bits : int
        Width of the limbs.
    limbs : list of ndarray
        The float64 limbs of ``X``, low first.

    Raises
    ------
    ValueError
        If ``q`` is not a prime below 2**50 or ``X`` is not 2-D.

    Notes
    -----
    Used by :class:`fedlib.secagg.CodedDistances`, in
    :doc:`/notebooks/secfc/secure_clustering`.

    Examples
    --------
    >>> q = 2**50 - 27
    >>> X = LimbMatrix([[1, q - 1], [2, 3]], q)
    >>> X.left_mul([[1, 1]]).tolist(), X.left_mul_transposed([[1, 1]]).tolist()
    ([[3, 2]], [[0, 5]])
    """

    def __init__(self, X, q: int, *, bits: int = 25) -> None:
        q = check_modulus(q)
        X = as_residues(X, q)
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D, got shape {X.shape}.")
        self._init(X, q, bits)

    @classmethod
    def _from_residues(cls, X: np.ndarray, q: int, bits: int) -> LimbMatrix:
        """Build from an already checked 2-D residue matrix (no second scan of the data)."""
        out = cls.__new__(cls)
        out._init(X, q, bits)
        return out

    def _init(self, X: np.ndarray, q: int, bits: int) -> None:
        self.q = q
        self.shape = X.shape
        self.bits = bits
        self.limbs = _split_limbs(X, bits)

    def _product(self, A, transposed: bool) -> np.ndarray:
        """``A @ X mod q``, or ``A @ X.T mod q``: the body of :meth:`left_mul` and :meth:`left_mul_transposed`."""
        shape = self.shape[::-1] if transposed else self.shape
        if np.shape(A)[-1] != shape[0]:
            raise ValueError(f"cannot multiply shapes {np.shape(A)} and {shape}.")
        inner = shape[0]
        q = self.q
        A = as_residues(A, q)
        a_bits = min(_LIMB_BITS, max(1, int(A.max(initial=0)).bit_length()), 52 - self.bits - inner.bit_length())
        if a_bits < 1:
            raise ValueError(f"inner dimension {inner} too large for exact {self.bits}-bit limb products.")
        out = np.zeros((A.shape[0], self.shape[0] if transposed else self.shape[1]), dtype=np.int64)
        for s, La in enumerate(_split_limbs(A, a_bits)):
            for r, Lx in enumerate(self.limbs):
                out += _scaled_block(La @ (Lx.T if transposed else Lx), a_bits * s + self.bits * r, q)
        return np.mod(out, q)

    def left_mul(self, A) -> np.ndarray:
        """``A @ X mod q``.

        Parameters
        ----------
        A : array-like of int of shape (a, r)
            Integers, reduced mod ``q``.

        Returns
        -------
        ndarray of int64, shape (a, c)
            The exact product mod ``q``.

        Raises
        ------
        ValueError
            If the shapes do not allow the product or the inner dimension is too large.
        """
        return self._product(A, transposed=False)

    def left_mul_transposed(self, A) -> np.ndarray:
        """``A @ X.T mod q``.

        Parameters
        ----------
        A : array-like of int of shape (a, c)
            Integers, reduced mod ``q``.

        Returns
        -------
        ndarray of int64, shape (a, r)
            The exact product mod ``q``.

        Raises
        ------
        ValueError
            If the shapes do not allow the product or the inner dimension is too large.
        """
        return self._product(A, transposed=True)
