"""Exact GF(q) arithmetic on int64 numpy arrays for primes q < 2**50 (SecFC's field).

Products of two residues below 2**50 overflow int64, and numpy wraps silently.
``mulmod`` computes ``a*b mod q`` exactly with a float64 estimate of the
quotient; ``matmul_mod`` multiplies matrices at BLAS speed by splitting each
entry into three 17-bit limbs, whose products summed over fewer than 2**19
terms are exact in float64. Both are checked against Python integers in the
tests. Bounds that would break exactness raise ``ValueError`` naming them.
"""

from __future__ import annotations

import numpy as np

from fedlib.field._prime import check_prime

#: Largest modulus for which the float-assisted products here are exact.
MAX_MODULUS = 2**50
_LIMB_BITS = 17
_N_LIMBS = 3  # 3 * 17 = 51 bits >= 50
_MAX_INNER = 2**19  # limb products < 2**34; 2**34 * 2**19 = 2**53, float64's exact-integer limit


def check_modulus(q: int) -> int:
    """``q`` as an int, if it is a prime below 2**50 (the exactness bound of this module)."""
    q = check_prime(q)
    if q >= MAX_MODULUS:
        raise ValueError(f"int64 field arithmetic is exact only for q < 2**50; got q={q} (about 2**{q.bit_length()}).")
    return q


def as_residues(a, q: int) -> np.ndarray:
    """Integers as int64 residues in ``[0, q)``."""
    return np.mod(np.asarray(a, dtype=np.int64), q)


def mulmod(a, b, q: int) -> np.ndarray:
    """Elementwise ``a * b mod q`` for residues ``a, b`` in ``[0, q)``, exact for ``q < 2**50``.

    The float64 quotient ``floor(a*b/q)`` is off by at most one (its error is
    below 1/4 for q < 2**50), so ``a*b - quot*q``, computed modulo 2**64 by int64
    wrap-around, lies in ``[-q, 2q)`` and ``np.mod`` brings it into range.
    """
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    quot = np.floor(a.astype(np.float64) * b.astype(np.float64) / q).astype(np.int64)
    with np.errstate(over="ignore"):
        r = a * b - quot * q
    return np.mod(r, q)


def _limbs(M: np.ndarray) -> list[np.ndarray]:
    """The 17-bit limbs of residues ``M``, low first, as float64; high all-zero limbs are dropped."""
    top = int(M.max(initial=0))
    n_limbs = max(1, min(_N_LIMBS, -(-top.bit_length() // _LIMB_BITS)))
    mask = (1 << _LIMB_BITS) - 1
    return [((M >> (_LIMB_BITS * s)) & mask).astype(np.float64) for s in range(n_limbs)]


def matmul_mod(A, B, q: int) -> np.ndarray:
    """``A @ B mod q`` for residue matrices, exact, with at most nine float64 BLAS products.

    Each entry is split into three 17-bit limbs; a limb product is below 2**34,
    so a sum over fewer than 2**19 terms is an exact float64 integer. Partial
    products are reduced and recombined with ``2**(17 (s + r)) mod q``. Limbs
    that are zero for the whole matrix are skipped, so a 0/1 matrix (a one-hot
    cluster membership) costs three products instead of nine.
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
    LA, LB = _limbs(A), _limbs(B)
    out = np.zeros((A.shape[0], B.shape[1]), dtype=np.int64)
    for shift in range(len(LA) + len(LB) - 1):
        group = np.zeros_like(out)
        for s in range(len(LA)):
            r = shift - s
            if 0 <= r < len(LB):
                group += np.mod(np.rint(LA[s] @ LB[r]).astype(np.int64), q)  # < 3q < 2**52
        out = np.mod(out + mulmod(np.mod(group, q), pow(2, _LIMB_BITS * shift, q), q), q)
    return out


def sum_mod(a, q: int, *, axis: int = -1) -> np.ndarray:
    """``a.sum(axis) mod q`` for residues ``a`` in ``[0, q)``, q < 2**50, without int64 overflow.

    A sum of more than 2**13 residues below 2**50 can pass 2**63; the axis is
    summed in blocks of 2**13 with a reduction after each.
    """
    a = np.moveaxis(np.asarray(a, dtype=np.int64), axis, -1)
    block = 2**13
    out = np.zeros(a.shape[:-1], dtype=np.int64)
    for start in range(0, a.shape[-1], block):
        out = np.mod(out + np.mod(a[..., start : start + block].sum(axis=-1), q), q)
    return out


def signed(v, q: int) -> np.ndarray:
    """Lift residues to ``(-q/2, q/2]``: ``v - q`` where ``v > q // 2`` (for decoding signed quantities)."""
    v = np.asarray(v, dtype=np.int64)
    return np.where(v > q // 2, v - q, v)
