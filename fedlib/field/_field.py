"""GF(p) on numpy arrays, one entry point for every prime: int64 residues below 2**50, Python ints above.

SecFC's field (q < 2**50) is fast on int64 arrays with the float-assisted
products of :mod:`fedlib.field._int64`; keys and the secrets of Shamir sharing
need primes above 2**256, where residues are Python integers held in numpy
object arrays. :class:`PrimeField` picks the path by the modulus and offers the
same operations on both, so that the Lagrange code (and Shamir sharing, its
one-segment case) is written once.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fedlib._random import check_key_source
from fedlib._typing import SeedLike
from fedlib.field._int64 import MAX_MODULUS, as_residues, matmul_mod, mulmod, signed, sum_mod
from fedlib.field._interpolation import lagrange_basis
from fedlib.field._prime import check_prime, random_field_elements, secret_residues


@dataclass(frozen=True)
class PrimeField:
    """The prime field GF(``prime``), with exact arithmetic on numpy arrays of residues.

    Parameters
    ----------
    prime : int
        A prime. Below 2**50 residues are ``int64`` and products use
        :func:`fedlib.field.mulmod` / :func:`fedlib.field.matmul_mod`
        (BLAS-speed, exact); from 2**50 on they are Python ints in ``object``
        arrays (exact, interpreted, for keys and other large secrets).

    Attributes
    ----------
    dtype : numpy.dtype
        ``int64`` or ``object``: the dtype of every array this field returns.
    is_int64 : bool
        Whether residues are int64 (``prime < 2**50``).

    Raises
    ------
    TypeError
        If ``prime`` is not an int.
    ValueError
        If ``prime`` is not a prime.

    Notes
    -----
    SecFC computes in GF(q) with q < 2**50 (:data:`fedlib.secagg.SECFC_PRIME`),
    on the int64 path. The object path is exact but interpreted: it serves
    keys and large secrets, such as Shamir sharing with
    :class:`fedlib.field.LagrangeCode` over a prime of 127 bits or more.

    Examples
    --------
    >>> from fedlib.field import PrimeField
    >>> small, large = PrimeField(2**50 - 27), PrimeField(2**255 - 19)
    >>> small.dtype, large.dtype
    (dtype('int64'), dtype('O'))
    >>> int(large.mul(large.asarray([-1]), large.asarray([-1]))[0])
    1
    """

    prime: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "prime", check_prime(self.prime))

    @property
    def is_int64(self) -> bool:
        """Whether residues are int64 (``prime < 2**50``)."""
        return self.prime < MAX_MODULUS

    @property
    def dtype(self) -> np.dtype:
        """``int64`` below 2**50, else ``object`` (Python ints): the dtype of every returned array."""
        return np.dtype(np.int64) if self.is_int64 else np.dtype(object)

    def asarray(self, a) -> np.ndarray:
        """Integers as residues in ``[0, p)``; negative integers wrap around (``-1`` becomes ``p - 1``).

        Parameters
        ----------
        a : int or array-like of int
            Integers of any size (Python or numpy).

        Returns
        -------
        ndarray
            Residues of the field's :attr:`dtype`, of the shape of ``a``.

        Raises
        ------
        TypeError
            For floats or booleans, which are refused rather than truncated.
        """
        if isinstance(a, np.ndarray) and a.dtype.kind not in "iuO":
            raise TypeError(f"field elements must be integers, got an array of dtype {a.dtype}.")
        if self.is_int64:
            return as_residues(a, self.prime)
        arr = np.asarray(a, dtype=object)
        if not arr.size:
            return arr
        return np.vectorize(self._residue, otypes=[object])(arr).reshape(arr.shape)

    def _residue(self, v) -> int:
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
            raise TypeError(f"field elements must be integers, got {type(v).__name__} {v!r}.")
        return int(v) % self.prime

    def random(self, shape, random_state: SeedLike | str = None) -> np.ndarray:
        """Independent uniform elements of GF(p) of the given shape.

        The int64 path draws ``Generator.integers(0, p)``; the Python-int
        path uses exact rejection sampling on random bytes
        (:func:`fedlib.field.random_field_elements`).

        Parameters
        ----------
        shape : int or tuple of int
            Shape of the result.
        random_state : int, numpy.random.Generator, None or "secrets", default=None
            Pass an int for reproducible output across multiple function calls;
            ``"secrets"`` draws from the operating system's CSPRNG (key material).

        Returns
        -------
        ndarray
            Uniform residues of the field's :attr:`dtype`.
        """
        source = check_key_source(random_state)
        if isinstance(source, str):
            size = int(np.prod(shape))
            if self.is_int64:
                return secret_residues(self.prime, size).reshape(shape)
            return np.array(random_field_elements(self.prime, size, random_state=source), dtype=object).reshape(shape)
        rng = source
        if self.is_int64:
            return rng.integers(0, self.prime, size=shape, dtype=np.int64)
        size = int(np.prod(shape))
        return np.array(random_field_elements(self.prime, size, random_state=rng), dtype=object).reshape(shape)

    def _reduce(self, v) -> np.ndarray:
        """``v mod p`` keeping the field's dtype (object arrays stay Python ints, even 0-d ones)."""
        return np.mod(np.asarray(v, dtype=self.dtype), self.prime)

    def add(self, a, b) -> np.ndarray:
        """``a + b mod p`` elementwise for residues.

        Parameters
        ----------
        a, b : int or array-like of int
            Integers (reduced mod p first); shapes broadcast.

        Returns
        -------
        ndarray
            Residues of the field's :attr:`dtype`.
        """
        return self._reduce(self.asarray(a) + self.asarray(b))

    def sub(self, a, b) -> np.ndarray:
        """``a - b mod p`` elementwise for residues.

        Parameters
        ----------
        a, b : int or array-like of int
            Integers (reduced mod p first); shapes broadcast.

        Returns
        -------
        ndarray
            Residues of the field's :attr:`dtype`.
        """
        return self._reduce(self.asarray(a) - self.asarray(b))

    def mul(self, a, b) -> np.ndarray:
        """``a * b mod p`` elementwise for residues.

        Parameters
        ----------
        a, b : int or array-like of int
            Integers (reduced mod p first); shapes broadcast.

        Returns
        -------
        ndarray
            Residues of the field's :attr:`dtype`.
        """
        if self.is_int64:
            return mulmod(self.asarray(a), self.asarray(b), self.prime)
        return self._reduce(self.asarray(a) * self.asarray(b))

    def matmul(self, A, B) -> np.ndarray:
        """``A @ B mod p`` for 2-D residue matrices.

        Parameters
        ----------
        A, B : array-like of int
            Matrices of shapes ``(r, s)`` and ``(s, c)``.

        Returns
        -------
        ndarray of shape (r, c)
            Residues of the field's :attr:`dtype`.

        Raises
        ------
        ValueError
            If the shapes do not allow the product.
        """
        if self.is_int64:
            return matmul_mod(A, B, self.prime)
        A, B = self.asarray(A), self.asarray(B)
        if A.ndim != 2 or B.ndim != 2 or A.shape[1] != B.shape[0]:
            raise ValueError(f"cannot multiply shapes {A.shape} and {B.shape}.")
        return self._reduce(A @ B)

    def sum(self, a, *, axis: int = -1) -> np.ndarray:
        """``a.sum(axis) mod p`` for residues, without overflow.

        Parameters
        ----------
        a : array-like of int
            Residues in ``[0, p)``.
        axis : int, default=-1
            The axis to sum over.

        Returns
        -------
        ndarray
            Residues of the field's :attr:`dtype`, with ``axis`` removed.
        """
        if self.is_int64:
            return sum_mod(a, self.prime, axis=axis)
        return self._reduce(self.asarray(a).sum(axis=axis))

    def signed(self, v) -> np.ndarray:
        """Residues lifted to ``(-p/2, p/2]``, for quantities that may be negative.

        Parameters
        ----------
        v : array-like of int
            Residues in ``[0, p)``.

        Returns
        -------
        ndarray
            ``v - p`` where ``v > p // 2``, else ``v``.
        """
        if self.is_int64:
            return signed(v, self.prime)
        v = self.asarray(v)
        return np.where(v > self.prime // 2, v - self.prime, v)

    def lagrange_basis(self, nodes, targets) -> np.ndarray:
        """:func:`fedlib.field.lagrange_basis` as a ``(len(targets), len(nodes))`` array of this field.

        Parameters
        ----------
        nodes : sequence of int
            Distinct interpolation points.
        targets : sequence of int
            Points at which the polynomial is wanted.

        Returns
        -------
        ndarray of shape (len(targets), len(nodes))
            Row ``a`` turns values at ``nodes`` into the value at ``targets[a]``.
        """
        return np.array(lagrange_basis(nodes, targets, self.prime), dtype=self.dtype).reshape(len(targets), len(nodes))
