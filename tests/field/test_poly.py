"""GF(p) polynomials and power-sum decoding (fedlib/field/_poly.py) against Python integers and brute force."""

from __future__ import annotations

import random

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from fedlib.field import (
    DecodingError,
    berlekamp_massey,
    decode_power_sums,
    next_prime,
    poly_divmod,
    poly_eval,
    poly_from_roots,
    poly_gcd,
    poly_mul,
    poly_powmod,
    poly_roots,
    random_field_elements,
)

PRIMES = [2, 3, 13, 101, 65537, 2**61 - 1, next_prime(2**68), next_prime(2**127)]
polys = st.lists(st.integers(0, 10**40), min_size=0, max_size=8)


def distinct_elements(rnd: random.Random, upper: int, k: int) -> list[int]:
    """k distinct integers in [1, upper), sorted (random.sample cannot take huge ranges)."""
    chosen: set[int] = set()
    while len(chosen) < k:
        chosen.add(rnd.randrange(1, upper))
    return sorted(chosen)


@pytest.mark.parametrize("p", PRIMES)
@given(a=polys, b=polys, x=st.integers(0, 10**40))
def test_mul_and_eval_agree_with_python_integers(p, a, b, x):
    a = [c % p for c in a]
    b = [c % p for c in b]
    x %= p
    assert poly_eval(poly_mul(a, b, p), x, p) == poly_eval(a, x, p) * poly_eval(b, x, p) % p
    assert poly_eval(a, x, p) == sum(c * x**i for i, c in enumerate(a)) % p


@pytest.mark.parametrize("p", PRIMES[2:])
@given(a=polys, b=polys)
def test_divmod_reconstructs(p, a, b):
    a = [c % p for c in a]
    b = [c % p for c in b]
    assume(any(b))  # division by the zero polynomial is tested on its own
    q, r = poly_divmod(a, b, p)
    while b and b[-1] == 0:
        b.pop()
    assert len(r) < len(b)
    back = poly_mul(q, b, p)
    back = back + [0] * (len(a) - len(back))
    r_full = r + [0] * (len(back) - len(r))
    trimmed_a = list(a) + [0] * (len(back) - len(a))
    assert [(u + v) % p for u, v in zip(back, r_full, strict=True)] == [c % p for c in trimmed_a]


def test_powmod_matches_repeated_multiplication():
    p = 101
    base, modulus = [3, 1, 4], [1, 5, 9, 2, 6]
    expected = [1]
    for _ in range(37):
        expected = poly_divmod(poly_mul(expected, base, p), modulus, p)[1]
    assert poly_powmod(base, 37, modulus, p) == expected


def test_gcd_of_products_is_common_factor():
    p = 65537
    common = poly_from_roots([5, 17], p)
    a = poly_mul(common, poly_from_roots([3], p), p)
    b = poly_mul(common, poly_from_roots([4, 9], p), p)
    assert poly_gcd(a, b, p) == common


@pytest.mark.parametrize("backend", ["python", "flint"])
@pytest.mark.parametrize("p", [13, 65537, next_prime(2**68), next_prime(2**200)])
def test_roots_of_split_polynomial(backend, p, global_random_seed):
    roots = distinct_elements(random.Random(global_random_seed), min(p, 10**60), min(p - 1, 12))
    assert poly_roots(poly_from_roots(roots, p), p, backend=backend, random_state=global_random_seed) == roots


def test_roots_backends_agree_on_a_large_instance():
    p = next_prime(2**68)
    roots = distinct_elements(random.Random(0), 2**67, 60)
    h = poly_from_roots(roots, p)
    assert poly_roots(h, p, backend="python") == poly_roots(h, p, backend="flint") == roots


@pytest.mark.parametrize("backend", ["python", "flint"])
def test_roots_refuses_polynomials_that_do_not_split(backend):
    p = 13
    irreducible = [2, 0, 1]  # x^2 + 2: -2 = 11 is not a square mod 13
    assert all(poly_eval(irreducible, x, p) for x in range(p))
    with pytest.raises(DecodingError):
        poly_roots(poly_mul(irreducible, [1, 1], p), p, backend=backend)


def test_berlekamp_massey_finds_product_of_one_minus_jx():
    p = 13
    # the setting of MUFC Fig. 2: bins 1, 3, 4 with counts q = {1: 4, 3: 7, 4: 1}
    S = [sum(q * pow(j, i, p) for j, q in {1: 4, 3: 7, 4: 1}.items()) % p for i in range(8)]
    assert S == [12, 3, 5, 10, 8, 12, 12, 3]
    assert berlekamp_massey(S, p) == [1, 5, 6, 1]
    assert berlekamp_massey(S, p) == poly_mul(poly_mul([1, p - 1], [1, p - 3], p), [1, p - 4], p)


@pytest.mark.parametrize("p", [101, 65537, next_prime(2**68), next_prime(2**300)])
@given(data=st.data())
def test_power_sum_decoding_round_trip(p, data):
    T = data.draw(st.integers(1, 12))
    m = data.draw(st.integers(0, T))
    idx = data.draw(st.lists(st.integers(1, min(p - 1, 10**80)), min_size=m, max_size=m, unique=True))
    q = {j: data.draw(st.integers(1, min(p - 1, 10**6))) for j in idx}
    S = [sum(v * pow(j, i, p) for j, v in q.items()) % p for i in range(2 * T)]
    assert decode_power_sums(S, p) == q


def test_decoding_random_syndromes_raises():
    """Syndromes of no sparse vector: the recurrence polynomial does not split, so decoding refuses."""
    p = next_prime(2**68)
    S = random_field_elements(p, 20, random_state=0)
    with pytest.raises(DecodingError):
        decode_power_sums(S, p)


def test_more_terms_than_t_can_alias():
    """Why SCMA bounds each client's non-zeros: beyond T terms, 2T syndromes no longer determine the vector.

    Five unit counts at bins 1..5 give the same six power sums over GF(101) as three other terms, which the
    decoder returns without complaint: nothing in the syndromes tells them apart.
    """
    p = 101
    q = {j: 1 for j in range(1, 6)}  # 5 non-zeros, only 2T = 6 syndromes
    S = [sum(v * pow(j, i, p) for j, v in q.items()) % p for i in range(6)]
    decoded = decode_power_sums(S, p)
    assert decoded == {3: 8, 11: 49, 96: 49} != q
    assert [sum(v * pow(j, i, p) for j, v in decoded.items()) % p for i in range(6)] == S


def test_division_by_the_zero_polynomial_raises():
    with pytest.raises(ZeroDivisionError):
        poly_divmod([1, 2], [0, 0], 7)


def test_degenerate_inputs():
    p = 13
    assert poly_mul([], [1, 2], p) == [] and poly_eval([], 5, p) == 0
    assert poly_gcd([], [], p) == [] and poly_gcd([0, 2], [], p) == [0, 1]  # monic
    assert poly_divmod([1, 1], [2, 0, 1], p) == ([], [1, 1])  # lower degree than the divisor
    assert poly_from_roots([], p) == [1]
    assert poly_powmod([3, 1], 0, [1, 0, 1], p) == [1]
    with pytest.raises(DecodingError, match="zero polynomial"):
        poly_roots([0, 0], p)
    with pytest.raises(ValueError, match="backend"):
        poly_roots([1, 1], p, backend="sage")


def test_roots_over_gf2():
    assert poly_roots([0, 1, 1], 2, backend="python") == [0, 1]  # x(x + 1)
    with pytest.raises(DecodingError, match="GF\\(2\\)"):
        poly_roots([1, 1, 1], 2, backend="python")  # x² + x + 1 has no root in GF(2)


def test_power_sum_decoder_refuses_bad_arguments():
    p = 13
    assert decode_power_sums([0, 0, 0, 0], p) == {}
    with pytest.raises(ValueError, match="even number of syndromes"):
        decode_power_sums([1, 2, 3], p)
    with pytest.raises(ValueError, match="magnitudes"):
        decode_power_sums([4, 12, 36 % 13, 108 % 13], p, magnitudes="newton")


@pytest.mark.parametrize("p", [101, next_prime(2**68)])
@given(data=st.data())
def test_vandermonde_solve_matches_python_integers(p, data):
    from fedlib.field import solve_transposed_vandermonde

    m = data.draw(st.integers(1, 8))
    nodes = data.draw(st.lists(st.integers(1, p - 1), min_size=m, max_size=m, unique=True))
    q = data.draw(st.lists(st.integers(0, p - 1), min_size=m, max_size=m))
    rhs = [sum(qt * pow(t, i, p) for qt, t in zip(q, nodes, strict=True)) % p for i in range(m)]
    assert solve_transposed_vandermonde(nodes, rhs, p) == q


@pytest.mark.parametrize("magnitudes", ["vandermonde", "forney"])
def test_both_magnitude_solvers_decode(magnitudes):
    p = next_prime(2**68)
    q = dict(zip(distinct_elements(random.Random(1), 2**67, 30), range(1, 31), strict=True))
    S = [sum(v * pow(j, i, p) for j, v in q.items()) % p for i in range(60)]
    assert decode_power_sums(S, p, magnitudes=magnitudes) == q
