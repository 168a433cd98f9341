"""GF(p) polynomials and power-sum decoding (fedlib/field/_poly.py) against Python integers and brute force."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from fedlib.exceptions import DecodingError
from fedlib.field import (
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


# --- FLINT backend of the power-sum layer: equal to the pure-Python reference, bit for bit ------------------------

from fedlib.field import _poly, is_prime, solve_transposed_vandermonde  # noqa: E402
from fedlib.field._poly import power_sums  # noqa: E402

SMALL_AND_LARGE = [2, 3, 13, 101, 65537, 2**61 - 1, next_prime(2**200), next_prime(2**784)]


@pytest.mark.parametrize("p", SMALL_AND_LARGE)
@given(
    points=st.lists(st.integers(0, 2**800), max_size=40),
    weights=st.data(),
    n_terms=st.integers(0, 700),
)
def test_power_sums_flint_equals_python_and_the_definition(p, points, weights, n_terms):
    """Duplicates, zeros and points above p included; the blocked series crosses many block boundaries."""
    w = weights.draw(st.lists(st.integers(0, 2**800), min_size=len(points), max_size=len(points)))
    fast = power_sums(points, w, n_terms, p, backend="flint")
    assert fast == power_sums(points, w, n_terms, p, backend="python")
    for i in (0, 1, n_terms // 2, n_terms - 1):
        if 0 <= i < n_terms:
            assert fast[i] == sum(wt * pow(x, i, p) for x, wt in zip(points, w, strict=True)) % p


def test_power_sums_refuse_bad_arguments():
    with pytest.raises(ValueError, match="2 points but 1 weights"):
        power_sums([1, 2], [1], 4, 13)
    with pytest.raises(ValueError, match="n_terms=-1"):
        power_sums([1], [1], -1, 13)
    with pytest.raises(ValueError, match="backend"):
        power_sums([1], [1], 4, 13, backend="gmp")


def decode_outcome(S, p, **kwargs):
    """The decoded dictionary, or the type of the refusal."""
    try:
        return decode_power_sums(S, p, **kwargs)
    except DecodingError:
        return DecodingError


@st.composite
def syndromes(draw, p):
    """Power sums of sparse vectors (decodable or not: up to T + 2 terms, index 0, zero counts) or random residues."""
    T = draw(st.integers(1, 8))
    kind = draw(st.sampled_from(["sparse", "random", "degenerate"]))
    if kind == "random":
        return draw(st.lists(st.integers(0, p - 1), min_size=2 * T, max_size=2 * T))
    if kind == "degenerate":
        return draw(st.lists(st.sampled_from([0, 0, 1, p - 1]), min_size=2 * T, max_size=2 * T))
    idx = draw(st.lists(st.integers(0, p - 1), max_size=T + 2, unique=True))
    q = [draw(st.integers(0, p - 1)) for _ in idx]
    return power_sums(idx, q, 2 * T, p, backend="python")


@pytest.mark.parametrize("p", [2, 3, 13, 101, 65537, next_prime(2**68), next_prime(2**300)])
@pytest.mark.parametrize("magnitudes", ["vandermonde", "forney"])
@given(data=st.data())
def test_decoding_backends_agree_on_every_input(p, magnitudes, data):
    """Same dictionary, or the same refusal, whether the syndromes are valid, corrupted or degenerate."""
    S = data.draw(syndromes(p))
    expected = decode_outcome(S, p, backend="python", magnitudes=magnitudes)
    assert decode_outcome(S, p, backend="flint", magnitudes=magnitudes) == expected


@pytest.mark.parametrize("backend", ["python", "flint"])
def test_index_zero_in_the_support_is_refused(backend):
    """0 is not a bin index: its power sums vanish after the first, and the locator has the root 0."""
    p = 101
    S = power_sums([0, 5], [3, 2], 6, p, backend="python")
    with pytest.raises(DecodingError, match="index 0"):
        decode_power_sums(S, p, backend=backend)


@pytest.mark.parametrize("p", [101, next_prime(2**68), next_prime(2**300)])
@given(data=st.data())
def test_flint_locator_is_the_reversed_berlekamp_massey(p, data):
    """Whenever 2L <= n the recurrence is unique: FLINT's minpoly is Massey's Lambda, reversed."""
    m = data.draw(st.integers(1, 10))
    idx = data.draw(st.lists(st.integers(1, p - 1), min_size=m, max_size=m, unique=True))
    q = data.draw(st.lists(st.integers(1, p - 1), min_size=m, max_size=m))
    n = 2 * m + data.draw(st.integers(0, 6))
    S = power_sums(idx, q, n, p, backend="python")
    lam = berlekamp_massey(S, p)
    locator = _poly._locator_flint(S, _poly._flint_ctx(p))
    assert [int(c) for c in locator.coeffs()] == lam[::-1]


@pytest.mark.parametrize("p", [101, next_prime(2**68), next_prime(2**500)])
@given(data=st.data())
def test_vandermonde_backends_agree(p, data):
    m = data.draw(st.integers(0, 20))
    nodes = data.draw(st.lists(st.integers(0, p - 1), min_size=m, max_size=m, unique=True))
    rhs = data.draw(st.lists(st.integers(0, p - 1), min_size=m, max_size=m))
    fast = solve_transposed_vandermonde(nodes, rhs, p, backend="flint")
    assert fast == solve_transposed_vandermonde(nodes, rhs, p, backend="python")
    assert [sum(qt * pow(t, i, p) for qt, t in zip(fast, nodes, strict=True)) % p for i in range(m)] == rhs


def test_decoding_a_784_dimensional_grid_index():
    """Bins of a 784-dimensional grid (B = 2, so a 785-bit prime) decode exactly, as do their sums."""
    p = next_prime(2**784)
    q = dict(zip(distinct_elements(random.Random(3), 2**784, 40), range(1, 41), strict=True))
    S = power_sums(list(q), list(q.values()), 100, p)
    assert decode_power_sums(S, p) == q


def test_auto_falls_back_to_python_without_flint(monkeypatch):
    p = next_prime(2**68)
    q = {3: 4, 5: 2, 2**60: 7}
    S = power_sums(list(q), list(q.values()), 8, p)
    monkeypatch.setattr(_poly, "_flint_usable", lambda: False)
    assert power_sums(list(q), list(q.values()), 8, p) == S
    assert decode_power_sums(S, p) == q
    assert poly_roots(poly_from_roots([2, 9], p), p) == [2, 9]
    with pytest.raises(ImportError, match="python-flint"):
        decode_power_sums(S, p, backend="flint")


def prime_with_smooth_order(bits: int, smooth: int, seed: int) -> int:
    """A prime p with ``smooth`` dividing p - 1 (so the character split has many classes)."""
    import sympy

    rnd = random.Random(seed)
    while True:
        p = rnd.getrandbits(bits - smooth.bit_length()) * smooth + 1
        if sympy.isprime(p):
            return p


CHARACTER_PRIMES = [
    13,
    65537,  # p - 1 = 2**16
    next_prime(2**68),
    prime_with_smooth_order(90, 2**5 * 3 * 7 * 11, 0),
    prime_with_smooth_order(300, 2 * 3 * 5 * 7 * 11 * 13 * 227, 1),
    2**127 - 1,  # p - 1 = 2 (2**126 - 1): smooth part 2 * 3**3 * 7**2 * ...
]


@pytest.mark.parametrize("p", CHARACTER_PRIMES)
@given(data=st.data())
def test_character_split_finds_the_roots_of_python(p, data):
    """The FLINT splitter (one character exponentiation, then gcds) finds exactly the roots, as Python's does."""
    m = data.draw(st.integers(0, min(p - 1, 30)))
    roots = sorted(data.draw(st.lists(st.integers(0, p - 1), min_size=m, max_size=m, unique=True)))
    h = poly_from_roots(roots, p)
    ctx = _poly._flint_ctx(p)
    seed = data.draw(st.integers(0, 2**32 - 1))
    assert _poly._roots_flint(ctx(h), ctx, random_state=seed) == roots
    if 0 < m <= 5:  # the Python splitter is slow on large primes; the known roots are the truth anyway
        assert poly_roots(h, p, backend="flint") == poly_roots(h, p, backend="python") == roots


@pytest.mark.parametrize("p", CHARACTER_PRIMES[1:])
@pytest.mark.parametrize("m", [4, 9, 25])
def test_character_split_refuses_what_does_not_split(p, m):
    """A repeated root or an irreducible quadratic factor is refused, never returned as roots."""
    roots = distinct_elements(random.Random(m), p, m)
    ctx = _poly._flint_ctx(p)
    non_residue = next(c for c in range(2, p) if pow(c, (p - 1) // 2, p) == p - 1)
    irreducible = [p - non_residue, 0, 1]  # x^2 - c
    for bad in (poly_from_roots(roots + roots[:1], p), poly_mul(poly_from_roots(roots, p), irreducible, p)):
        with pytest.raises(DecodingError):
            _poly._roots_flint(ctx(bad), ctx)


def test_smooth_factors_multiply_to_a_divisor_of_p_minus_1():
    for p in [*CHARACTER_PRIMES, next_prime(100**50)]:
        factors = _poly._smooth_factors(p)
        assert factors == sorted(factors) and (p - 1) % math.prod(factors) == 0
        assert math.prod(factors) <= 2**20 and all(is_prime(q) and q < 2**12 for q in factors)
