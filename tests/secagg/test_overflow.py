"""The public bound on SecFC's decoded distances and the largest safe scale (SecFC App. A)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fedlib.field import FieldOverflowError, quantize
from fedlib.secagg import SECFC_PRIME, check_scale, distance_bound, max_safe_scale

Q = SECFC_PRIME


def test_secfc_prime_is_the_largest_prime_below_2_50():
    from sympy import isprime, prevprime

    assert isprime(Q) and prevprime(2**50) == Q


@given(m=st.integers(1, 10**5), d=st.integers(1, 1000), radius=st.floats(1e-3, 1e4))
def test_max_safe_scale_is_safe_and_tight(m, d, radius):
    if m * m * d >= (Q - 1) / 2:
        with pytest.raises(FieldOverflowError):
            max_safe_scale(m, d, radius, Q)
        return
    lam = max_safe_scale(m, d, radius, Q)
    assert check_scale(lam, m, d, radius, Q) == lam
    assert distance_bound(m, d, radius, lam) < (Q - 1) / 2
    assert distance_bound(m, d, radius, lam * 1.02) >= (Q - 1) / 2 * 0.99  # within 3 significant digits


def test_the_bound_holds_for_real_distances():
    rng = np.random.default_rng(0)
    X = rng.normal(0, 3, size=(300, 7))
    radius = float(np.max(np.linalg.norm(X, axis=1)))
    lam = 50.0
    X_int = quantize(X, lam).astype(object)
    labels = rng.integers(0, 3, 300)
    worst = 0
    for h in range(3):
        S = X_int[labels == h]
        T = S.sum(axis=0)
        worst = max(worst, max(int(((T - len(S) * x) ** 2).sum()) for x in X_int))
    assert worst <= distance_bound(300, 7, radius, lam)


def test_too_large_scale_raises_naming_the_bound():
    with pytest.raises(FieldOverflowError, match=r"m²\(2λR\+√d\)².*q/2.*largest safe λ is"):
        check_scale(1e6, 1000, 20, 30.0, Q)
    with pytest.raises(FieldOverflowError, match="no scale λ is safe"):
        max_safe_scale(10**7, 100, 1.0, Q)


def test_max_safe_scale_for_the_papers_settings():
    # m = 16384, d = 100, data norm about 58 (sigma = 1) leaves room for lambda about 12 in GF(2**50 - 27).
    assert 10 < max_safe_scale(16384, 100, 58.0, Q) < 13
    assert math.isinf(max_safe_scale(10, 2, 0.0, Q))
