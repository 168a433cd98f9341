"""Exact arithmetic over prime fields GF(p): int64 arrays for p < 2**50, polynomials over Python ints, decoding."""

from fedlib.field._int64 import MAX_MODULUS, as_residues, check_modulus, matmul_mod, mulmod, signed, sum_mod
from fedlib.field._lagrange import SECFC_PRIME, LagrangeCode, determinant_mod, lagrange_basis
from fedlib.field._poly import (
    DecodingError,
    berlekamp_massey,
    decode_power_sums,
    poly_divmod,
    poly_eval,
    poly_from_roots,
    poly_gcd,
    poly_mul,
    poly_powmod,
    poly_roots,
    solve_transposed_vandermonde,
)
from fedlib.field._prime import check_prime, is_prime, next_prime, random_field_elements
from fedlib.field._quantize import (
    FieldOverflowError,
    check_decoded,
    check_scale,
    distance_bound,
    max_safe_scale,
    quantize,
    to_field,
)

__all__ = [
    "MAX_MODULUS",
    "SECFC_PRIME",
    "DecodingError",
    "FieldOverflowError",
    "LagrangeCode",
    "as_residues",
    "berlekamp_massey",
    "check_decoded",
    "check_modulus",
    "check_prime",
    "check_scale",
    "decode_power_sums",
    "determinant_mod",
    "distance_bound",
    "is_prime",
    "lagrange_basis",
    "matmul_mod",
    "max_safe_scale",
    "mulmod",
    "next_prime",
    "poly_divmod",
    "poly_eval",
    "poly_from_roots",
    "poly_gcd",
    "poly_mul",
    "poly_powmod",
    "poly_roots",
    "quantize",
    "random_field_elements",
    "signed",
    "solve_transposed_vandermonde",
    "sum_mod",
    "to_field",
]
