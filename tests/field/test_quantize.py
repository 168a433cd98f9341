"""Quantization into GF(q), signed residues and the runtime overflow detector."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fedlib.field import FieldOverflowError, check_decoded, quantize, signed, sum_mod, to_field

Q = 2**50 - 27


@given(st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=20), st.floats(0.01, 100.0))
def test_quantize_round_trip_through_the_field(values, scale):
    X = np.array([values])
    X_int = quantize(X, scale)
    frac = X * scale - X_int
    assert np.all(frac >= 0) and np.all(frac <= 1)
    assert np.array_equal(signed(to_field(X_int, Q), Q), X_int)


def test_negative_numbers_land_in_the_upper_half():
    assert to_field(np.array([-1, -5, 3]), 101).tolist() == [100, 96, 3]


def test_detector_flags_values_above_half():
    assert check_decoded(np.array([0, 5, Q // 2]), Q).tolist() == [0, 5, Q // 2]
    with pytest.raises(FieldOverflowError, match="1 decoded values lie above q/2"):
        check_decoded(np.array([0, Q - 3]), Q)


@given(st.integers(1, 30000), st.integers(0, 2**32 - 1))
def test_sum_mod_equals_python_integers(n, seed):
    a = np.random.default_rng(seed).integers(Q - 2**20, Q, size=n, dtype=np.int64)
    assert int(sum_mod(a, Q)) == sum(int(v) for v in a) % Q
