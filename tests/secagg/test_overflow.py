"""The public bound on SecFC's decoded distances and the largest safe scale (fedlib/secagg/_overflow.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from fedlib.field import FieldOverflowError, quantize
from fedlib.secagg import SECFC_PRIME, check_scale, distance_bound, max_safe_scale

Q = SECFC_PRIME


def test_secfc_prime_is_the_largest_prime_below_2_50():
    from sympy import isprime, prevprime

    assert isprime(Q) and prevprime(2**50) == Q


def largest_safe_scale(m, d, radius, q):
    """sqrt((q-1)/2)/m − √d over 2R, rounded down to 3 significant digits, in exact decimal arithmetic."""
    from decimal import ROUND_FLOOR, Decimal, getcontext

    getcontext().prec = 50
    exact = ((Decimal(q - 1) / 2).sqrt() / m - Decimal(d).sqrt()) / (2 * Decimal(radius))
    quantum = Decimal(1).scaleb(exact.adjusted() - 2)
    return float(exact.quantize(quantum, rounding=ROUND_FLOOR))


@given(m=st.integers(1, 10**5), d=st.integers(1, 1000), radius=st.floats(1e-3, 1e4))
def test_max_safe_scale_is_safe_and_tight(m, d, radius):
    assume(m * m * d < (Q - 1) / 2)  # some scale is safe
    lam = max_safe_scale(m, d, radius, Q)
    assert check_scale(lam, m, d, radius, Q) == lam
    assert distance_bound(m, d, radius, lam) < (Q - 1) / 2
    assert distance_bound(m, d, radius, lam * 1.02) >= (Q - 1) / 2 * 0.99  # within 3 significant digits
    assert lam == pytest.approx(largest_safe_scale(m, d, radius, Q), rel=1e-9)


@given(m=st.integers(10**6, 10**8), d=st.integers(1, 1000), radius=st.floats(1e-3, 1e4))
def test_max_safe_scale_refuses_when_no_scale_is_safe(m, d, radius):
    assume(m * m * d >= (Q - 1) / 2)  # the rounding term √d alone reaches q/2
    with pytest.raises(FieldOverflowError, match="no scale λ is safe"):
        max_safe_scale(m, d, radius, Q)


@given(m=st.integers(1, 10**4), d=st.integers(1, 500), radius=st.floats(0, 1e3), scale=st.floats(1e-3, 1e6))
def test_distance_bound_closed_form(m, d, radius, scale):
    assert distance_bound(m, d, radius, scale) == pytest.approx(m**2 * (2 * scale * radius + math.sqrt(d)) ** 2)


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
    # m = 16384, d = 100, data norm about 58 (sigma = 1): sqrt((q-1)/2)/m − 10 over 116, i.e. 12.3 in GF(2**50 - 27)
    assert max_safe_scale(16384, 100, 58.0, Q) == largest_safe_scale(16384, 100, 58.0, Q) == 12.3
    assert max_safe_scale(1000, 20, 30.0, Q) == 395.0
    assert math.isinf(max_safe_scale(10, 2, 0.0, Q))
    with pytest.raises(TypeError, match="n_samples must be an int"):
        max_safe_scale(10.0, 2, 1.0, Q)
    with pytest.raises(ValueError, match=r"scale \(λ\)=0.0 should be > 0"):
        check_scale(0.0, 10, 2, 1.0, Q)
