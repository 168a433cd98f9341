"""Exact arithmetic over prime fields GF(p): primes, random elements, polynomials, power-sum decoding."""

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
    "DecodingError",
    "berlekamp_massey",
    "check_prime",
    "decode_power_sums",
    "is_prime",
    "next_prime",
    "poly_divmod",
    "poly_eval",
    "poly_from_roots",
    "poly_gcd",
    "poly_mul",
    "poly_powmod",
    "poly_roots",
    "random_field_elements",
    "solve_transposed_vandermonde",
]
