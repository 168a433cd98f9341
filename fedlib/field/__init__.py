"""Exact arithmetic over prime fields GF(p): int64 arrays for p < 2**50, polynomials over Python ints, decoding."""

from fedlib.field._int64 import MAX_MODULUS, as_residues, check_modulus, matmul_mod, mulmod, signed
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

__all__ = [
    "MAX_MODULUS",
    "DecodingError",
    "as_residues",
    "berlekamp_massey",
    "check_modulus",
    "check_prime",
    "decode_power_sums",
    "is_prime",
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
    "random_field_elements",
    "signed",
    "solve_transposed_vandermonde",
]
