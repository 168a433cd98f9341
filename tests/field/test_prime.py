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
