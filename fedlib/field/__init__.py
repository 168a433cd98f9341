"""Exact arithmetic over prime fields GF(p), the lowest layer of every secure protocol in fedlib.

- :class:`PrimeField`, the one entry point: int64 arrays for p < 2**50 (float-assisted
  products at BLAS speed: :func:`mulmod`, :func:`matmul_mod`, :class:`LimbMatrix`),
  Python integers in object arrays above (keys, 256-bit secrets).
- The Lagrange basis (:func:`lagrange_basis`, :func:`barycentric_weights`) and the
  Lagrange code (:class:`LagrangeCode`: LCC for SecFC, with Berlekamp-Welch error correction,
  :class:`CorrectedDecoding`) and Shamir sharing, its one-segment
  case (:class:`Shamir`, over GF(2^521 − 1) by default so that a share holds a 256-bit key).
- Polynomials over Python ints and the power-sum (Reed-Solomon syndrome) decoder of MUFC's SCMA.
- Primes, uniform field elements, the fixed-point code ``floor(λx)`` of real data (:func:`to_fixed_point`)
  and its residues (:func:`to_field`), the features a scale collapses and a heuristic overflow detector.
"""

from fedlib.field._field import PrimeField
from fedlib.field._int64 import (
    MAX_MODULUS,
    LimbMatrix,
    as_residues,
    check_modulus,
    matmul_mod,
    mulmod,
    signed,
    sum_mod,
)
from fedlib.field._interpolation import barycentric_weights, lagrange_basis
from fedlib.field._lagrange import CorrectedDecoding, LagrangeCode, determinant_mod
from fedlib.field._poly import (
    berlekamp_massey,
    decode_power_sums,
    poly_divmod,
    poly_eval,
    poly_from_roots,
    poly_gcd,
    poly_mul,
    poly_powmod,
    poly_roots,
    power_sums,
    solve_transposed_vandermonde,
    splitting_seconds,
)
from fedlib.field._prime import check_prime, is_prime, next_prime, random_field_elements, secret_residues
from fedlib.field._quantize import check_decoded, collapsed_features, to_field, to_fixed_point
from fedlib.field._shamir import MERSENNE_521, Shamir

__all__ = [
    "MAX_MODULUS",
    "MERSENNE_521",
    "CorrectedDecoding",
    "LagrangeCode",
    "LimbMatrix",
    "PrimeField",
    "Shamir",
    "as_residues",
    "barycentric_weights",
    "berlekamp_massey",
    "check_decoded",
    "check_modulus",
    "check_prime",
    "collapsed_features",
    "decode_power_sums",
    "determinant_mod",
    "is_prime",
    "lagrange_basis",
    "matmul_mod",
    "mulmod",
    "next_prime",
    "poly_divmod",
    "poly_eval",
    "poly_from_roots",
    "poly_gcd",
    "poly_mul",
    "poly_powmod",
    "poly_roots",
    "power_sums",
    "random_field_elements",
    "secret_residues",
    "signed",
    "solve_transposed_vandermonde",
    "splitting_seconds",
    "sum_mod",
    "to_field",
    "to_fixed_point",
]
