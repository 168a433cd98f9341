"""The public bound on SecFC's decoded distances and the largest safe scale (fedlib/secagg/_overflow.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from fedlib.exceptions import FieldOverflowError
from fedlib.field import to_fixed_point
from fedlib.secagg import SECFC_PRIME, check_round, check_scale, data_radius, distance_bound, max_safe_scale

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
    X_int = to_fixed_point(X, lam).astype(object)
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


# --- issue 11, items 3 and 7 --------------------------------------------------------------------------------------


def test_round_check_is_the_bound_with_the_largest_cluster_size():
    d, radius, scale = 20, 30.0, 1000.0
    diameter = 2 * scale * radius + math.sqrt(d)
    allowed = math.isqrt((Q - 1) // 2) // math.ceil(diameter)  # a safe size, by a little
    assert check_round(np.array([allowed, 3]), d, radius, scale, Q).tolist() == [allowed, 3]
    too_many = math.ceil(math.sqrt((Q - 1) / 2) / diameter)
    assert too_many**2 * diameter**2 >= (Q - 1) / 2
    with pytest.raises(FieldOverflowError, match=rf"cluster 1 has \|S_h\| = {too_many} points.*at most {too_many - 1}"):
        check_round(np.array([3, too_many]), d, radius, scale, Q)


@given(sizes=st.lists(st.integers(0, 10**4), min_size=1, max_size=6), scale=st.floats(1e-2, 1e4))
def test_a_certified_round_decodes_below_half_q(sizes, scale):
    """The round bound never certifies a size whose worst-case d' reaches q/2 (and it is what check_scale uses)."""
    d, radius = 7, 3.0
    worst = max(sizes) ** 2 * (2 * scale * radius + math.sqrt(d)) ** 2
    if worst < (Q - 1) / 2:
        check_round(np.array(sizes), d, radius, scale, Q)
    else:
        with pytest.raises(FieldOverflowError):
            check_round(np.array(sizes), d, radius, scale, Q)
    # the a-priori bound is the round bound at |S_h| = m
    m = max(max(sizes), 1)
    assert distance_bound(m, d, radius, scale) == pytest.approx(m**2 * (2 * scale * radius + math.sqrt(d)) ** 2)


def test_infinite_radius_or_scale_is_refused_clearly():
    # issue 11, item 7: an infinite R (data with |x| ≈ 1e300) gave "math domain error"
    with pytest.raises(ValueError, match=r"radius=inf must be finite"):
        max_safe_scale(100, 3, math.inf, Q)
    with pytest.raises(ValueError, match=r"radius=inf must be finite"):
        check_scale(1.0, 100, 3, math.inf, Q)
    with pytest.raises(ValueError, match=r"scale \(λ\)=inf should be < inf"):
        check_scale(math.inf, 100, 3, 0.0, Q)
    assert max_safe_scale(100, 3, 1e300, Q) == pytest.approx(largest_safe_scale(100, 3, 1e300, Q), rel=1e-9)
    tiny = max_safe_scale(100, 3, 1.7e308, Q)  # 2R overflows float64; the scale does not
    assert 0 < tiny < 1e-300 and check_scale(tiny, 100, 3, 1.7e308, Q) == tiny


def test_data_radius_does_not_overflow():
    X = np.array([[3e300, 4e300], [1.0, 0.0]])
    assert data_radius(X) == pytest.approx(5e300)
    assert data_radius(np.zeros((3, 2))) == 0.0
    assert data_radius(np.array([[3e-200, 4e-200]])) == pytest.approx(5e-200)
    Y = np.random.default_rng(0).normal(size=(50, 4))
    assert data_radius(Y) == float(np.sqrt(np.max(np.einsum("ij,ij->i", Y, Y))))  # the plain formula when it is safe
    with pytest.raises(ValueError, match="largest norm of the data overflows float64"):
        data_radius(np.full((2, 4), 1.5e308))
