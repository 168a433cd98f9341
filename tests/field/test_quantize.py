"""Quantization into GF(q) and the overflow bounds of SecFC App. A."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fedlib.field import (
    SECFC_PRIME,
    FieldOverflowError,
    check_decoded,
    check_scale,
    distance_bound,
    max_safe_scale,
    quantize,
    signed,
    sum_mod,
    to_field,
)

Q = SECFC_PRIME


@given(st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=20), st.floats(0.01, 100.0))
def test_quantize_round_trip_through_the_field(values, scale):
    X = np.array([values])
    X_int = quantize(X, scale)
    frac = X * scale - X_int
    assert np.all(frac >= 0) and np.all(frac <= 1)
    assert np.array_equal(signed(to_field(X_int, Q), Q), X_int)


def test_negative_numbers_land_in_the_upper_half():
    assert to_field(np.array([-1, -5, 3]), 101).tolist() == [100, 96, 3]


@given(m=st.integers(1, 10**5), d=st.integers(1, 1000), radius=st.floats(1e-3, 1e4), data=st.data())
def test_max_safe_scale_is_safe_and_tight(m, d, radius, data):
    try:
        lam = max_safe_scale(m, d, radius, Q)
    except FieldOverflowError:
        assert m * m * d >= (Q - 1) / 2 * 0.999
        return
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


def test_detector_flags_values_above_half():
    assert check_decoded(np.array([0, 5, Q // 2]), Q).tolist() == [0, 5, Q // 2]
    with pytest.raises(FieldOverflowError, match="1 decoded values lie above q/2"):
        check_decoded(np.array([0, Q - 3]), Q)


@given(st.integers(1, 30000), st.integers(0, 2**32 - 1))
def test_sum_mod_equals_python_integers(n, seed):
    a = np.random.default_rng(seed).integers(Q - 2**20, Q, size=n, dtype=np.int64)
    assert int(sum_mod(a, Q)) == sum(int(v) for v in a) % Q


def test_max_safe_scale_for_the_papers_settings():
    # m = 16384, d = 100, data norm about 58 (sigma = 1) leaves room for lambda about 12 in GF(2**50 - 27).
    assert 10 < max_safe_scale(16384, 100, 58.0, Q) < 13
    assert math.isinf(max_safe_scale(10, 2, 0.0, Q))
