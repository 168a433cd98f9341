"""Primes and uniform field elements (fedlib/field/_prime.py) against trial division and exact counts."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import chisquare

from fedlib.field import check_prime, is_prime, next_prime, random_field_elements


def trial_division(n: int) -> bool:
    if n < 2:
        return False
    f = 2
    while f * f <= n:
        if n % f == 0:
            return False
        f += 1
    return True


def test_is_prime_equals_trial_division_below_5000():
    assert [n for n in range(-3, 5000) if is_prime(n)] == [n for n in range(-3, 5000) if trial_division(n)]


@given(st.integers(-10, 10**6))
def test_next_prime_is_the_smallest_prime_above(n):
    p = next_prime(n)
    assert p > n and trial_division(p)
    assert not any(trial_division(v) for v in range(max(n + 1, 0), p))


@pytest.mark.parametrize(
    ("n", "prime"),
    [
        (2**61 - 1, True),
        (2**127 - 1, True),
        (2**50 - 27, True),  # SecFC's field
        (2**67 - 1, False),  # Cole 1903: 193707721 · 761838257287
        (193707721 * 761838257287, False),
        (2**50, False),
        (561, False),  # a Carmichael number
        (3215031751, False),  # a strong pseudoprime to bases 2, 3, 5 and 7
    ],
)
def test_is_prime_on_known_large_numbers(n, prime):
    assert is_prime(n) is prime


def test_next_prime_above_2_50_is_out_of_the_int64_field():
    assert next_prime(2**50 - 28) == 2**50 - 27
    assert next_prime(2**50 - 27) > 2**50


def test_check_prime_returns_python_ints_and_refuses_the_rest():
    assert check_prime(np.int64(101)) == 101 and type(check_prime(np.int64(101))) is int
    for bad in (101.0, True, "101", None):
        with pytest.raises(TypeError, match="prime must be an int"):
            check_prime(bad)
    for bad in (-7, 0, 1, 15, 2**50):
        with pytest.raises(ValueError, match=f"prime={bad} is not a prime"):
            check_prime(bad)


@pytest.mark.parametrize("p", [2, 13, 1009])
def test_random_elements_are_uniform_on_every_residue(p):
    draws = random_field_elements(p, 200 * p, random_state=p)
    assert all(type(v) is int for v in draws[:10])
    counts = np.bincount(draws, minlength=p)
    assert counts.size == p  # nothing at or above p
    assert chisquare(counts).pvalue > 1e-3


def test_random_elements_are_reproducible_and_exact_for_huge_primes():
    p = next_prime(2**300)
    a = random_field_elements(p, 50, random_state=1)
    assert a == random_field_elements(p, 50, random_state=1)
    assert a != random_field_elements(p, 50, random_state=2)
    assert all(0 <= v < p for v in a)
    assert max(a).bit_length() > 290  # the top bits are drawn too
    assert random_field_elements(p, 0, random_state=0) == []
    secret = random_field_elements(p, 20, random_state="secrets")
    assert len(secret) == 20 and all(0 <= v < p for v in secret)


def test_random_elements_refuse_bad_arguments():
    with pytest.raises(ValueError, match="p=1 should be >= 2"):
        random_field_elements(1, 3)
    with pytest.raises(ValueError, match="size=-1 should be >= 0"):
        random_field_elements(7, -1)
    with pytest.raises(ValueError, match="the only string accepted is 'secrets'"):
        random_field_elements(7, 3, random_state="os")


# --- FLINT prime search (issue: SCMA's 5,209-bit prime took minutes in sympy.nextprime) ---------------------------

import sympy  # noqa: E402

from fedlib.field import _prime  # noqa: E402

#: Composites that fool weaker tests: Carmichael numbers, strong pseudoprimes to several bases, squares of primes
#: (no Lucas parameter exists for a square), and a product of two large primes.
HARD_COMPOSITES = [
    561,
    41041,
    3215031751,
    2152302898747,
    3474749660383,
    341550071728321,
    3825123056546413051,
    318665857834031151167461,  # strong pseudoprime to the first 12 prime bases
    (2**61 - 1) ** 2,
    (2**89 - 1) * (2**107 - 1),
]


@pytest.mark.parametrize("n", HARD_COMPOSITES)
def test_is_prime_refuses_pseudoprimes_of_weaker_tests(n):
    assert not is_prime(n) and not sympy.isprime(n)


@given(st.integers(2**64 - 3000, 2**64 + 3000) | st.integers(2**64, 2**400))
def test_next_prime_equals_sympy_above_the_sieving_threshold(n):
    """The sieved search returns exactly sympy's prime: sieving only skips composites."""
    assert next_prime(n) == sympy.nextprime(n)


@given(st.integers(2**64, 2**200), st.sampled_from([16, 64, 256]))
def test_sieved_search_across_many_windows_is_the_same(n, width):
    """Tiny windows force the search through several windows; the answer cannot change."""
    assert _prime._next_prime_sieved(n, width=width) == sympy.nextprime(n)


@given(st.integers(-5, 2**80))
def test_is_prime_equals_sympy(n):
    assert is_prime(n) is bool(sympy.isprime(n))


def test_without_flint_the_same_primes_come_from_sympy(monkeypatch):
    monkeypatch.setattr(_prime, "_flint", None)
    for n in (10, 2**50 - 28, 2**64 - 1, 2**64, 10**40, 2**127 - 1):
        assert next_prime(n) == sympy.nextprime(n)
    assert next_prime(0) == 2
    assert is_prime(2**127 - 1) and not is_prime(561)


def test_next_prime_of_a_thousand_bit_bound_is_sympys():
    n = 2**1000 + 2**500 + 12345
    assert next_prime(n) == sympy.nextprime(n)


@given(st.integers(0, 2**700), st.lists(st.integers(2, 2**31 - 1), min_size=1, max_size=50))
def test_residues_equal_python_remainders(n, moduli):
    assert _prime._residues(n, np.array(moduli, dtype=np.int64)).tolist() == [n % r for r in moduli]


def reference_random_field_elements(p: int, size: int, seed) -> list[int]:
    """The element-by-element rejection sampler that random_field_elements vectorises (draw for draw)."""
    rng = np.random.default_rng(seed)
    bits = p.bit_length()
    n_bytes = (bits + 7) // 8
    excess = 8 * n_bytes - bits
    out: list[int] = []
    while len(out) < size:
        need = size - len(out)
        raw = rng.bytes(n_bytes * (need + need // 2 + 4))
        for k in range(0, len(raw), n_bytes):
            value = int.from_bytes(raw[k : k + n_bytes], "little") >> excess
            if value < p:
                out.append(value)
                if len(out) == size:
                    break
    return out


@pytest.mark.parametrize("p", [2, 3, 251, 257, 65537, 2**61 - 1, 2**64 + 13, 2**255 - 19, next_prime(2**3000)])
@pytest.mark.parametrize("size", [0, 1, 37, 600])
def test_random_elements_are_those_of_the_element_by_element_sampler(p, size):
    assert random_field_elements(p, size, random_state=size) == reference_random_field_elements(p, size, size)


def test_accepted_offsets_compare_ties_in_full():
    """Chunks whose top 8 bytes equal the bound's are decided on all their bytes."""
    n_bytes = 12
    bound = int.from_bytes(bytes(range(1, 13)), "little")
    chunks = [bound - 1, bound, bound + 1, bound - (1 << 40), bound + (1 << 90), 0]
    raw = memoryview(b"".join(c.to_bytes(n_bytes, "little") for c in chunks))
    accepted = _prime._accepted_offsets(raw, n_bytes, bound).tolist()
    assert accepted == [k * n_bytes for k, c in enumerate(chunks) if c < bound]
