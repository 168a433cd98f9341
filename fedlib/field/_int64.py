"""Exact GF(q) arithmetic on int64 numpy arrays for primes q < 2**50 (SecFC's field).

Products of two residues below 2**50 overflow int64, and numpy wraps silently.
``mulmod`` computes ``a*b mod q`` exactly with a float64 estimate of the
quotient; ``matmul_mod`` multiplies matrices at BLAS speed by splitting the
entries into limbs whose products, summed over the inner dimension, stay
at most 2**53 and so are exact in float64; :class:`LimbMatrix` keeps a matrix
split for repeated products. All are checked against Python integers in the
tests. Bounds that would break exactness raise ``ValueError`` naming them.

The limb weights of the large operand are folded into the small one,
``S @ Y ≡ Σ_ρ (2^{bρ} S mod q) @ Y_ρ`` for the ``b``-bit limbs ``Y_ρ`` of ``Y``
(``_left_product``): every limb of ``Y`` enters one BLAS call along a
longer inner dimension, and the partial products left to recombine modulo
``q`` are one per limb of the rescaled small operand, not one per pair of limbs.
"""

from __future__ import annotations

import numpy as np
from scipy.sparse import csr_matrix, issparse

from fedlib.field._prime import check_prime

#: Largest modulus for which the float-assisted products here are exact.
MAX_MODULUS = 2**50
_MAX_INNER = 2**19  # inner dimensions matmul_mod refuses (limbs would get too narrow to pay)
_EXACT = 2**53  # float64 holds every integer up to 2**53, so sums of non-negative integers up to it are exact


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

    Examples
    --------
    >>> from fedlib.field import check_modulus
    >>> check_modulus(2**31 - 1)
    2147483647
    >>> check_modulus(2**61 - 1)
    Traceback (most recent call last):
        ...
    ValueError: int64 field arithmetic is exact only for q < 2**50; got q=2305843009213693951 (about 2**61).
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
    >>> from fedlib.field import as_residues
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
    wrap-around, lies in ``[-q, 2q)`` and a floor division by ``q`` brings it into range.

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
    >>> from fedlib.field import mulmod
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
    return _mod(r, q)


def _split_limbs(M: np.ndarray, bits: int) -> list[np.ndarray]:
    """The ``bits``-bit limbs of residues ``M``, low first, as float64; all-zero high limbs are dropped."""
    top = int(M.max(initial=0))
    n_limbs = max(1, -(-top.bit_length() // bits))
    mask = (1 << bits) - 1
    return [((M >> (bits * s)) & mask).astype(np.float64) for s in range(n_limbs)]


def _limb_array(M: np.ndarray, bits: int, top: int | None = None) -> np.ndarray:
    """The ``bits``-bit limbs of a residue matrix ``M`` of shape ``(r, c)`` as one float64 array ``(r, n, c)``.

    ``M = Σ_ρ 2^{bits·ρ} L[:, ρ, :]``, ``n`` limbs (all-zero high limbs
    dropped). The layout serves both products of ``_left_product`` as
    views: ``L.reshape(r * n, c)`` stacks the limbs along the rows (inner
    index ``(i, ρ)``), ``L.reshape(r, n * c)`` along the columns (inner index
    ``(ρ, j)``). :func:`matmul_mod` and :class:`LimbMatrix` split the large
    operand with it. ``top``: ``M.max()``, when the caller has it.
    """
    top = int(M.max(initial=0)) if top is None else top
    n_limbs = max(1, -(-top.bit_length() // bits))
    mask = (1 << bits) - 1
    out = np.empty((M.shape[0], n_limbs, M.shape[1]), dtype=np.float64)
    limb = np.empty(M.shape, dtype=np.int64)
    for s in range(n_limbs):
        np.bitwise_and(np.right_shift(M, bits * s, out=limb) if s else M, mask, out=limb)
        out[:, s, :] = limb
    return out


def _max_bits(inner: int, other_bits: int) -> int:
    """Largest ``a <= 52`` with ``inner·(2^a − 1)·(2^other_bits − 1) <= 2**53``, 0 if there is none.

    Limbs of ``a`` and ``other_bits`` bits are non-negative integers, so every
    partial sum of their product over an inner dimension of ``inner`` is an
    integer at most this bound: exact in float64, in whatever order BLAS adds.
    """
    other = (1 << other_bits) - 1
    a = 0
    while a < 52 and max(inner, 1) * ((1 << (a + 1)) - 1) * other <= _EXACT:
        a += 1
    return a


def _mod(a: np.ndarray, q: int) -> np.ndarray:
    """``a mod q`` in ``[0, q)`` for an int64 array: ``a − (a // q)·q``.

    Floor division by a scalar is several times faster than ``np.mod`` in
    numpy; ``(a // q)·q`` lies between ``a − q`` and ``a``, so nothing overflows.
    """
    quot = np.floor_divide(a, q)
    if not isinstance(quot, np.ndarray):  # a 0-d input gives a numpy scalar
        return a - quot * q
    quot *= q
    return np.subtract(a, quot, out=quot)


def _mulmod_by(a: np.ndarray, c: int, q: int) -> np.ndarray:
    """Unreduced int64 ``r ≡ a·c (mod q)``, ``|r| < 2**55``, for int64 ``|a| < 2**56`` and ``0 <= c < q < 2**50``.

    The exact quotient ``Q = a·c/q`` has ``|Q| < |a| < 2**56``; its float64
    estimate ``fl(fl(a)·fl(c/q))`` (three roundings of relative error at most
    2**-53) is off by less than 25, so ``r = a·c − floor(estimate)·q``
    satisfies ``|r| < 26q < 2**55``, and computed modulo 2**64 by int64
    wrap-around it is exact. Unchecked: callers prove the bound on ``a``
    (residues, or ``_combine``'s partial sums) and reduce ``r`` (``_mod``).
    """
    estimate = np.empty(a.shape, dtype=np.int64)
    np.floor(np.multiply(a, float(c) / float(q), dtype=np.float64), out=estimate, casting="unsafe")
    with np.errstate(over="ignore"):
        estimate *= np.int64(q)
        r = np.multiply(a, np.int64(c))
        r -= estimate
    return r


def _combine(blocks: list[np.ndarray], shift: int, q: int) -> np.ndarray:
    """``Σ_σ 2^{shift·σ} blocks[σ] mod q`` for float64 blocks of integers in ``[0, 2**53]``, by Horner.

    Each step multiplies the running value by ``2^shift mod q``
    (``_mulmod_by``: below 2**55 in magnitude for an input below 2**56)
    and adds the next block (at most 2**53), so the running value stays below
    2**56; it is reduced once, at the end.
    """
    out = blocks[-1].astype(np.int64)
    if len(blocks) > 1:
        c = pow(2, shift, q)
        for block in reversed(blocks[:-1]):
            out = _mulmod_by(out, c, q)
            out += block.astype(np.int64)
    return _mod(out, q)


def _left_product(S: np.ndarray, L: np.ndarray, bits: int, q: int, *, transposed: bool) -> np.ndarray:
    """``S @ X mod q`` (``transposed=False``) or ``S @ X.T mod q``, for ``X`` given by its limbs; exact.

    ``L`` of shape ``(r, n, c)`` holds the ``bits``-bit limbs of ``X`` (shape
    ``(r, c)``, ``_limb_array``); ``S`` holds residues in ``[0, q)``.

    * If ``S`` is a single limb for which ``inner·(2^a − 1)·(2^bits − 1) <= 2**53``
      (a 0/1 membership matrix, say): one product per limb of ``X``,
      recombined with the weights ``2^{bits·ρ}``.
    * Otherwise the weights of ``X``'s limbs move to ``S``: ``S @ X ≡
      Σ_ρ (2^{bits·ρ} S mod q) @ X_ρ``. The ``n`` rescaled copies of ``S``,
      side by side, meet the ``n`` limbs of ``X``, stacked, along an inner
      dimension ``n·inner``; they are split into the widest limbs ``a`` with
      ``n·inner·(2^a − 1)·(2^bits − 1) <= 2**53`` (``_max_bits``), the
      limbs of ``S`` become the rows of one BLAS call, and its partial
      products, exact in float64, are recombined with the weights
      ``2^{a·σ}`` (``_combine``).

    Raises
    ------
    ValueError
        If the inner dimension leaves no limb width at which the float64 sums are exact.
    """
    r, n, c = L.shape
    inner = c if transposed else r
    rows = S.shape[0]
    width = r if transposed else c
    if inner == 0 or rows == 0:
        return np.zeros((rows, width), dtype=np.int64)
    top = int(S.max()) if issparse(S) else int(S.max(initial=0))
    if top.bit_length() <= _max_bits(inner, bits):  # S is a single limb (a sparse S stays sparse)
        Sf = S.astype(np.float64)
        if transposed:
            blocks = [Sf @ L[:, rho, :].T for rho in range(n)]
        else:
            P = Sf @ L.reshape(r, n * c)
            blocks = [P[:, rho * c : (rho + 1) * c] for rho in range(n)]
        return _combine(blocks, bits, q)
    a_bits = _max_bits(n * inner, bits)
    if a_bits < 1:
        raise ValueError(f"inner dimension {inner} too large for exact {bits}-bit limb products.")
    if issparse(S):
        S = S.toarray()
    # S_ρ = 2^{bits·ρ} S mod q, laid out along the inner index of X's stacked limbs: (ρ, j), or (i, ρ)
    scaled = np.empty((rows, n, inner) if transposed else (rows, inner, n), dtype=np.int64)
    for rho in range(n):
        part = S if rho == 0 else _mod(_mulmod_by(S, pow(2, bits * rho, q), q), q)
        if transposed:
            scaled[:, rho, :] = part
        else:
            scaled[:, :, rho] = part
    limbs = _split_limbs(scaled.reshape(rows, n * inner), a_bits)
    A = np.concatenate(limbs, axis=0) if len(limbs) > 1 else limbs[0]
    # One BLAS call: several smaller ones would keep its output in cache, but cost more where BLAS runs threads.
    P = A @ (L.reshape(r, n * c).T if transposed else L.reshape(r * n, c))
    return _combine([P[s * rows : (s + 1) * rows] for s in range(len(limbs))], a_bits, q)


#: matmul_mod multiplies rows of the large operand by scalars when the small one has at most this many entries.
_MAX_SCALARS = 24


def _scalar_product(S: np.ndarray, Y: np.ndarray, q: int) -> np.ndarray:
    """``S @ Y mod q`` as sums of rows of ``Y`` times scalars, for a small ``S`` with at most 255 columns.

    Each ``Y[i] · S[a, i]`` is an unreduced residue below 2**55 in magnitude
    (``_mulmod_by``), so a sum of at most 255 of them stays below 2**63;
    it is reduced once. For a handful of scalars (a decoding's Lagrange
    weights) this is cheaper than splitting ``Y`` into limbs.
    """
    out = np.empty((S.shape[0], Y.shape[1]), dtype=np.int64)
    for a in range(S.shape[0]):
        acc = np.zeros(Y.shape[1], dtype=np.int64)
        for i in range(S.shape[1]):
            acc += _mulmod_by(Y[i], int(S[a, i]), q)
        out[a] = _mod(acc, q)
    return out


def _choose_bits(small_bits: int, big_bits: int, inner: int, rows: int, cols: int, q: int) -> int:
    """Limb width for the large operand of :func:`matmul_mod`, split on the fly, by a rough cost in element operations.

    The cost counts the splitting of the large operand (per limb), the BLAS
    products, and the modular recombination (per block of output); every
    candidate is exact (``_left_product`` checks).
    """
    best = None
    q_bits = (q - 1).bit_length()
    for n in range(1, 9):
        bits = -(-max(big_bits, 1) // n)
        if small_bits <= _max_bits(inner, bits):
            products, blocks = n, n
        else:
            a = _max_bits(n * inner, bits)
            if a < 1:
                continue
            na = -(-(small_bits if n == 1 else q_bits) // a)
            products, blocks = na * n, na
        cost = 2 * n * inner * cols + 0.1 * products * rows * inner * cols + 10 * blocks * rows * cols
        if best is None or cost < best[0]:
            best = (cost, bits)
        if bits == 1:
            break
    return 25 if best is None else best[1]  # None: no width is exact; _left_product raises


def matmul_mod(A, B, q: int) -> np.ndarray:
    """``A @ B mod q`` for residue matrices, exact, with float64 BLAS products of limbs.

    The larger operand is split into limbs of ``b`` bits and their weights
    ``2^{bρ}`` are folded into the smaller one, which is then split in turn
    (``_left_product``); ``b`` is chosen by a rough cost
    (``_choose_bits``). Every limb product summed over its inner dimension
    stays at most 2**53, float64's exact-integer range (a 0/1 matrix, such as
    a one-hot cluster membership, is a single 1-bit limb and multiplies the
    limbs directly). The partial products are reduced and recombined with
    ``2**shift mod q``. A smaller operand of at most 24 entries (with an
    inner dimension of at most 255, a decoding's Lagrange weights say)
    instead multiplies the rows of the larger one as scalars (``_scalar_product``).

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
    >>> from fedlib.field import matmul_mod
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
    r, inner = A.shape
    c = B.shape[1]
    if min(A.size, B.size) <= _MAX_SCALARS and inner <= 255:  # a few scalars times rows (or columns)
        return _scalar_product(A, B, q) if A.size <= B.size else _scalar_product(B.T, A.T, q).T
    a_top, b_top = int(A.max(initial=0)), int(B.max(initial=0))
    if A.size <= B.size:  # B is split on the fly; A is rescaled and split (_left_product)
        bits = _choose_bits(a_top.bit_length(), b_top.bit_length(), inner, r, c, q)
        return _left_product(A, _limb_array(B, bits, b_top), bits, q, transposed=False)
    bits = _choose_bits(b_top.bit_length(), a_top.bit_length(), inner, c, r, q)  # A @ B = (Bᵀ @ Aᵀ)ᵀ
    return _left_product(B.T, _limb_array(A, bits, a_top), bits, q, transposed=True).T


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
    >>> from fedlib.field import sum_mod
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
    >>> from fedlib.field import signed
    >>> signed([98, 2], 101).tolist()
    [-3, 2]
    """
    v = np.asarray(v, dtype=np.int64)
    return np.where(v > q // 2, v - q, v)


class LimbMatrix:
    """A residue matrix kept as float64 limbs, for repeated exact products with it (either side, or transposed).

    SecFC's clients multiply the same share matrix ``X`` every round:
    ``onehot @ X`` and ``M @ X.T``. Splitting ``X`` once into limbs of
    ``bits`` bits (two 25-bit limbs for q < 2**50), kept side by side in one
    array, saves the split each round; either product is then one BLAS call
    on a view of them. The other operand is rescaled by the limbs' weights
    and split into limbs narrow enough that every sum over the inner
    dimension stays at most 2**53 (exact in float64); a 0/1 operand is used
    as it is (``_left_product``).

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
        The float64 limbs of ``X``, low first (views of one array).

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
    >>> from fedlib.field import LimbMatrix
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
        self._stacked = _limb_array(X, bits)  # (r, n_limbs, c)
        self.limbs = [self._stacked[:, s, :] for s in range(self._stacked.shape[1])]

    def _product(self, A, transposed: bool) -> np.ndarray:
        """``A @ X mod q``, or ``A @ X.T mod q``: the body of :meth:`left_mul` and :meth:`left_mul_transposed`."""
        shape = self.shape[::-1] if transposed else self.shape
        if len(np.shape(A)) != 2 or np.shape(A)[-1] != shape[0]:
            raise ValueError(f"cannot multiply shapes {np.shape(A)} and {shape}.")
        if issparse(A):  # e.g. a one-hot membership: its entries reduced, its zeros kept implicit
            A = A.tocsr()
            A = csr_matrix((as_residues(A.data, self.q), A.indices, A.indptr), shape=A.shape)
        else:
            A = as_residues(A, self.q)
        return _left_product(A, self._stacked, self.bits, self.q, transposed=transposed)

    def left_mul(self, A) -> np.ndarray:
        """``A @ X mod q``.

        Parameters
        ----------
        A : array-like of int or scipy sparse matrix of shape (a, r)
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
        A : array-like of int or scipy sparse matrix of shape (a, c)
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
